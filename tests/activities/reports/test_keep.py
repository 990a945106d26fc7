"""A run's folder holds copies of its verified artifacts, fetched from the artifact store by
digest and linked from the summary; nothing missing from the store or changed since
verification is copied, and no recorded path is read."""

from __future__ import annotations

import hashlib
import io
from datetime import UTC, datetime
from pathlib import Path

from PIL import Image
from temporalio.testing import ActivityEnvironment

from activities.artifacts.store import LocalArtifactStore
from activities.reports.keep import ARTIFACT_BUDGET, EXCERPT_BYTES
from activities.reports.writer import ReportWriter
from workflows.contracts.execution import Artifact
from workflows.contracts.results import RunReport, TaskResult, WriteReportInput

START = datetime(2026, 1, 1, tzinfo=UTC)


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(out, format="PNG")
    return out.getvalue()


class Work:
    """A task attempt's files put in the store (as the sandbox does), and artifacts recorded."""

    def __init__(self, root: Path) -> None:
        self.store = LocalArtifactStore(root / "store")
        self.attempt = root / "work" / "run-1" / "t" / "attempt-1"
        self.attempt.mkdir(parents=True)
        self.artifacts: list[Artifact] = []

    def file(self, name: str, data: bytes) -> Path:
        path = self.attempt / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.store.put(path)
        self.record(name, path, data)
        return path

    def record(self, name: str, path: Path | str, data: bytes) -> None:
        self.artifacts.append(Artifact(name=name, size=len(data),
                                       sha256=hashlib.sha256(data).hexdigest(), path=str(path)))

    def report(self) -> RunReport:
        task = TaskResult(task_id="t", status="completed", status_reason="ok",
                          artifacts=self.artifacts)
        return RunReport(run_id="run-1", plan_name="p", plan_sha256="0" * 64,
                         status="completed", timestamp="20260101_000000", started_at=START,
                         finished_at=START, tasks=[task])


async def write(tmp_path: Path, work: Work, artifact_budget: int = ARTIFACT_BUDGET,
                ) -> tuple[RunReport, str]:
    writer = ReportWriter(tmp_path / "runs", work.store, artifact_budget=artifact_budget)
    paths = await ActivityEnvironment().run(writer.write_report,
                                            WriteReportInput(report=work.report()))
    final = RunReport.model_validate_json(Path(paths.results_json).read_text())
    return final, Path(paths.summary_md).read_text()


async def test_verified_artifacts_are_copied_and_linked_images_embedded(tmp_path: Path) -> None:
    work = Work(tmp_path)
    work.file("results/table.csv", b"a,b\n1,2\n")
    work.file("plot.png", png())
    final, summary = await write(tmp_path, work)

    folder = tmp_path / "runs" / "run-1"
    assert (folder / "artifacts" / "t" / "results" / "table.csv").read_bytes() == b"a,b\n1,2\n"
    assert (folder / "artifacts" / "t" / "plot.png").read_bytes() == png()
    assert [k.path for k in final.files.artifacts] == ["artifacts/t/results/table.csv",
                                                        "artifacts/t/plot.png"]
    assert "- Artifact [results/table.csv](artifacts/t/results/table.csv)" in summary
    assert "![plot.png](artifacts/t/plot.png)" in summary
    assert "![results/table.csv]" not in summary
    assert "2 verified artifact(s)" in summary


async def test_findings_are_inlined_and_a_long_one_is_cut_with_a_link(tmp_path: Path) -> None:
    work = Work(tmp_path)
    work.file("findings.md", b"# Findings\n\nGroup b is higher (p = 0.0002).\n<script>x</script>\n")
    long = "".join(f"line {i} of the summary\n" for i in range(1000)).encode()
    work.file("summary.txt", long)
    work.file("data.txt", b"not a findings text\n")
    _, summary = await write(tmp_path, work)

    assert "  Group b is higher (p = 0.0002)." in summary
    fence = summary.index("  ```\n  # Findings")  # inside a fence no renderer reads HTML
    assert "  <script>x</script>\n  ```" in summary[fence:]
    assert "&lt;" not in summary and "&amp;" not in summary
    assert "  line 0 of the summary" in summary
    assert "line 999 of the summary" not in summary
    assert "  > … (truncated; full file: [summary.txt](artifacts/t/summary.txt))" in summary
    assert "not a findings text" not in summary
    assert len(summary) < 3 * EXCERPT_BYTES


async def test_unstored_and_changed_artifacts_are_not_copied(tmp_path: Path) -> None:
    work = Work(tmp_path)
    outside = tmp_path / "secret.txt"
    outside.write_bytes(b"secret")
    work.record("elsewhere.txt", outside, b"secret")  # its path is never read
    changed = work.file("changed.csv", b"as verified")
    digest = hashlib.sha256(b"as verified").hexdigest()
    entry = work.store.root / "sha256" / digest[:2] / digest
    entry.chmod(0o644)
    entry.write_bytes(b"edited after")
    final, summary = await write(tmp_path, work)

    assert changed.read_bytes() == b"as verified"
    assert final.files.artifacts == []
    copies = tmp_path / "runs" / "run-1" / "artifacts"
    assert [p for p in copies.rglob("*") if not p.is_dir()] == []
    skipped = "\n".join(final.files.skipped)
    assert "`elsewhere.txt`: not in the artifact store" in skipped
    assert "`changed.csv`: its stored bytes no longer have the verified sha256" in skipped
    assert "Not copied:" in summary and "`changed.csv`: its stored bytes" in summary


async def test_copies_stop_at_the_runs_budget_and_say_so(tmp_path: Path) -> None:
    work = Work(tmp_path)
    work.file("small.csv", b"x" * 100)
    work.file("big.csv", b"y" * 1000)
    final, summary = await write(tmp_path, work, artifact_budget=500)

    assert [k.name for k in final.files.artifacts] == ["small.csv"]
    assert "`big.csv`: over what is left of the report's 500-byte budget" in summary
