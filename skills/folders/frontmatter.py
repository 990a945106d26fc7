"""The YAML front matter of ``SKILL.md``: split it off, load it safely, check it, write it.

The front matter comes from outside, so it is bounded in size before it is parsed and read
from the parser's events first: anchors and aliases (the way a small text expands into a huge
value) and deep nesting are refused before anything is built, and only then is it loaded with
the safe loader. Every problem with the standard fields is reported, not just the first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, cast

import yaml

from skills.folders.errors import Problem
from skills.folders.limits import (
    MAX_COMPATIBILITY,
    MAX_FRONT_MATTER,
    MAX_YAML_DEPTH,
    MAX_YAML_EVENTS,
)
from workflows.contracts.patterns import MAX_DESCRIPTION, name_problem


def render_front_matter(front: dict[str, Any]) -> str:
    """``front`` between ``---`` lines, keys in the given order, no line folded."""
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1 << 20)
    return f"---\n{header}---\n"


def split_front_matter(text: str) -> tuple[str, str]:
    """``SKILL.md`` as (front matter, body)."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[0].rstrip() != "---":
        raise Problem("must start with a line '---' opening the YAML front matter "
                      "(name and description)")
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1:])
    raise Problem("the front matter is not closed: no line '---' follows the opening one")


def load_front_matter(text: str) -> dict[str, Any]:
    """The front matter as a mapping; anchors, aliases and deep nesting are refused."""
    if len(text.encode()) > MAX_FRONT_MATTER:
        raise Problem(f"the front matter is larger than {MAX_FRONT_MATTER} bytes")
    depth = events = 0
    try:
        for event in _yaml_events(text):
            events += 1
            if isinstance(event, yaml.NodeEvent) and (
                    isinstance(event, yaml.AliasEvent) or event.anchor is not None):
                raise Problem("the front matter uses YAML anchors or aliases (& or *); "
                              "write the values out")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            if depth > MAX_YAML_DEPTH or events > MAX_YAML_EVENTS:
                raise Problem("the front matter is nested too deeply or too long")
        data: object = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise Problem(f"the front matter is not valid YAML: {' '.join(str(err).split())}"
                      ) from err
    if not isinstance(data, dict):
        raise Problem(f"the front matter must be a YAML mapping (name: ..., description: ...), "
                      f"not {type(data).__name__}")
    return cast("dict[str, Any]", data)


def _yaml_events(text: str) -> Iterator[yaml.Event]:
    """The parser's events of ``text`` (nothing is constructed yet)."""
    events = yaml.parse(  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        text, Loader=yaml.SafeLoader)
    return cast("Iterator[yaml.Event]", events)


def header_problems(front: dict[str, Any], folder_name: str) -> list[str]:
    """What is wrong with the standard fields of the front matter."""
    problems: list[str] = []
    name = front.get("name")
    if not isinstance(name, str):
        problems.append("`name` is missing or not text" if name is None
                        else f"`name` must be text, not {type(name).__name__}")
    elif (why := name_problem(name)) is not None:
        problems.append(f"`name`: {why}")
    elif name != folder_name:
        problems.append(f"`name` is {name!r} but the folder is called {folder_name!r}; "
                        "they must be equal")
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("`description` is missing, empty or not text")
    for key in ("license", "compatibility", "allowed-tools"):
        if key in front and not isinstance(front[key], str):
            problems.append(f"`{key}` must be text")
    compatibility = front.get("compatibility")
    if isinstance(compatibility, str) and len(compatibility) > MAX_COMPATIBILITY:
        problems.append(f"`compatibility` has {len(compatibility)} characters "
                        f"(at most {MAX_COMPATIBILITY})")
    metadata: object = front.get("metadata", {})
    if metadata is not None and not isinstance(metadata, dict):
        problems.append("`metadata` must be a mapping of keys to values")
    return problems


def loose_fields(front: dict[str, Any]) -> list[str]:
    """Take what other tools write more loosely than the format says, with a warning each.

    Metadata values that are not text (lists, numbers, nested mappings, dates) become their
    JSON text, and keys that are not text their ``str``; a description longer than the index
    holds is reported here and shortened by :func:`index_description` (the reader keeps the
    full text). Call after :func:`header_problems` found nothing.
    """
    warnings: list[str] = []
    description = front.get("description")
    if isinstance(description, str) and len(description) > MAX_DESCRIPTION:
        warnings.append(f"`description` has {len(description)} characters; the index takes its "
                        f"first {MAX_DESCRIPTION} (cut at a word), the full text is kept in the "
                        "guideline")
    metadata = cast("dict[object, object]", front.get("metadata") or {})
    converted: dict[str, str] = {}
    changed: list[str] = []
    for key, value in metadata.items():
        if isinstance(key, str) and isinstance(value, str):
            converted[key] = value
            continue
        changed.append(str(key))
        converted[str(key)] = value if isinstance(value, str) else json.dumps(
            value, ensure_ascii=False, sort_keys=True, default=str)
    if changed:
        warnings.append(f"`metadata` values that are not text were kept as JSON text: "
                        f"{', '.join(changed[:5])}" + (" …" if len(changed) > 5 else ""))
    front["metadata"] = converted
    return warnings


def index_description(text: str) -> str:
    """``text`` if the index holds it, else its start cut at a word boundary, ending in '…'."""
    text = text.strip()
    if len(text) <= MAX_DESCRIPTION:
        return text
    head = text[:MAX_DESCRIPTION - 1]
    cut = head.rsplit(None, 1)[0] if any(c.isspace() for c in head) else head
    return cut.rstrip(" ,;:.-") + "…"
