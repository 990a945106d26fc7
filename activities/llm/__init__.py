"""The model gateway: Anthropic Messages calls with accounting, recording and replay.

``gateway.ModelGateway`` owns the SDK client (``client``), structured output through tool use
(``output``), request building (``request``), errors and retry advice (``errors``), prices
(``pricing``), Prometheus metrics (``metrics``) and record/replay of exchanges (``recording``).
``ledger.BudgetLedger`` is the runs' budget account in PostgreSQL (tables in ``schema``): each
call reserves what ``reserve`` says it may spend before it is sent, and settles after.
"""


from activities.llm.gateway import ModelGateway
from activities.llm.recording import Recorder, Recordings, Replay

__all__ = [
    "ModelGateway",
    "Recorder",
    "Recordings",
    "Replay",
]
