"""Job environments: named requirement sets, resolving them to exact pins, provisioning them.

A job runs in the sandbox worker's own interpreter unless it names an environment or needs
packages that interpreter lacks. Then the environment is *resolved* (``uv pip compile``: exact
pins, cached on disk by a key of the request, so a second review needs no network) and
*provisioned* once (``uv venv`` and ``uv pip install --no-build``: wheels only, no build code
runs on the worker) into ``<environments dir>/<digest>/``, content-addressed by the lock and
the Python version, and reused by every later job on the host. Named sets ship as package
data (``data/science.txt``) and operators add theirs as ``<name>.txt`` files. Everything uv
says on failure becomes one clear reason (:class:`EnvironmentProblem`).
"""

from activities.environments.catalog import Catalog
from activities.environments.errors import EnvironmentProblem
from activities.environments.installer import Sources
from activities.environments.store import Environments, Lock, Spec

__all__ = ["Catalog", "EnvironmentProblem", "Environments", "Lock", "Sources", "Spec"]
