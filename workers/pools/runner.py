"""The workflow sandbox, without its round trips for serialization contexts nobody reads.

Before a workflow task's payloads are decoded and after its commands are encoded, the SDK's
worker visits every payload three times, and for each one asks the workflow's sandbox which
serialization context applies (the activity's, the child's, the workflow's own): it compiles
a line of code, enters the sandbox's importer, runs the line and leaves. A one-task run made
about 160 such calls in its workers' process, near a fifth of that process's CPU.

The answer matters only to a data converter that reads it: one whose payload converter, codec,
failure converter or external storage takes a context. Assay's converter takes none
(``DataConverter.with_context`` returns the converter itself), so every context yields the same
converter and the same bytes. For such a converter :func:`workflow_runner` gives
:class:`ContextFreeRunner`: the SDK's sandbox, whose executions answer "no context" at once
and compile each line of their own once per process. Any other converter gets the SDK's
sandbox unchanged.

The executions are the SDK's own (``_Instance``, a private class), with three of its methods
answered here. Should a release of the SDK rename them, :func:`workflow_runner` falls back to
the SDK's sandbox, and ``tests/workers/pools/test_runner.py`` fails, saying so.
"""

from __future__ import annotations

from functools import lru_cache
from types import CodeType
from typing import Any, cast

from temporalio.converter import (
    DataConverter,
    SerializationContext,
    StorageDriverStoreContext,
    WorkflowSerializationContext,
)
from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner
from temporalio.worker.workflow_sandbox._runner import (
    _Instance,  # pyright: ignore[reportPrivateUsage]
)

OVERRIDDEN = ("get_serialization_context", "get_external_store_context", "_run_code")
"""The methods of the SDK's execution this module answers (see the module)."""
PROBE = WorkflowSerializationContext(namespace="probe", workflow_id="probe")
"""A context to ask a converter whether it would change with one."""


def context_free(converter: DataConverter) -> bool:
    """Whether ``converter`` encodes every payload the same, whatever the context.

    True when it has no external storage and giving it a context gives it back unchanged:
    none of its parts takes a context.
    """
    return converter.external_storage is None and converter.with_context(PROBE) is converter


def workflow_runner(converter: DataConverter) -> WorkflowRunner:
    """The runner a worker with ``converter`` gives its workflows (see the module)."""
    if context_free(converter) and sdk_fits():
        return ContextFreeRunner()
    return SandboxedWorkflowRunner()


def sdk_fits() -> bool:
    """Whether the SDK's execution still defines the methods :data:`OVERRIDDEN` names."""
    return all(callable(vars(_Instance).get(name)) for name in OVERRIDDEN)


class ContextFreeRunner(SandboxedWorkflowRunner):
    """The SDK's sandbox, for a context-free converter only (:func:`workflow_runner` checks)."""

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        """An execution in a sandbox of its own, as the SDK's runner makes it."""
        return _ContextFreeInstance(det, self.runner_class, self.restrictions)


class _ContextFreeInstance(_Instance):
    """An execution whose payloads take no context, and whose lines are compiled once."""

    def get_serialization_context(self, command_info: Any) -> SerializationContext | None:
        """None: the converter is the same with any context, so there is nothing to look up."""
        return None

    def get_external_store_context(self, command_info: Any) -> StorageDriverStoreContext:
        """No target: the converter has no external storage to give one to."""
        return StorageDriverStoreContext(target=None)

    def _run_code(self, code: str, **extra_globals: Any) -> None:
        super()._run_code(cast(str, _compiled(code)), **extra_globals)


@lru_cache(maxsize=256)
def _compiled(code: str) -> CodeType:
    """A line the sandbox runs, compiled once (the lines are few and fixed per workflow type)."""
    return compile(code, "<sandbox>", "exec")
