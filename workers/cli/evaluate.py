"""``assay eval``: run a suite of research tasks under ablations and report what each part is worth.

The suite, the ablations and every task's plan, goal, data and recording are checked before
any run starts (bad input exits 2). Then each configuration runs in turn against the stack
(``assay up``) or the configured server; its table is printed as it ends, the comparison
last, and the report and raw samples are written under ``<data dir>/evals/``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from typer import _click as click  # the click Typer carries
from typer.core import TyperGroup

from workers.cli.common import EXIT_BAD_INPUT, client_for, fail, print_table, run_async
from workers.cli.eval_import import import_app
from workers.settings import Settings

if TYPE_CHECKING:
    from workers.evaluation.configurations import Configuration
    from workers.evaluation.runner import Evaluation, Sample


class _RunByDefault(TyperGroup):
    """``assay eval SUITE ...`` runs a suite; ``assay eval import ...`` imports a benchmark."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Arguments that name no subcommand are the ``run`` command's."""
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


def evaluate(
    suite_file: Annotated[Path, typer.Argument(metavar="SUITE", help="A suite file (JSON).")],
    repeat: Annotated[int, typer.Option(min=1, max=20, help="Runs of each task per "
                                        "configuration (pass@k uses k = this).")] = 3,
    ablate: Annotated[str | None, typer.Option(
        help="Comma-separated parts to switch off, one configuration each: skills, memory, "
             "debuggers, model-review (or all).")] = None,
    off: Annotated[str | None, typer.Option(
        help="Comma-separated parts switched off in every configuration, the base included "
             "(e.g. skills, so that the model-backed parts are measured).")] = None,
    parallel: Annotated[int, typer.Option(min=1, max=32, help="Runs at once within a "
                                          "configuration.")] = 4,
    timeout: Annotated[float, typer.Option(min=10, help="Seconds a run may take before it "
                                           "counts as failed and is cancelled.")] = 900.0,
    out: Annotated[Path | None, typer.Option(help="Folder of the report (default: "
                                             "<data dir>/evals/<suite>-<time>).")] = None,
    record: Annotated[Path | None, typer.Option(
        help="Live only: keep each goal's model traffic in DIR/<configuration>/<task>.jsonl, "
             "to replay and re-score later with --replay DIR.", metavar="DIR")] = None,
    replay: Annotated[Path | None, typer.Option(
        help="Offline: answer each goal's model calls from DIR/<configuration>/<task>.jsonl "
             "(made by --record DIR), else from the task's own recording.",
        metavar="DIR")] = None,
    curve: Annotated[bool, typer.Option(
        "--curve", help="A learning curve instead: each task once, in order, with learning "
                        "on and then off; curve.png in the report.")] = False,
) -> None:
    """Run a research suite --repeat times per --ablate configuration and score pass@1/pass@k.

    Bad input (suite, ablation, a task's plan, goal, data or recording) exits 2 before any
    run starts; the report and the raw samples are written under ``<data dir>/evals/``.
    """
    from workers.evaluation import (
        AblationError,
        SuiteError,
        configurations,
        load_suite,
        parse_ablations,
    )
    from workers.evaluation.configurations import model_mode
    from workers.evaluation.curve import PASSES
    from workers.evaluation.runner import Evaluation
    from workers.evaluation.traffic import Traffic
    from workers.intake import GoalError, PlanFileError, PolicyError

    settings = Settings()
    if curve and (ablate or off):
        fail("--curve runs its own two passes (learning on, then off); drop --ablate and "
             "--off", EXIT_BAD_INPUT)
    try:
        suite, base = load_suite(suite_file)
        configs = list(PASSES) if curve else configurations(
            parse_ablations(ablate), parse_ablations(off, option="--off"))
    except (SuiteError, AblationError) as err:
        fail(str(err), EXIT_BAD_INPUT)
    mode = "replay" if replay is not None else model_mode(settings)
    _check_traffic(record, replay, mode)
    started = datetime.now(UTC)
    folder = out or settings.root / "evals" / f"{suite_file.stem}-{started:%Y%m%d-%H%M%S}"
    evaluation = Evaluation(suite, base, settings=settings, live=mode == "live",
                            parallel=parallel, timeout_s=timeout,
                            echo=lambda line: typer.echo(line, err=True),
                            traffic=Traffic(record=record, replay=replay))
    if mode == "live" and any(t.hypothesis for t in suite.tasks):
        folder.mkdir(parents=True, exist_ok=True)
        evaluation.judge_record = folder / "judge-recording.jsonl"
    try:
        evaluation.prepare(configs)
    except (PlanFileError, GoalError, PolicyError) as err:
        fail(str(err), EXIT_BAD_INPUT)
    run_async(_run(evaluation, configs, 1 if curve else repeat, folder, mode, started,
                   curve=curve))


