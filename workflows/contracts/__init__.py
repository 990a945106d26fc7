"""Contracts workflows and activities exchange: plans, policies, results, verdicts, memory.

Pydantic models only (see :class:`workflows.contracts.execution.Model`), serialised by the
client's data converter; new fields get defaults so saved histories keep replaying.
"""
