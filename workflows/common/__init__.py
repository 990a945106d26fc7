"""What every workflow shares: the event log, gate keeping and failure texts."""


from workflows.common.events import EventLog
from workflows.common.failures import root_message
from workflows.common.gates import GateKeeper, GateRefusedError

__all__ = [
    "EventLog",
    "GateKeeper",
    "GateRefusedError",
    "root_message",
]
