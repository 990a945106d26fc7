#!/bin/sh
# Runs once, when the PostgreSQL volume is first initialised: one role per consumer.
# Temporal's role may create databases because its schema job creates `temporal` and
# `temporal_visibility`; Assay's role owns only the `assay` database.
set -eu

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
    -v temporal_pw="$TEMPORAL_DB_PASSWORD" -v assay_pw="$ASSAY_DB_PASSWORD" <<'SQL'
CREATE ROLE temporal LOGIN CREATEDB PASSWORD :'temporal_pw';
CREATE ROLE assay LOGIN PASSWORD :'assay_pw';
CREATE DATABASE assay OWNER assay;
SQL
