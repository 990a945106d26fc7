"""ResearchWorkflows with a fault put in, to prove a task, or the run, still ends.

``FaultyResearchWorkflow`` is the real run with one fault put in through its task runner's
``on_start`` hook: starting task ``b`` raises ``KeyError`` inside the run, before ``b``'s
workflow starts (as a bug in the run's own bookkeeping would). ``BrokenResearchWorkflow``
is the real run whose own coroutine raises ``AttributeError`` once its tasks have ended.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.contracts.plan import Decision
    from workflows.contracts.results import ResearchInput, ResearchResult
    from workflows.research.workflow import ResearchWorkflow

FAULTY_TASK = "b"


@workflow.defn(name="FaultyResearchWorkflow")
class FaultyResearchWorkflow(ResearchWorkflow):
    """The run, but its handling of task ``b`` raises as the task starts."""

    @workflow.init
    def __init__(self, req: ResearchInput) -> None:
        super().__init__(req)
        explore = self.tasks.on_start

        def on_start(decision: Decision) -> None:
            if decision.task_id == FAULTY_TASK:
                raise KeyError("a task the run has no result of")
            if explore is not None:
                explore(decision)

        self.tasks.on_start = on_start

    @workflow.run
    async def run(self, req: ResearchInput) -> ResearchResult:
        """The real run."""
        return await super().run(req)


@workflow.defn(name="BrokenResearchWorkflow")
class BrokenResearchWorkflow(ResearchWorkflow):
    """The run, but its own pipeline raises once the tasks have ended."""

    async def _replan_if_deviated(self) -> None:
        raise AttributeError("'NoneType' object has no attribute 'plan'")

    @workflow.run
    async def run(self, req: ResearchInput) -> ResearchResult:
        """The real run."""
        return await super().run(req)
