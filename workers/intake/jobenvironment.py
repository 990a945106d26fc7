"""The job environment of a run that names none: the operator's default, fixed at intake.

A job names its environment, else the run does (``--environment``, the policy file), else the
plan (its top-level ``environment``), else the operator's default (``ASSAY_JOB_ENVIRONMENT``,
``science``). Intake writes the first of them into the run's policy, so the workflow gives
it to every job naming none (the plan's, the coder's, a skill's, a later study cycle's) and
the history records it: the workflow code is the one that ``--environment`` already uses.
``base`` — the worker's own interpreter — is only ever had by asking for it, as the default
or by name.
"""

from __future__ import annotations

from collections.abc import Collection

from workers.intake.runpolicy import PolicyError
from workflows.contracts.environments import BASE
from workflows.contracts.results import ResearchInput


def with_job_environment(req: ResearchInput, default: str,
                         known: Collection[str] | None = None) -> ResearchInput:
    """``req`` with the run's job environment settled.

    Args:
        req: the run's input as intake read it (a plan's jobs already carry the plan's or
            the run's environment).
        default: the operator's default environment (``Settings.job_environment``).
        known: the named sets this machine knows; a default outside them is refused.

    Returns:
        ``req`` whose policy names the run's environment: the run's own, else the plan's,
        else ``default``; none for ``base`` (its jobs run in the worker's interpreter, as
        asked).

    Raises:
        PolicyError: the default names a set this machine does not know.
    """
    named = req.policy.environment or (req.plan.environment if req.plan else None)
    if named is None:
        if default != BASE and known is not None and default not in known:
            raise PolicyError(f"ASSAY_JOB_ENVIRONMENT={default}: there is no environment named "
                              f"so; known: {', '.join(sorted(known)) or 'none'} (or base, the "
                              "worker's own interpreter); set it to one of them, or add "
                              f"{default}.txt to ASSAY_ENVIRONMENTS_DIR")
        named = default
    return _with(req, None if named == BASE else named)


def _with(req: ResearchInput, environment: str | None) -> ResearchInput:
    policy = req.policy.model_copy(update={"environment": environment})
    return req.model_copy(update={"policy": policy})
