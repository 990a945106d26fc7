"""The sandbox: running a job in a fresh working directory, isolated and bounded.

``job.Sandbox`` holds the ``execute_job`` activity: ``workspace`` lays out the working
directory, ``interpreter`` picks the job's interpreter (its provisioned environment's, if it has
one), ``sources`` copies in inputs (from the artifact store only) and dependency artifacts (from
the work directory only), ``isolation`` and ``command`` build the bubblewrap command, ``limits``
the per-process limits, ``guards`` what bounds the job as a whole (its ``cgroup``, made where
``hierarchy`` finds that it can, the ``seccomp`` filter against user namespaces, the disk
``quota`` in blocks, files and depth, and the free-space reserve), ``process`` runs and
heartbeats (sampling the processes ``descendants`` finds below the job's first), ``output``
bounds captured output, ``classify`` names how a job ended, ``outcome`` assembles what that
amounts to (and the job's environment variables), ``artifacts`` hashes what it left and
``jobjson`` reads the JSON it wrote (``metrics.json``) within bounds.
``retention.WorkspaceJanitor`` removes finished runs' working directories.
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
