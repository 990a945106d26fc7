"""What an evaluation shows: one table per configuration, a comparison, and the report files.

Per task and configuration, pass@1 and pass@k come from the n samples (k = n), time is the
median of the runs' wall times, calls and cost the mean per run. A configuration's line
averages its tasks (each task weighs the same) and adds pass@1 per level. The comparison puts
each ablation beside the full configuration: what switching a part off changes.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workers.evaluation.runner import Sample
from workers.evaluation.scoring import pass_at_k
from workers.evaluation.strata import CAUSE_HEADERS, STRATA_HEADERS, cause_rows, strata_rows
from workers.evaluation.suite import Suite

TASK_HEADERS = ["TASK", "LEVEL", "TOPIC", "PASS@1", "PASS@K", "TIME S", "CALLS", "COST $",
                "STATUS"]
COMPARE_HEADERS = ["CONFIGURATION", "PASS@1", "Δ PASS@1", "PASS@K", "L1", "L2", "L3",
                   "TIME S", "CALLS", "COST $"]


@dataclass(frozen=True)
class TaskScore:
    """One task under one configuration, over its samples."""

    task: str
    level: int
    topic: str
    n: int
    passed: int
    pass1: float
    passk: float
    seconds: float
    calls: float
    cost: float
    statuses: str
    tokens: float = 0.0


def task_score(task: str, level: int, topic: str, samples: Sequence[Sample]) -> TaskScore:
    """pass@1, pass@k (k = n), median time, mean calls and cost of one task's samples."""
    n, c = len(samples), sum(s.passed for s in samples)
    counts: dict[str, int] = {}
    for s in samples:
        counts[s.status] = counts.get(s.status, 0) + 1
    return TaskScore(task, level, topic, n, c, pass_at_k(n, c, 1), pass_at_k(n, c, n),
                     statistics.median(s.seconds for s in samples),
                     statistics.fmean(s.calls for s in samples),
                     statistics.fmean(s.cost_usd for s in samples),
                     ", ".join(f"{k} {v}" if v > 1 else k for k, v in sorted(counts.items())),
                     statistics.fmean(s.tokens for s in samples))


@dataclass(frozen=True)
class ConfigScore:
    """A configuration over all tasks: the mean of its tasks' scores."""

    name: str
    tasks: list[TaskScore]

    def mean(self, field: str, level: int | None = None) -> float:
        """The mean of a task field, over every task or over one level's (NaN if none)."""
        values = [getattr(t, field) for t in self.tasks if level in (None, t.level)]
        return statistics.fmean(values) if values else float("nan")


def scores(suite: Suite, samples: Sequence[Sample]) -> list[ConfigScore]:
    """Each configuration's task scores, in the order the samples ran."""
    names = list(dict.fromkeys(s.configuration for s in samples))
    samples = [s for s in samples if not s.skipped]
    out: list[ConfigScore] = []
    for name in names:
        rows = [task_score(t.id, t.level, t.topic, mine)
                for t in suite.tasks
                if (mine := [s for s in samples if s.configuration == name and s.task == t.id])]
        if rows:  # a configuration whose every run went unscored has no line
            out.append(ConfigScore(name, rows))
    return out


def task_rows(config: ConfigScore) -> list[list[str]]:
    """The rows of a configuration's table, a total line last."""
    rows = [[t.task, str(t.level), t.topic, f"{t.pass1:.2f}", f"{t.passk:.2f}",
             f"{t.seconds:.1f}", f"{t.calls:.1f}", f"{t.cost:.4f}", t.statuses]
            for t in config.tasks]
    rows.append(["all", "", "", f"{config.mean('pass1'):.2f}", f"{config.mean('passk'):.2f}",
                 f"{config.mean('seconds'):.1f}", f"{config.mean('calls'):.1f}",
                 f"{config.mean('cost'):.4f}", ""])
    return rows


