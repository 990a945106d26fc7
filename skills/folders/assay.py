"""Import of a folder Assay wrote: the pattern from ``assay.json``, the job from ``scripts/``.

Folders of earlier versions held the pattern in the front matter's metadata (``assay-pattern``);
they are still read. The side file is trusted no more than any other input: the pattern and
metrics are validated by their models, the JSON must name the skill the front matter names (whose
name, description and licence win),
the job's file names may not leave ``scripts/``, and the exported version and kind must agree
with the pattern. The status and origin come from the caller, never from the folder.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar, cast

from pydantic import ValidationError

from skills.folders.errors import Problem
from skills.folders.frontmatter import index_description
from skills.folders.limits import (
    METRICS_KEY,
    PATTERN_KEY,
    SCRIPTS,
    SIDE_FILE,
    plain_name,
    plain_relative,
)
from skills.folders.scan import Source
from workflows.contracts.patterns import Skill, SkillMetrics, SkillPattern, SkillStatus

_M = TypeVar("_M", SkillPattern, SkillMetrics)


def assay_skill(src: Source, status: SkillStatus | None, origin: str,
                side: dict[str, Any] | None) -> tuple[Skill | None, list[str]]:
    """A folder Assay wrote: the pattern from the side file, the job from ``scripts/``.

    Args:
        src: the folder.
        status: the status the skill gets (``None``: candidate).
        origin: the skill's origin.
        side: the side file; ``None``: a folder of an earlier version, whose pattern is in
            the front matter's metadata (``assay-pattern``).
    """
    problems: list[str] = []
    data, metrics_data, confidence, exported = _parts(src, side, problems)
    if data is None or metrics_data is None:
        return None, problems
    if data.get("name", src.front["name"]) != src.front["name"]:
        problems.append(f"{src.where}: the pattern names {data.get('name')!r}, the front "
                        f"matter {src.front['name']!r}; they must be equal")
    data.update(name=src.front["name"], license=str(src.front.get("license") or ""),
                description=index_description(str(src.front["description"])))
    job: object = data.get("job")
    if isinstance(job, dict):
        try:
            _restore_job(src, cast("dict[str, Any]", job))
        except Problem as err:
            return None, [*problems, str(err)]
    data["references"] = src.references()
    pattern = _validated(SkillPattern, data, src, "pattern", problems)
    metrics = _validated(SkillMetrics, metrics_data, src, "metrics", problems)
    if problems or pattern is None or metrics is None:
        return None, problems
    _check_consistent(src, pattern, problems)
    skill = Skill(pattern=pattern, status=status or "candidate", metrics=metrics,
                  confidence=confidence, origin=origin,
                  note=f"{origin} from {src.folder} (exported as {exported[0]}, origin "
                       f"{exported[1]})")
    return (None, problems) if problems else (skill, [])


def _parts(src: Source, side: dict[str, Any] | None, problems: list[str]
           ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, float, tuple[str, str]]:
    """The pattern, metrics, confidence and exported (status, origin), from where they are."""
    if side is None:
        metadata = src.metadata
        return (_json_object(src, PATTERN_KEY, problems),
                _json_object(src, METRICS_KEY, problems) if METRICS_KEY in metadata else {},
                _confidence(src, metadata.get("assay-confidence", "0"), problems),
                (metadata.get("assay-status", "unknown"), metadata.get("assay-origin", "unknown")))
    return (_side_object(src, side, "pattern", problems),
            _side_object(src, side, "metrics", problems),
            _confidence(src, str(side.get("confidence", 0)), problems),
            (str(side.get("status", "unknown")), str(side.get("origin", "unknown"))))


def _side_object(src: Source, side: dict[str, Any], key: str, problems: list[str]
                 ) -> dict[str, Any] | None:
    value: object = side.get(key, {})
    if not isinstance(value, dict):
        problems.append(f"{src.folder / SIDE_FILE}: `{key}` must be a JSON object")
        return None
    return dict(cast("dict[str, Any]", value))


def _json_object(src: Source, key: str, problems: list[str]) -> dict[str, Any] | None:
    try:
        value: object = json.loads(src.metadata[key])
    except (ValueError, RecursionError) as err:
        problems.append(f"{src.where}: metadata {key} is not valid JSON ({err})")
        return None
    if not isinstance(value, dict):
        problems.append(f"{src.where}: metadata {key} must be a JSON object")
        return None
    return cast("dict[str, Any]", value)


def _confidence(src: Source, text: str, problems: list[str]) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:  # also refuses nan
        problems.append(f"{src.where}: the confidence {text[:40]!r} must be a number from 0 "
                        "to 1")
        return 0.0
    return value


def _restore_job(src: Source, job: dict[str, Any]) -> None:
    """Put the script's text back into the job; its names may not leave ``scripts/``."""
    filename: object = job.get("filename")
    if not isinstance(filename, str) or not plain_name(filename):
        raise Problem(f"{src.where}: the pattern's job filename {filename!r} must be a plain "
                      f"file name under {SCRIPTS}/ (no '/', '..' or leading '.')")
    entry: object = job.get("entry")
    if entry is not None and (not isinstance(entry, str) or not plain_relative(entry)):
        raise Problem(f"{src.where}: the pattern's job entry {entry!r} must be a relative "
                      "path with no '..' parts")
    source = src.script(filename)
    job["source"] = source
    if entry is None:
        job["code"] = source


def _validated(model: type[_M], data: dict[str, Any], src: Source, key: str,
               problems: list[str]) -> _M | None:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        for error in err.errors()[:10]:
            place = ".".join(str(part) for part in error["loc"]) or "(top)"
            problems.append(f"{src.where}: {key}, {place}: {error['msg']}")
        return None


def _check_consistent(src: Source, pattern: SkillPattern, problems: list[str]) -> None:
    for key, expected in (("assay-version", str(pattern.version)),
                          ("assay-kind", pattern.kind)):
        if key in src.metadata and src.metadata[key] != expected:
            problems.append(f"{src.where}: metadata {key} is {src.metadata[key]!r} but "
                            f"{PATTERN_KEY} says {expected!r}")
