"""SKILL.md refused for its front matter, header fields, encoding or size."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills.folders.limits import MAX_SKILL_FILE
from tests.skills.folders.samples import problems_of, simple, write_folder
from workflows.contracts.patterns import MAX_GUIDELINE

BAD_FOLDERS: list[tuple[str, str, str | bytes, str]] = [
    ("upper", "Bad-Name", simple("Bad-Name"), "must be lowercase letters, digits and single"),
    ("double", "bad--name", simple("bad--name"), "must be lowercase letters, digits and single"),
    ("long", "a" * 65, simple("a" * 65), "the name has 65 characters (at most 64)"),
    ("mismatch", "alpha", simple("beta"), "`name` is 'beta' but the folder is called 'alpha'"),
    ("no-name", "alpha", "---\ndescription: x\n---\n", "`name` is missing or not text"),
    ("number-name", "alpha", "---\nname: 12\ndescription: x\n---\n", "`name` must be text"),
    ("no-description", "alpha", "---\nname: alpha\n---\n", "`description` is missing, empty"),
    ("no-front-matter", "alpha", "# alpha\n\nJust Markdown.\n", "must start with a line '---'"),
    ("not-mapping", "alpha", "---\n- name\n- alpha\n---\n", "must be a YAML mapping"),
    ("scalar", "alpha", "---\njust text\n---\n", "must be a YAML mapping"),
    ("unterminated", "alpha", "---\nname: alpha\ndescription: x\n", "front matter is not closed"),
    ("bad-yaml", "alpha", "---\nname: [alpha\n---\n", "the front matter is not valid YAML"),
    ("python-tag", "alpha", "---\nname: !!python/object/apply:os.system ['true']\n---\n",
     "the front matter is not valid YAML"),
    ("aliases", "alpha", "---\na: &a [x, x, x]\nb: [*a, *a, *a]\nname: alpha\n---\n",
     "anchors or aliases"),
    ("deep", "alpha", "---\nname: " + "[" * 40 + "]" * 40 + "\n---\n", "nested too deeply"),
    ("metadata-list", "alpha", simple("alpha").replace("---\n\n", "metadata: [a]\n---\n\n"),
     "`metadata` must be a mapping"),
    ("long-compatibility", "alpha",
     simple("alpha").replace("---\n\n", f"compatibility: {'y' * 501}\n---\n\n"),
     "`compatibility` has 501 characters"),
    ("not-utf8", "alpha", b"---\nname: alpha\ndescription: caf\xe9\n---\n",
     "is not UTF-8 text (invalid byte at offset 32)"),
    ("huge", "alpha", simple("alpha") + "x" * MAX_SKILL_FILE, "is larger than 2097152 bytes"),
    ("long-body", "alpha", simple("alpha") + "x" * MAX_GUIDELINE,
     "a guideline holds at most 200000"),
]


@pytest.mark.parametrize(("case", "folder", "skill_md", "message"), BAD_FOLDERS,
                         ids=[case[0] for case in BAD_FOLDERS])
def test_import_refuses_bad_skill_md(tmp_path: Path, case: str, folder: str,
                                     skill_md: str | bytes, message: str) -> None:
    path = write_folder(tmp_path, folder, skill_md)
    problems = problems_of(tmp_path)
    assert len(problems) == 1, problems
    assert message in problems[0]
    assert str(path) in problems[0]