def compare_rows(configs: Sequence[ConfigScore]) -> list[list[str]]:
    """One row per configuration; Δ against the first (the full configuration)."""
    base = configs[0].mean("pass1") if configs else 0.0
    rows: list[list[str]] = []
    for c in configs:
        levels = [c.mean("pass1", level) for level in (1, 2, 3)]
        rows.append([c.name, f"{c.mean('pass1'):.2f}", f"{c.mean('pass1') - base:+.2f}",
                     f"{c.mean('passk'):.2f}",
                     *("-" if v != v else f"{v:.2f}" for v in levels),  # NaN: no such level
                     f"{c.mean('seconds'):.1f}", f"{c.mean('calls'):.1f}",
                     f"{c.mean('cost'):.4f}"])
    return rows


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub Markdown table."""
    cells = [[c.replace("|", "\\|") for c in row] for row in rows]
    return [f"| {' | '.join(headers)} |", f"|{'|'.join('---' for _ in headers)}|",
            *(f"| {' | '.join(row)} |" for row in cells)]


def markdown(suite: Suite, samples: Sequence[Sample], *, repeat: int, mode: str,
             started: str, extra: Sequence[str] = ()) -> str:
    """The evaluation's Markdown report (``extra``: lines after the comparison)."""
    configs = scores(suite, samples)
    unscored = [s for s in samples if s.skipped]
    samples = [s for s in samples if not s.skipped]
    lines = [f"# Evaluation: {suite.name}", "",
             f"- Started: {started}", f"- Tasks: {len(suite.tasks)}; runs per task and "
             f"configuration: {repeat} (pass@k with k = {repeat})",
             f"- Model traffic of goal tasks: {mode}",
             f"- Configurations: {', '.join(c.name for c in configs)}", ""]
    if suite.description:
        lines += [suite.description, ""]
    lines += ["## Comparison", "", *markdown_table(COMPARE_HEADERS, compare_rows(configs)), "",
              "pass@1 and pass@k are means over tasks; L1-L3 are pass@1 by level; time is "
              "each task's median run time, calls and cost the mean per run.", ""]
    lines += [*extra, "## Failures by cause", "",
              *markdown_table(CAUSE_HEADERS, cause_rows(samples)), "",
              "Each cause's share of a configuration's failed runs: planning (no plan "
              "ran), code (a job failed), environment (sandbox, packages, services), "
              "verification (checks failed, or a wrong answer), answer format (no readable "
              "formatted answer), budget (model budget or time).", ""]
    for config in configs:
        lines += [f"## {config.name}", "", *markdown_table(TASK_HEADERS, task_rows(config)), "",
                  *markdown_table(STRATA_HEADERS, strata_rows(suite, config)), ""]
    lines += judged_lines(samples)
    if unscored:
        lines += ["## Not scored", "", "Runs that did not run or whose result says nothing "
                  "of the model; they are left out of every table above.", ""]
        lines += [f"- `{s.configuration}` {s.task} #{s.repeat}: {s.skipped}" for s in unscored]
        lines.append("")
    failed = [s for s in samples if not s.passed]
    if failed:
        lines += ["## Failed runs", ""]
        lines += [f"- `{s.configuration}` {s.task} #{s.repeat} ({s.run_id or 'not started'}, "
                  f"{s.status}): {s.error or '; '.join(s.missed)}" for s in failed]
        lines.append("")
    return "\n".join(lines)


def judged_lines(samples: Sequence[Sample]) -> list[str]:
    """The hypothesis judge's verdict and reasons on each judged run (none: no lines)."""
    judged = [s for s in samples if s.judgement]
    if not judged:
        return []
    lines = ["## Judged hypotheses", ""]
    for s in judged:
        j = s.judgement or {}
        verdict = "match" if j.get("matches") else "no match"
        lines.append(f"- `{s.configuration}` {s.task} #{s.repeat}: {verdict} (context "
                     f"{j.get('context')}, variables {j.get('variables')}, relationship "
                     f"{j.get('relationship')}; score {j.get('score')}): {j.get('reasons')}")
    return [*lines, ""]


def write(folder: Path, suite: Suite, samples: Sequence[Sample], *, repeat: int, mode: str,
          started: str, extra: Sequence[str] = ()) -> tuple[Path, Path]:
    """``report.md`` and ``samples.json`` (every run's raw sample) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    report, raw = folder / "report.md", folder / "samples.json"
    report.write_text(markdown(suite, samples, repeat=repeat, mode=mode, started=started,
                               extra=extra), encoding="utf-8")
    document = {"suite": suite.name, "started": started, "repeat": repeat, "mode": mode,
                "samples": [s.model_dump(mode="json") for s in samples]}
    raw.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return report, raw
