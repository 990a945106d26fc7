"""Nothing in the repository sends a reader to a document the repository does not have.

Facts are stated where they are used, or the site's page that states them is named. The one
page that names the specifications Assay was built to, ``docs/design/seeds.md``, says what
each capability is and where it lives, so no reader needs them.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.blocks import ROOT

OUTSIDE = re.compile(r"DESIGN §|DESIGN\.md|STYLE\.md|/work/shared|\bseeds? 00\d|\bseed §"
                     r"|\bseed Phase|\bthe seed's|\bthe seeds'")
"""How a reference to a document outside the repository reads."""
SUFFIXES = {".py", ".md", ".yml", ".yaml", ".toml", ".json", ".txt", ".cfg"}
SKIPPED = {".git", ".venv", ".assay", "site", "node_modules", "__pycache__"}
ALLOWED = {"docs/design/seeds.md", "tests/docs/test_outside_references.py"}
"""The seeds page names them on purpose; this test names the patterns."""


def text_files() -> list[Path]:
    """The repository's text files, test data and the built-in skills' folders aside."""
    found: list[Path] = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if (path.suffix in SUFFIXES and path.is_file() and not SKIPPED & set(parts)
                and parts[:2] not in {("tests", "data"), ("skills", "data")}
                and "histories" not in parts):
            found.append(path)
    return found


def test_no_file_points_to_a_document_outside_the_repository() -> None:
    pointing: list[str] = []
    for path in text_files():
        name = path.relative_to(ROOT).as_posix()
        if name in ALLOWED:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE.search(line):
                pointing.append(f"{name}:{number}: {line.strip()[:100]}")
    assert pointing == []
