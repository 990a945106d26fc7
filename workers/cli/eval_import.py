"""``assay eval import``: a local copy of a public benchmark turned into an Assay suite.

``assay eval import dabench DIR`` and ``assay eval import discoverybench DIR`` read the
benchmark's layout (nothing is downloaded), write the suite beside its files
(``DIR/assay-suite.json`` unless ``--out`` says where, inside ``DIR``) and print how to run it.
A malformed folder (a file missing, a bad JSONL line, a question with no label, an unknown
table, an answer format naming no field) exits 2 naming the file and line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from workers.cli.common import EXIT_BAD_INPUT, fail

import_app = typer.Typer(no_args_is_help=True, add_completion=False,
                         help="Turn a local copy of a public benchmark into a suite.")

Folder = Annotated[Path, typer.Argument(metavar="DIR", help="The benchmark's folder.")]
Out = Annotated[Path | None, typer.Option(help="The suite file to write, inside DIR "
                                          "(default: DIR/assay-suite.json).")]
Limit = Annotated[int | None, typer.Option(min=1, help="Import only the first N tasks.")]


@import_app.command("dabench")
def dabench(folder: Folder, out: Out = None, limit: Limit = None) -> None:
    """Import InfiAgent-DABench: questions JSONL, labels JSONL and a tables folder."""
    from workers.evaluation.imports import import_dabench

    _import(folder, out, limit, import_dabench)


@import_app.command("discoverybench")
def discoverybench(folder: Folder, out: Out = None, limit: Limit = None) -> None:
    """Import DiscoveryBench: metadata JSON beside its datasets, queries, gold hypotheses."""
    from workers.evaluation.imports import import_discoverybench

    _import(folder, out, limit, import_discoverybench)


def _import(folder: Path, out: Path | None, limit: int | None,
            adapter: Callable[..., dict[str, Any]]) -> None:
    from workers.evaluation.imports import BenchmarkError, write_suite

    if not folder.is_dir():
        fail(f"{folder}: not a folder; pass the benchmark's folder", EXIT_BAD_INPUT)
    target = out or folder / "assay-suite.json"
    if target.resolve().parent != folder.resolve():
        fail(f"--out {target}: the suite is written in {folder}, so that its paths stay "
             "relative to the benchmark's files", EXIT_BAD_INPUT)
    try:
        suite = write_suite(adapter(folder, limit=limit), target)
    except (BenchmarkError, OSError) as err:
        fail(str(err), EXIT_BAD_INPUT)
    levels = sorted({t.level for t in suite.tasks})
    typer.echo(f"{len(suite.tasks)} tasks (levels {', '.join(map(str, levels))}) written to "
               f"{target}\nrun them: assay eval {target} --repeat 1")
