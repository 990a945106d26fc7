"""Contracts workflows and activities exchange: plans, policies, results, verdicts, memory.

Pydantic models only (see :mod:`workflows.contracts.base`), serialised by the client's data
converter; new fields get defaults so saved histories keep replaying.
"""
