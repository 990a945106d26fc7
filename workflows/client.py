"""The typed client services use to start, query, signal and await research runs.

It is also where the one data converter lives, so the CLI, workers and tests serialise
pydantic contracts identically.
"""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

DATA_CONVERTER = pydantic_data_converter


async def connect(address: str, namespace: str = "default") -> Client:
    """Connect to Temporal with Assay's data converter."""
    return await Client.connect(address, namespace=namespace, data_converter=DATA_CONVERTER)