def _check_traffic(record: Path | None, replay: Path | None, mode: str) -> None:
    """``--record`` needs live traffic; ``--replay`` a folder; not both (exit 2)."""
    if record is not None and replay is not None:
        fail("--record and --replay exclude each other: record a live evaluation, or "
             "replay one", EXIT_BAD_INPUT)
    if record is not None and mode != "live":
        fail("--record keeps live model traffic, and no model key is configured (or "
             "ASSAY_MODEL_REPLAY_PATH is set): set ANTHROPIC_API_KEY", EXIT_BAD_INPUT)
    if replay is not None and not replay.is_dir():
        fail(f"--replay {replay}: not a folder; give the DIR an earlier `assay eval "
             "--record DIR` wrote", EXIT_BAD_INPUT)


async def _run(evaluation: Evaluation, configs: list[Configuration], repeat: int,
               folder: Path, mode: str, started: datetime, *, curve: bool = False) -> None:
    """Run every configuration, print its table as it ends, then compare and write."""
    from workers.evaluation.curve import CURVE_HEADERS, curve_rows, points, run_curve, write_curve
    from workers.evaluation.report import (
        COMPARE_HEADERS,
        TASK_HEADERS,
        compare_rows,
        scores,
        task_rows,
        write,
    )
    from workers.evaluation.runner import run_suite
    from workers.evaluation.strata import (
        CAUSE_HEADERS,
        STRATA_HEADERS,
        cause_rows,
        strata_rows,
    )

    suite = evaluation.suite

    def done(config: Configuration, samples: list[Sample]) -> None:
        for scored in scores(suite, samples):
            typer.echo(f"\n{config.name}: {len(samples)} runs")
            print_table(TASK_HEADERS, task_rows(scored))
            typer.echo("")
            print_table(STRATA_HEADERS, strata_rows(suite, scored))

    client = await client_for(evaluation.settings)
    if curve:
        samples = await run_curve(evaluation, client, done)
    else:
        samples = await run_suite(evaluation, client, configs, repeat, done)
    typer.echo("\ncomparison")
    print_table(COMPARE_HEADERS, compare_rows(scores(suite, samples)))
    typer.echo("\nfailures by cause (share of each configuration's failed runs)")
    print_table(CAUSE_HEADERS, cause_rows([s for s in samples if not s.skipped]))
    for s in samples:
        if s.skipped:
            typer.echo(f"not scored: {s.configuration} {s.task} #{s.repeat}: {s.skipped}")
    extra: list[str] = []
    if curve:
        image, extra = write_curve(folder, samples, f"{suite.name}: learning curve")
        typer.echo("\nlearning curve")
        print_table(CURVE_HEADERS, curve_rows(points(samples)))
        typer.echo(f"figure: {image}")
    stamp = started.isoformat(timespec="seconds")
    report, raw = write(folder, suite, samples, repeat=repeat, mode=mode, started=stamp,
                        extra=extra)
    typer.echo(f"\nreport: {report}\nsamples: {raw}")


SHORT_HELP = ("Run a research suite --repeat times per --ablate configuration and score "
              "pass@1/pass@k.")
eval_app = typer.Typer(cls=_RunByDefault, add_completion=False, help=SHORT_HELP,
                       no_args_is_help=True)
eval_app.command("run", help=evaluate.__doc__)(evaluate)
eval_app.add_typer(import_app, name="import")
