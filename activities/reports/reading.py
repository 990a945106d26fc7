"""Reading a run's results JSON back: from its path, else from the artifact store.

The report writer puts every results JSON in the artifact store and records its digest
(``ReportPaths.results_sha256``), so a reader on another host than the orchestration worker
that wrote it (the CLI, a study's cycle activities) still finds it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from activities.artifacts.store import ArtifactStore, StoreError
from workflows.contracts.results import ResearchResult, RunReport


def read_report(path: str, sha256: str, store: ArtifactStore | None) -> RunReport | None:
    """A run's results JSON from ``path``, else from ``store`` by ``sha256``; None if neither."""
    try:
        return RunReport.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        pass
    if store is None or not sha256:
        return None
    try:
        with store.open(sha256) as stored:
            return RunReport.model_validate_json(stored.read())
    except (StoreError, OSError, ValidationError):
        return None


def result_report(result: ResearchResult, store: ArtifactStore | None) -> RunReport | None:
    """The report a finished run's result points at, read as :func:`read_report` reads it.

    None when the run wrote none or it cannot be read here.
    """
    paths = result.report
    return None if paths is None else read_report(paths.results_json, paths.results_sha256,
                                                   store)
