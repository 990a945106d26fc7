"""A job's evidence verified in the job's own dispatch, when the task asks for it.

The sandbox worker's ``verify_evidence`` is handed to :class:`activities.sandbox.job.Sandbox`
(as ``verifier``); a job whose request carries ``verify_checks`` and that succeeds has its
evidence checked by it before the dispatch returns, which spares the task a second dispatch and
the workflow task that follows it. Verification stays the task's own step: the task takes the
answer as its verify phase's. A verification that fails to run here is left to the task, which
dispatches ``verify_evidence`` as it always did (retried as that is); the job never runs again
for it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from workflows.contracts.execution import (
    ExecuteJobInput,
    ExecutionOutcome,
    Verification,
    VerifyEvidenceInput,
)

log = logging.getLogger(__name__)

Verifier = Callable[[VerifyEvidenceInput], Awaitable[Verification]]
"""What checks a job's evidence (``EvidenceVerifier.verify_evidence``)."""


async def with_evidence(verifier: Verifier | None, req: ExecuteJobInput,
                        outcome: ExecutionOutcome) -> ExecutionOutcome:
    """``outcome``, with its evidence verified when ``req`` asks and the job succeeded.

    Args:
        verifier: the worker's evidence verifier (none: nothing is verified here).
        req: the job's request; ``verify_checks`` set asks for the verification.
        outcome: how the job ended.
    """
    if verifier is None or req.verify_checks is None or outcome.outcome != "succeeded":
        return outcome
    try:
        outcome.verification = await verifier(VerifyEvidenceInput(
            task_id=req.task_id, job=req.job, checks=req.verify_checks, outcome=outcome))
    except Exception as err:  # any failure is the task's own verify_evidence dispatch's to meet
        log.warning("the evidence of task %s was not verified with its job (%s); the task "
                    "verifies it on its own", req.task_id, err)
    return outcome
