"""``assay branches``: a run's branch tree and how its lines of work compared.

A run that is open answers its ``branches`` query. A closed run is read from its result (the
report's results JSON when this machine can read it, else the workflow result), or, when it
ended without a result, from the query again; the runs started to branch from it (Temporal
cannot add a child to a closed workflow) are listed from visibility, ``AssayParent="RUN"``.
The tree and the tables are the report's own rows (``activities.reports.branches``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

import typer

from activities.reports.branches import comparisons, log_lines, text, tree_lines
from workers.cli.common import EXIT_BAD_INPUT, client_for, fail, print_table, run_async
from workers.settings import Settings
from workflows.constants import KIND_KEY, PARENT_KEY
from workflows.contracts.branches import BranchTree
from workflows.contracts.words import plural

if TYPE_CHECKING:
    from activities.artifacts.store import ArtifactStore
    from client.assay import AssayClient

BRANCHES_QUERY = "branches"
"""The run's query answering its :class:`BranchTree`."""
LINKED_SHOWN = 200
"""Workflows linked to a run (its branches, runs branched from it) listed at most."""


@dataclass(frozen=True)
class Linked:
    """A workflow whose ``AssayParent`` is the run: a branch, or a run branched from it."""

    workflow_id: str
    kind: str
    status: str


@dataclass(frozen=True)
class BranchView:
    """What ``assay branches`` shows of a run."""

    tree: BranchTree
    status: str = "running"
    """Temporal's status of the run."""
    parent: str = ""
    """The closed run this one branched from (known once the run has a result)."""
    linked: list[Linked] = field(default_factory=list[Linked])
    choosing: bool = False
    """The run waits at a ``branch`` gate for a person to choose a line."""

    @property
    def closed(self) -> bool:
        """The run has ended: no branch starts in it any more."""
        return self.status != "running"


def branches(
    run_id: Annotated[str, typer.Argument(help="The run whose branches to show.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the branch tree as JSON.")]
    = False,
) -> None:
    """Show a run's branch tree and a comparison table per group of sibling branches."""
    if any(ch in run_id for ch in "\"'\\") or not run_id.isprintable():
        fail(f"{text(run_id)!r} is not a run ID (see `assay runs`)", EXIT_BAD_INPUT)

    async def go() -> None:
        settings = Settings()
        view = await read_branches(await client_for(settings), run_id, settings.artifact_store())
        if as_json:
            typer.echo(view.tree.model_dump_json(indent=2))
            return
        print_branches(view)

    run_async(go())


async def read_branches(client: AssayClient, run_id: str,
                        store: ArtifactStore | None = None) -> BranchView:
    """The run's branch tree: its query while it runs, its result (or query) once closed."""
    from workers.cli.show import load_report

    status = await client.status(run_id)
    if status == "running":
        tree = await query_tree(client, run_id)
        waiting = (await client.progress(run_id)).waiting
        return BranchView(tree, choosing=waiting is not None and waiting.gate == "branch")
    linked = await linked_to(client, run_id)
    if status != "completed":  # ended without a result: its history still answers
        return BranchView(await query_tree(client, run_id), status=status, linked=linked)
    result = await client.result(run_id)
    report = load_report(result, store)
    tree = (report.branches if report is not None else None) or result.branches
    return BranchView(tree or BranchTree(run_id=run_id), status=status, parent=result.parent,
                      linked=linked)


async def query_tree(client: AssayClient, run_id: str) -> BranchTree:
    """The run's answer to its ``branches`` query."""
    return await client.handle(run_id).query(BRANCHES_QUERY, result_type=BranchTree)


async def linked_to(client: AssayClient, run_id: str) -> list[Linked]:
    """The workflows whose ``AssayParent`` is the run, oldest first."""
    found = [(wf.start_time, Linked(wf.id, wf.typed_search_attributes.get(KIND_KEY) or "-",
                                    wf.status.name.lower() if wf.status else "unknown"))
             async for wf in client.client.list_workflows(f'{PARENT_KEY.name}="{run_id}"',
                                                          limit=LINKED_SHOWN)]
    return [linked for _, linked in sorted(found, key=lambda item: item[0])]


def print_branches(view: BranchView) -> None:
    """Print the tree, a table per group, what people did and the linked workflows."""
    tree = view.tree
    for line in headline(view):
        typer.echo(line)
    if tree.branches:
        typer.echo("")
        for line in tree_lines(tree):
            typer.echo(line)
    for table in comparisons(tree, final=view.closed, choosing=view.choosing):
        label = f" (group {text(table.group)})" if table.group else ""
        waiting = (f"; waiting for a person: assay approve {tree.run_id} --gate branch "
                   "--choose NAME") if table.waiting else ""
        typer.echo(f"\nfrom task {text(table.from_task)} at {table.from_phase}{label}, "
                   f"selection {table.selection}{waiting}")
        print_table(table.headers, table.rows)
    log = log_lines(tree)
    if log:
        typer.echo("")
        for line in log:
            typer.echo(line)
    if view.linked:
        typer.echo(f"\nlinked to it ({PARENT_KEY.name}={tree.run_id}):")
        print_table(["WORKFLOW", "KIND", "STATUS"],
                    [[text(w.workflow_id), text(w.kind), w.status] for w in view.linked])


def headline(view: BranchView) -> list[str]:
    """The run, how many branches it has, and what it is doing about them."""
    tree = view.tree
    state = ([f"ended ({view.status})"] if view.closed
             else ["paused"] * tree.paused + ["holding open for branches"] * tree.holding)
    lines = [f"run {tree.run_id}: {plural(len(tree.branches), 'branch', 'branches')}"
             + (f", {', '.join(state)}" if state else "")]
    if view.parent:
        lines.append(f"  branched from the closed run {text(view.parent)} (its tasks reused)")
    if not tree.branches and not view.closed:
        lines.append(f"  start one: assay branch {tree.run_id} --from TASK[:PHASE] "
                     "--set args.NAME=VALUE")
    elif view.closed:
        lines.append(f"  it takes no branch now; `assay branch {tree.run_id} ...` starts a new "
                     "run linked to it")
    if tree.holding and not view.closed:
        lines.append(f"  close it when done: assay close {tree.run_id}")
    return lines
