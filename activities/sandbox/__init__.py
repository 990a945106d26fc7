"""The sandbox: running a job in a fresh working directory, isolated and bounded.

``job.Sandbox`` holds the ``execute_job`` activity: ``workspace`` lays out the working
directory, ``sources`` copies in inputs (from the artifact store only) and dependency
artifacts (from the work directory only), ``isolation`` and ``command`` build the bubblewrap
command, ``limits`` the resource limits, ``process`` runs and heartbeats, ``output`` bounds
captured output, ``classify`` names how a job ended, ``artifacts`` hashes what it left and
``jobjson`` reads the JSON it wrote (``metrics.json``) within bounds.
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
