"""``examples/hand-study`` replayed offline: a three-cycle study whose every model answer was
written by hand, reading only the request, through a local Messages API endpoint.

The study asks what predicts an extramarital affair in Fair's 1974 survey (statsmodels'
``fair`` data, 6,366 women) and whether a model reaches a cross-validated ROC AUC of 0.75.
Every answer comes from the recording and every job runs again for real in the science
environment (pinned by the example's ``environments/science.txt``), so the verified numbers
are made anew; they are then checked against statsmodels and scikit-learn run independently
in the same environment's interpreter, and the report must open with the study synthesizer's
answer, each statement citing the cycle, task and verified metric behind it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.reports.study import StudyReport
from client.study import StudyClient
from tests.support.e2e import ROOT, isolated_settings, pools_serving, store_of
from workers.intake.goalfile import load_goal
from workers.intake.runpolicy import AgentFlags, build_policy, queues_from
from workers.settings import Settings
from workflows.contracts.cycles import StudyInput, StudyResult
from workflows.contracts.results import RunReport
from workflows.contracts.study import StudyPolicy, StudyState

pytestmark = pytest.mark.integration
EXAMPLE = ROOT / "examples" / "hand-study"
GOAL = (EXAMPLE / "goal.txt").read_text(encoding="utf-8").strip()

CHECK = """\
import json, sys
import numpy as np, pandas as pd, statsmodels.api as sm
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

table = pd.read_csv(sys.argv[1])
y = (table["affairs"] > 0).astype(int)
X = table.drop(columns="affairs").astype(float)
glm = sm.GLM(y, sm.add_constant(X), family=sm.families.Binomial()).fit()
low = np.exp(glm.params - 1.96 * glm.bse)  # the plan's Wald interval: z = 1.96
high = np.exp(glm.params + 1.96 * glm.bse)
said = {"rows": len(table), "affair_rate": float(y.mean()),
        "odds": {n: [float(np.exp(glm.params[n])), float(low[n]), float(high[n])]
                 for n in glm.params.index if n != "const"}}

def oof(model, columns, seed):
    split = StratifiedKFold(n_splits=10, shuffle=True, random_state=seed)
    return cross_val_predict(model, X[columns], y, cv=split, method="predict_proba")[:, 1]

logistic = lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
said["cv_auc_logistic"] = roc_auc_score(y, oof(logistic(), list(X.columns), 0))
said["cv_auc_marriage_only"] = roc_auc_score(y, oof(logistic(), ["rate_marriage"], 0))
trees = lambda: HistGradientBoostingClassifier(max_depth=3, learning_rate=0.05, max_iter=300,
                                                early_stopping=False, random_state=0)
