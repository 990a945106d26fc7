"""No field of a workflow's input, signal or update names a host path a worker would open.

Any Temporal client can start a workflow or send it a signal, so a path or URL in what they
carry is a path the client chooses on the workers' hosts. This walks every model a workflow
takes (each ``run`` input, and what each signal and update is decoded into), recursively, and
fails on a field typed as a path, or a string field named like one, that is not listed below
with the reason it is safe. A new such field fails here until it is either removed or listed.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable
from pathlib import PurePath
from typing import Any, cast

import pytest
from pydantic import BaseModel
from temporalio import workflow

from workflows.contracts.branches import BranchRequest, SteerRequest
from workflows.contracts.cycles import StudyStop
from workflows.contracts.gates import GateDecision
from workflows.contracts.results import SuppliedPlan
from workflows.contracts.skills import TaskOutcome
from workflows.library.workflow import SkillLibraryWorkflow
from workflows.research.branch import BranchWorkflow
from workflows.research.workflow import ResearchWorkflow
from workflows.study.workflow import StudyWorkflow
from workflows.task.workflow import TaskWorkflow

WORKFLOWS = [ResearchWorkflow, BranchWorkflow, TaskWorkflow, StudyWorkflow,
             SkillLibraryWorkflow]
MESSAGES: list[type[BaseModel]] = [GateDecision, SuppliedPlan, BranchRequest, SteerRequest,
                                   StudyStop, TaskOutcome]
"""What the signals and updates decode their raw argument into."""
PATH_LIKE = re.compile(r"path|dir|file|folder|url|uri|dest|location|endpoint|host|socket")

ALLOWED = {
    "workflows.contracts.plan.InputFile.path":
        "the submitter's file, shown in reports; the sandbox fetches the input from the "
        "artifact store by its sha256 (activities.sandbox.sources)",
    "workflows.contracts.goal.DataFile.path":
        "an InputFile: shown to people, never opened; the data travels by sha256",
    "workflows.contracts.execution.DependencyArtifact.path":
        "where the sandbox's host kept it; dependants and previews read it by sha256",
    "workflows.contracts.execution.Artifact.path":
        "written by the sandbox from its own walk of the working directory; stored from there "
        "in the same activity, never from a request",
    "workflows.contracts.plan.JobSpec.filename":
        "one path component inside the job's working directory, checked by the sandbox "
        "(activities.sandbox.workspace)",
    "workflows.contracts.policy.ModelRecording.path":
        "kept only to refuse it: the agents worker fails a call naming it (RecordingRefused) "
        "and the clients refuse it before a start (HostPathError)",
}


def roots() -> list[type[BaseModel]]:
    """Every workflow's run input, and every signal and update message."""
    found: list[type[BaseModel]] = []
    for cls in WORKFLOWS:
        definition = workflow._Definition.must_from_class(cls)  # pyright: ignore[reportPrivateUsage]
        run = cast(Callable[..., Any], definition.run_fn)  # pyright: ignore[reportUnknownMemberType]
        hints = typing.get_type_hints(run)
        found += [t for name, t in hints.items()
                  if name != "return" and isinstance(t, type) and issubclass(t, BaseModel)]
    return [*found, *MESSAGES]


def leaves(annotation: Any) -> list[Any]:
    """The types inside ``list[X] | None``, ``dict[str, Y]``, ``Annotated[Z, ...]``..."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        return leaves(args[0])
    if not args:
        return [annotation]
    return [leaf for arg in args for leaf in leaves(arg)]


def path_fields(models: list[type[BaseModel]]) -> set[str]:
    """Qualified names of path-typed or path-named string fields, walking nested models."""
    seen: set[type[BaseModel]] = set()
    found: set[str] = set()
    todo = list(models)
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, field in model.model_fields.items():
            for leaf in leaves(field.annotation):
                if isinstance(leaf, type) and issubclass(leaf, BaseModel):
                    todo.append(leaf)
                elif (isinstance(leaf, type) and issubclass(leaf, PurePath)) or (
                        leaf is str and PATH_LIKE.search(name)):
                    found.add(f"{model.__module__}.{model.__qualname__}.{name}")
    return found


def test_every_workflow_input_is_walked() -> None:
    walked = {m.__name__ for m in roots()}
    assert {"ResearchInput", "TaskInput", "StudyInput", "BranchInput", "LibraryState"} <= walked


def test_no_input_signal_or_update_names_a_host_path_not_listed() -> None:
    found = path_fields(roots())
    unlisted = sorted(found - ALLOWED.keys())
    assert not unlisted, ("fields that may carry a client-chosen host path; make them names "
                          "or digests, or list them in ALLOWED with why no worker opens them: "
                          f"{unlisted}")
    assert not ALLOWED.keys() - found, "ALLOWED lists fields that no longer exist"


@pytest.mark.parametrize("name", ["path", "report_dir", "docs_folder", "callback_url"])
def test_the_walk_finds_a_new_path_field(name: str) -> None:
    class Nested(BaseModel):
        other: int = 0

    inner = type("Inner", (BaseModel,), {"__annotations__": {name: "str | None"},
                                         name: None, "__module__": __name__})
    outer = type("Outer", (BaseModel,), {"__annotations__": {"items": list[inner],
                                                             "n": Nested},
                                         "__module__": __name__})
    assert path_fields([outer]) == {f"{__name__}.Inner.{name}"}
    typed = type("Typed", (BaseModel,), {"__annotations__": {"where": PurePath | None},
                                         "where": None, "__module__": __name__})
    assert path_fields([typed]) == {f"{__name__}.Typed.where"}
