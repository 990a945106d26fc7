"""The documentation site builds with ``mkdocs build --strict``, and strict does catch faults."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.docs.blocks import ROOT


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site``."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(config), "--site-dir", str(site)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_the_site_builds_strict_with_the_generated_references(tmp_path: Path) -> None:
    done = build(ROOT / "mkdocs.yml", tmp_path / "site")
    said = done.stdout + done.stderr
    assert done.returncode == 0 and "WARNING" not in said, said[-4000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    settings = (tmp_path / "site" / "reference" / "settings" / "index.html").read_text(
        encoding="utf-8")
    assert "assay study start" in cli and "--max-parallel" in cli
    assert "ASSAY_JOB_MAX_DISK_MB" in settings and "ASSAY_DATA_DIR" in settings
    assert (tmp_path / "site" / "operations" / "patches" / "index.html").exists()


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    """The negative control: the same site with one link to a missing anchor is refused."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    with (docs / "index.md").open("a", encoding="utf-8") as page:
        page.write("\n[gone](guides/plans.md#no-such-section)\n")
    config = ROOT.joinpath("mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("docs_dir: docs", f"docs_dir: {docs}").replace(
        "  - docs/hooks.py", f"  - {docs / 'hooks.py'}").replace("  - workers/",
                                                                 f"  - {ROOT}/workers/")
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-section" in done.stdout + done.stderr
