"""The README stays a short front door: the two commands, what they show, links that resolve."""

from __future__ import annotations

import re

from tests.docs.blocks import ROOT

TWO_COMMANDS = """```bash
make run    # set up .venv, start the embedded stack, run the example plans, studies and goal
make test   # set up .venv and run the whole test suite
```"""
"""The contract every reader starts from: exactly these two commands."""
MAX_LINES = 200


def test_the_readme_is_short_and_opens_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES
    assert TWO_COMMANDS in text
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^run:", makefile, re.MULTILINE) and re.search(r"^test:", makefile,
                                                                     re.MULTILINE)


def test_every_link_of_the_readme_and_architecture_resolves() -> None:
    broken: list[str] = []
    for name in ("README.md", "ARCHITECTURE.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if not target.startswith(("http://", "https://")) and not (ROOT / target).exists():
                broken.append(f"{name}: {target}")
    assert broken == []
