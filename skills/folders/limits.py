"""What a skill folder is made of, how large it may be, and which file names are safe.

The bounds hold before anything is parsed: a folder comes from outside, so its size, the
number of its files, its front matter and the depth of the search for folders are all capped.
The name checks keep every path a folder names inside ``scripts/`` or the folder itself.
"""

from __future__ import annotations

from pathlib import Path

from workflows.contracts.plan import JobSpec

SKILL_FILE = "SKILL.md"
SCRIPTS = "scripts"
REFERENCES = "references"
SIDE_FILE = "assay.json"
"""Assay's own data beside ``SKILL.md``: the pattern, its metrics, or how to run a script."""
MAX_SIDE_FILE = 2 * 1024 * 1024
"""Bytes of the side file."""
PATTERN_KEY = "assay-pattern"
"""The metadata key in which earlier versions exported the pattern (still read on import)."""
METRICS_KEY = "assay-metrics"
"""The metadata key in which earlier versions exported the metrics (still read on import)."""
DOCUMENTS = (".md", ".markdown", ".txt", ".rst")
"""Endings of the text files kept as references an agent can open (scripts/ aside)."""
LICENCES = ("license", "licence", "copying", "notice")
"""How licence files' names start (any case); they are kept as files, never indexed."""
MAX_SKILL_FILE = 2 * 1024 * 1024
"""Bytes of ``SKILL.md`` (an exported long guideline is in its front matter and its body)."""
MAX_FRONT_MATTER = 1024 * 1024
"""Bytes of its front matter, checked before the YAML is parsed."""
MAX_FILE = 16 * 1024 * 1024
"""Bytes of any one file in a folder (every file is kept in the artifact store)."""
MAX_FOLDER = 64 * 1024 * 1024
"""Bytes of all of a folder's files together."""
MAX_FILES = 1000
"""Files in one folder (collections ship ``references/`` folders of many files)."""
MAX_ENTRIES = 2 * MAX_FILES
"""Files and folders scanned in one skill folder before the scan gives up."""
MAX_REFERENCE = 1024 * 1024
"""Bytes of one referenced file kept with the skill; a larger one is listed, not kept."""
MAX_REFERENCES = 8 * 1024 * 1024
"""Bytes of all referenced files kept with one skill; the rest are listed, not kept."""
MAX_COMPATIBILITY = 500
"""Characters of the front matter's ``compatibility``."""
MAX_YAML_DEPTH = 8
"""Nesting of the front matter's collections."""
MAX_YAML_EVENTS = 5000
"""Parser events the front matter may produce: a bound on how many items it holds."""
MAX_SEARCH_DEPTH = 3
"""Levels below the imported directory searched for skill folders."""
MAX_SEARCH_ENTRIES = 10_000
"""Entries the search for skill folders looks at before it gives up."""
MAX_CONTEXT = 4000
"""Characters of a foreign skill's context (its description and first paragraph)."""

def script_name(job: JobSpec) -> str:
    """The file name under ``scripts/`` a job is written as (not yet checked to be plain)."""
    return job.filename or (Path(job.entry).name if job.entry else "job.py")


def plain_name(name: str) -> bool:
    """Whether ``name`` is one file name: no separator, no leading dot, not too long."""
    return (0 < len(name) <= 255 and not name.startswith(".")
            and not any(c in name for c in "/\\\0:"))


def plain_relative(path: str) -> bool:
    """Whether ``path`` is relative and stays below its folder (no empty, '.' or '..' parts)."""
    parts = path.replace("\\", "/").split("/")
    return (bool(path) and not path.startswith(("/", "\\")) and "\0" not in path
            and all(p not in ("", ".", "..") for p in parts))
