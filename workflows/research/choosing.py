"""How a group of sibling lines is decided: scored, ranked, and one line kept.

When a group of branches has finished, every line (the main line's results for the same tasks,
and each branch's) is scored with the comparator (``workflows.branching.compare``) and the
group's selection decides: ``best`` keeps the first line, ``keep_all`` the main line,
``person`` opens a ``branch`` gate whose ``choice`` names the line (a timeout follows the
gate's policy: approve takes the best, reject the main line; a cancel keeps the main line).
Lines whose key metric is tied within its intervals are a tie, and the group's tie rule keeps
one of them (``workflows.branching.selection``; a person's rule opens the gate on the tied
lines). The kept line's results replace the run's for those tasks. ``Branches`` (``lines``)
builds on this. Deterministic workflow code only.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.branching.compare import explain, rank, score
    from workflows.branching.selection import allowed_note, tie_choice, tie_reason, ties
    from workflows.common.gates import GateKeeper
    from workflows.contracts.branches import MAIN_LINE, BranchRecord, LineScore
    from workflows.contracts.executive import GateDecision
    from workflows.contracts.results import TaskResult
    from workflows.research.state import RunState


class Choosing:
    """The sibling groups of one run's branches and the line kept in each.

    Args:
        state: the run's state (plan and results; the kept line's results go there).
        gates: the run's gates (the ``branch`` gate a person chooses at).
    """

    def __init__(self, state: RunState, gates: GateKeeper) -> None:
        self.state = state
        self.gates = gates
        self.records: dict[str, BranchRecord] = {}
        self.groups: list[str] = []
        self.decided: set[str] = set()
        self.main: dict[str, LineScore] = {}
        self.kept: dict[str, str] = {}
        self.tied: dict[str, list[str]] = {}
        self.why: dict[str, str] = {}
        self._lines: dict[str, list[TaskResult]] = {}
        """Each finished branch's task results, by branch name."""
        self._deciding: str | None = None

    async def _decide(self, group: str) -> None:
        state = self.state
        members = [r for r in self.records.values() if r.group == group]
        first = members[0]
        tasks = list(first.tasks)
        declared = sum(len(d.checks) for d in (state.plan.decisions if state.plan else [])
                       if d.task_id in first.tasks)
        lines = {MAIN_LINE: score([state.results[t] for t in tasks if t in state.results],
                                  declared, first.metric)}
        for record in members:
            record.score = score(self._lines.get(record.name, []), declared, first.metric)
            lines[record.name] = record.score
        order = rank(lines, first.metric)
        self.main[group] = lines[MAIN_LINE]
        why = explain(order, lines, first.metric)
        tied = ties(order, lines) if first.metric is not None else []
        if tied:
            self.tied[group] = tied
            kept = tie_choice(members, tied, lines) or await self._choose(
                first.model_copy(update={"selection": "person"}), tied,
                f"tied within intervals: {why}")
            why = tie_reason(tied, kept, first.ties, first.metric.name if first.metric else "?")
        else:
            kept = await self._choose(first, order, why)
        self.kept[group] = kept
        if first.held_out_allowed:
            why = f"{why}; {allowed_note(first.metric, state.plan.held_out if state.plan else [])}"
        self.why[group] = why
        if kept != MAIN_LINE:
            self.records[kept].selected = True
            how = "a person's choice" if first.selection == "person" else first.selection
            for result in self._lines.get(kept, []):
                state.results[result.task_id] = result.model_copy(update={
                    "status_reason": f"{result.status_reason} (line {kept}, kept by {how})"})
                state.states[result.task_id] = result.status
        state.log.add("checkpoint", "complete", status="selected",
                      inputs={"group": group, "ranking": order},
                      outputs={"kept": kept, "why": why, "selection": first.selection})
        await state.log.flush()

    async def _choose(self, first: BranchRecord, order: list[str], why: str) -> str:
        if first.selection == "keep_all":
            return MAIN_LINE
        if first.selection == "best":
            return order[0]
        listing = "; ".join(f"{i}. {name}" for i, name in enumerate(order, start=1))
        self._deciding = first.group
        try:
            gate = await self.gates.ask("branch", f"keep which line from task "
                                                  f"{first.from_task}:{first.from_phase}? "
                                                  f"{listing} ({why})")
        finally:
            self._deciding = None
        if gate.status == "timed_out":
            return order[0] if self.gates.approved(gate) else MAIN_LINE
        return (gate.choice or order[0]) if gate.status == "approved" else MAIN_LINE

    def check_choice(self, decision: GateDecision) -> str | None:
        """Why a ``branch`` gate decision names no line it can keep (None: it can)."""
        if decision.gate != "branch" or decision.choice is None or self._deciding is None:
            return None
        names = [MAIN_LINE, *(n for n, r in self.records.items() if r.group == self._deciding)]
        if decision.choice not in names:
            return f"no line {decision.choice!r} to keep here (lines: {', '.join(names)})"
        return None