said["cv_auc_trees"] = roc_auc_score(y, oof(trees(), list(X.columns), 0))
print(json.dumps(said))
"""
"""Independent of the jobs' code: a binomial GLM for the odds ratios, scikit-learn's
``cross_val_predict`` for the out-of-fold AUCs on the same stratified folds."""


def independent(python: Path, data: Path) -> dict[str, Any]:
    """The reference numbers, computed by ``CHECK`` in the science environment's python."""
    done = subprocess.run([str(python), "-c", CHECK, str(data)], capture_output=True,
                          text=True, timeout=600, check=False,
                          env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def close(got: Any, expected: Any, tolerance: float = 1e-9) -> bool:
    """``got`` is ``expected`` within ``tolerance`` (relative above 1, absolute below)."""
    return abs(float(got) - float(expected)) <= tolerance * max(1.0, abs(float(expected)))


def value(metric: Any) -> float:
    """A verified metric's value (an estimate's point value)."""
    if isinstance(metric, dict):
        return float(cast(dict[str, Any], metric)["value"])
    return float(metric)


async def run_study(env: WorkflowEnvironment, settings: Settings, database_url: str,
                    ) -> StudyResult:
    """The example study as its README runs it, every answer from its recording."""
    policy = build_policy(settings, policy_file=EXAMPLE / "policy.json",
                          agents=AgentFlags(replay=EXAMPLE / "recording.jsonl"))
    req = load_goal(GOAL, [EXAMPLE / "fair.csv"], max_bytes=settings.max_plan_bytes,
                    policy=policy, queues=queues_from(settings), store=store_of(settings))
    study = StudyPolicy.model_validate({
        "max_cycles": 3, "key_metric": {"name": "cv_auc", "direction": "maximize"},
        "acceptance": [{"metric": "cv_auc", "op": ">=", "threshold": 0.75}]})
    inp = StudyInput(state=StudyState(study_id="", goal=req.goal, policy=study), plans=[],
                     data=req.data, policy=policy, queues=req.queues)
    async with pools_serving(settings, database_url, env.client):
        client = StudyClient(env.client, task_queue=settings.queue_orchestration)
        study_id = await client.start_study(inp, again=True)
        return await asyncio.wait_for(client.result(study_id), timeout=840)


@pytest.mark.timeout(1200)
async def test_the_hand_answered_study_replays_and_its_numbers_hold_independently(
        dev_env: WorkflowEnvironment, fresh_database_url: str, tmp_path: Path,
        task_queue: str, shared_environments: Path) -> None:
    settings = isolated_settings(tmp_path / "assay", task_queue,
                                 environments_root=shared_environments,
                                 environments_dir=EXAMPLE / "environments")
    result = await run_study(dev_env, settings, fresh_database_url)

    assert (result.status, result.cycles) == ("completed", 3), result.reason
    assert result.report is not None
    state = StudyReport.model_validate_json(Path(result.report.results_json).read_text())
    reports = [RunReport.model_validate_json(Path(s.results_json).read_text())
               for s in state.summaries]
    cycles = [{t.task_id: t for t in r.tasks} for r in reports]
    assert all(t.status == "completed" for c in cycles for t in c.values())
    assert [s.decision.action for s in state.summaries if s.decision] == ["fix", "fix",
                                                                          "stop"]
    first, second, third = cycles
    final = third["final"].metrics
    assert final["repeats"] == 5 and final["rows"] == 6366
    low, high = final["cv_auc"]["ci"]
    assert low < 0.75 < high  # the criterion is neither met nor ruled out
    assert result.reason.startswith("cycle limit reached: 3 of 3 cycles run; acceptance not "
                                    "established: cv_auc >= 0.75"), result.reason

    env = first["cv"].provenance.environment
    assert env is not None and env.name == "science"
    said = independent(settings.provisioned_dir / env.digest / "bin" / "python",
                       EXAMPLE / "fair.csv")
    odds = first["odds"].metrics
    assert odds["rows"] == said["rows"] == 6366
    assert close(odds["affair_rate"], said["affair_rate"])
    for name, (ratio, low, high) in said["odds"].items():
        got = odds[f"or_{name}"]
        assert close(got["value"], ratio, 1e-6) and close(got["ci"][0], low, 1e-6) \
            and close(got["ci"][1], high, 1e-6), (name, got, ratio, low, high)
    cv = first["cv"].metrics
    assert close(value(cv["cv_auc"]), said["cv_auc_logistic"])
    assert close(cv["cv_auc_marriage_only"], said["cv_auc_marriage_only"])
    assert close(value(second["boosting"].metrics["cv_auc"]), said["cv_auc_trees"])
    assert close(second["boosting"].metrics["cv_auc_logistic"], said["cv_auc_logistic"])

    markdown = Path(result.report.summary_md).read_text(encoding="utf-8")
    synthesis = state.synthesis
    assert synthesis is not None and synthesis.statements
    opening = markdown[markdown.index("## Synthesis"):markdown.index("## Goal")]
    assert "Written by the study synthesizer" in opening
    for statement in synthesis.statements:
        assert statement.cites
        for cite in statement.cites:
            assert f"(cycle {cite.cycle}, task {cite.task_id}: " in opening, cite
    assert synthesis.unheld == []  # every number it wrote is held by a verified metric
