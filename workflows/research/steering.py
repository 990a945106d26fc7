"""People steering a run: pause, resume, cancel and close, and the requests they send.

``steer`` checks who (the policy's ``branching.approvers``; empty: anyone) and when (nothing
resumes a run that is not paused, nothing steers one that is closing), then applies it:
``pause`` stops new tasks and branches from starting (running jobs finish, gates keep
waiting), ``resume`` lets them start again, ``cancel`` cancels every running task and branch,
drops the branches waiting to start, withdraws a gate or plan wait of the run's and gives
every task a final status (the report is still written), ``close`` ends a run held
open for branching (policy ``branching.hold_open``, or a human ``result`` gate). Each is
recorded as an event and kept in the branch tree's steering log.
Requests arrive raw: their size is checked before they are decoded (``read``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TypeVar

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel, ValidationError

    from workflows.common.bounds import PayloadRefused, clip, read_json
    from workflows.common.errors import ErrorType
    from workflows.common.validation import worded_errors
    from workflows.contracts.base import BY_CHARS
    from workflows.contracts.branches import SteerRequest
    from workflows.research.lines import Branches
    from workflows.research.state import RunState

ModelT = TypeVar("ModelT", bound=BaseModel)
STEER_MAX_BYTES = 16_000
"""The largest ``steer`` request a run reads."""


class RequestRefusedError(ValueError):
    """A branch or steering request refused; the message says why."""


def read(raw: RawValue, model: type[ModelT], *, limit: int, what: str) -> ModelT:
    """A raw signal or update argument as ``model``, its size checked before it is decoded.

    Raises:
        RequestRefusedError: too large, undecodable or malformed (the message says how).
    """
    try:
        payload = read_json(raw, limit=limit, what=what)
    except PayloadRefused as err:
        raise RequestRefusedError(str(err)) from None
    try:
        return model.model_validate(payload)
    except ValidationError as err:
        problems = "; ".join(clip(e, 160) for e in worded_errors(
            err, model, whole="payload", most=4, plain=True))
        raise RequestRefusedError(f"malformed {what}: {problems}") from None


def refusal(reason: str, kind: ErrorType) -> ApplicationError:
    """The non-retryable error a refused update fails with."""
    return ApplicationError(clip(reason, 2000), type=kind, non_retryable=True)


class Steering:
    """Pause, resume, cancel and close of one run (its branches follow).

    Args:
        state: the run's state (its pause and cancel flags).
        branches: the run's branches (steered alike; the tree keeps the log).
    """

    def __init__(self, state: RunState, branches: Branches) -> None:
        self.state = state
        self.branches = branches

    def check(self, req: SteerRequest) -> None:
        """Raise :class:`RequestRefusedError` if ``req`` cannot apply now."""
        allowed = self.state.req.policy.branching.approvers
        if allowed and req.by not in allowed:
            raise RequestRefusedError(f"{req.by!r} may not steer this run "
                                      f"(allowed: {', '.join(allowed)})")
        state = self.state
        if state.cancelling or self.branches.closed:
            raise RequestRefusedError("the run is already ending (cancelled or closed)")
        if req.action == "resume" and not state.paused:
            raise RequestRefusedError("the run is not paused")
        if req.action == "pause" and state.paused:
            raise RequestRefusedError("the run is already paused")
        if req.action == "close" and not self.branches.holding:
            raise RequestRefusedError("the run is not held open: `close` ends a run that "
                                      "waits for branches after its tasks (policy "
                                      "`branching.hold_open` or a human `result` gate)")

    async def apply(self, req: SteerRequest) -> None:
        """Check and apply ``req``, or record why it was refused and raise."""
        try:
            self.check(req)
        except RequestRefusedError as err:
            self.branches.refuse(req.by, f"{req.action}: {err}")
            raise
        state = self.state
        state.steer(req.action)
        if req.action == "close":
            self.branches.closed = True
        who = clip(req.by, BY_CHARS)
        inputs = {"action": req.action, "channel": req.channel or "temporal"}
        mark = f" [via {inputs['channel']}, {workflow.now():%Y-%m-%d %H:%M} UTC]"
        self.branches.steering.append(f"{who}: {req.action}" + (
            f" ({clip(req.comment, 200)})" if req.comment else "") + mark)
        state.log.add("approval", "complete", agent=who, status=req.action,
                      inputs=inputs, outputs={"comment": req.comment})
        await self.branches.steer(req)
        await state.log.flush()

    def hold_for(self) -> float | None:
        """Seconds the run stays open after its tasks, for branches (None: it does not).

        ``branching.hold_open`` holds it for ``hold_timeout_s``; a human ``result`` gate
        holds it for that gate's ``timeout_s``.
        """
        policy = self.state.req.policy
        if policy.branching.hold_open:
            return policy.branching.hold_timeout_s
        if policy.gates.result.human:
            return policy.gates.result.timeout_s
        return None

    async def after_tasks(self) -> None:
        """Settle the branches; a run held open waits for more, or for ``assay close``."""
        state = self.state
        await self.branches.settle()
        if state.cancelling:
            return
        hold = self.hold_for()
        if hold is None:
            return
        self.branches.holding = True
        state.set_phase("open")
        state.log.add("checkpoint", "info", status="holding", outputs={"timeout_s": hold})
        await state.log.flush()
        while not (self.branches.closed or state.cancelling):
            try:
                await workflow.wait_condition(
                    lambda: bool(self.branches.running()) or self.branches.closed
                    or state.cancelling, timeout=timedelta(seconds=hold))
            except TimeoutError:
                state.log.add("checkpoint", "info", status="hold_timed_out")
                break
            await self.branches.settle()
        self.branches.holding = False
