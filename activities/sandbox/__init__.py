"""The sandbox: running a job in a fresh working directory, isolated and bounded.

``job.Sandbox`` holds the ``execute_job`` activity: ``workspace`` lays out inputs and
dependency artifacts, ``isolation`` and ``command`` build the bubblewrap command, ``limits``
the resource limits, ``process`` runs and heartbeats, ``output`` bounds captured output,
``classify`` names how a job ended and ``artifacts`` hashes what it left.
``environment.EnvironmentProbe`` holds the ``probe_environment`` activity.
"""


from activities.sandbox.environment import EnvironmentProbe
from activities.sandbox.isolation import IsolationStatus, SandboxUnavailableError, isolation_status
from activities.sandbox.job import Sandbox

__all__ = [
    "EnvironmentProbe",
    "IsolationStatus",
    "Sandbox",
    "SandboxUnavailableError",
    "isolation_status",
]
