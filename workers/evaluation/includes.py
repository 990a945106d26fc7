"""A suite's ``include``: task entries kept in files of their own, one task per file.

``"include": ["goals/*/task.json"]`` adds, in the order of their paths, every file the pattern
(relative to the suite file, inside its folder) matches; each holds one task entry, whose own
paths (``data``, ``replay``, ``judge_replay``) are relative to that file. Each is checked on
its own, so a malformed one is refused naming its file, before the suite is assembled.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from workers.intake.jsonfile import JsonFileError, read_json
from workflows.common.validation import field_errors

MAX_TASK_BYTES = 200_000
PATH_FIELDS = ("plan", "replay", "judge_replay")


class IncludeError(ValueError):
    """An included file is unusable; the message names it."""


def included_tasks(patterns: list[str], base: Path) -> list[dict[str, Any]]:
    """The task entries ``patterns`` match under ``base``, their paths made relative to it.

    Raises:
        IncludeError: a pattern leaving the folder, or a file that is not one valid task.
    """
    from workers.evaluation.suite import SuiteTask  # the suite imports this module

    entries: list[dict[str, Any]] = []
    for pattern in patterns:
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise IncludeError(f"include {pattern!r}: a pattern is relative to the suite "
                               "file and stays inside its folder (no '..', no absolute path)")
        for path in sorted(base.glob(pattern)):
            if not path.is_file():
                continue
            entry = _read(path)
            try:
                task = SuiteTask.model_validate(entry)
            except ValidationError as err:
                lines = "\n  ".join(str(e) for e in field_errors(err, whole="task", most=10,
                                                         plain=True))
                raise IncludeError(f"{path}: invalid included task:\n  {lines}") from None
            for field, relative in task.files():
                if not (path.parent / relative).is_file():
                    raise IncludeError(f"{path}: {field} {relative!r} does not exist; an "
                                       "included task's paths are relative to its file")
            entries.append(rebased(entry, path.parent, base))
    return entries


def _read(path: Path) -> dict[str, Any]:
    try:
        raw: Any = read_json(path, what="included task", max_bytes=MAX_TASK_BYTES)
    except JsonFileError as err:
        raise IncludeError(str(err)) from None
    if not isinstance(raw, dict):
        raise IncludeError(f"{path}: an included file holds one task entry (a JSON object "
                           "with id, level, goal, ...), not a list or a value")
    return cast(dict[str, Any], raw)


def rebased(entry: dict[str, Any], folder: Path, base: Path) -> dict[str, Any]:
    """``entry`` with its file paths, relative to ``folder``, made relative to ``base``."""
    def moved(relative: str) -> str:
        return os.path.relpath(folder / relative, base)

    out = dict(entry)
    for key in PATH_FIELDS:
        if isinstance(out.get(key), str):
            out[key] = moved(out[key])
    if isinstance(out.get("data"), list):
        out["data"] = [moved(d) if isinstance(d, str) else d
                       for d in cast(list[Any], out["data"])]
    return out
