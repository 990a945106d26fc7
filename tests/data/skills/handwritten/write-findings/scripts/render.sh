#!/bin/sh
echo "render the report"
