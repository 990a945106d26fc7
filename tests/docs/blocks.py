"""The code blocks the documentation marks as runnable, read from its pages.

A block is runnable when the line right before its opening fence is ``<!-- runnable -->``
(the suite runs it as written) or ``<!-- runnable: tests/path/test_x.py -->`` (that test runs
it). ``docs/contributing.md`` documents the marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MARKED = re.compile(
    r"^<!-- runnable(?::\s*(?P<test>\S+))? -->\n```(?P<lang>\w+)[^\n]*\n(?P<code>.*?)^```",
    re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    """One runnable block: where it is, its language and code, and the test that runs it."""

    page: str
    """The page, relative to ``docs/`` (``guides/python.md``)."""
    line: int
    language: str
    code: str
    test: str | None
    """The test file that runs it, relative to the repository; None: the docs suite does."""

    @property
    def name(self) -> str:
        """``page:line``, the block's id in test reports."""
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """Every Markdown page of the site's sources."""
    return sorted(DOCS.rglob("*.md"))


def runnable_blocks() -> list[Block]:
    """Every block marked runnable, in page order."""
    found: list[Block] = []
    for path in pages():
        text = path.read_text(encoding="utf-8")
        for match in MARKED.finditer(text):
            found.append(Block(page=path.relative_to(DOCS).as_posix(),
                               line=text.count("\n", 0, match.start()) + 2,
                               language=match["lang"], code=match["code"], test=match["test"]))
    return found


def block_of(page: str) -> Block:
    """The one runnable block of ``page``."""
    blocks = [b for b in runnable_blocks() if b.page == page]
    assert len(blocks) == 1, f"{page} has {len(blocks)} runnable blocks, not one"
    return blocks[0]
