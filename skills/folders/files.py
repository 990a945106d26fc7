"""Agent Skills folders: export the library's skills, import skills written by anyone.

A skill folder is named after the skill and holds ``SKILL.md`` (YAML front matter between
``---`` lines, then Markdown) and optionally ``scripts/``, ``references/`` and ``assets/``.
Assay writes its whole pattern into the front matter's ``metadata`` (``assay-pattern``, compact
JSON without the job's source, which lives in ``scripts/``), so an export imports back to an
equal pattern; a folder written by another tool becomes a guideline skill, with a job template
when it ships exactly one Python script.

Folders come from outside, so import validates every folder completely before it returns
anything: sizes are bounded before anything is parsed, links and paths leaving the folder are
refused, and every problem found is reported at once (``SkillFileError``). Imported skills are
candidates unless the caller says otherwise: a person approves them before a run applies them.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import yaml
from pydantic import ValidationError

from workflows.contracts.plan import JobSpec
from workflows.library.patterns import (
    MAX_DESCRIPTION,
    Preconditions,
    Skill,
    SkillMetrics,
    SkillPattern,
    SkillSignature,
    SkillStatus,
    name_problem,
)

SKILL_FILE = "SKILL.md"
SCRIPTS = "scripts"
REFERENCES = "references"
MAX_SKILL_FILE = 256 * 1024
MAX_FRONT_MATTER = 64 * 1024
MAX_FILE = 1024 * 1024
MAX_FOLDER = 4 * 1024 * 1024
MAX_FILES = 64
MAX_ENTRIES = 2 * MAX_FILES
"""Files and folders scanned in one skill folder before the scan gives up."""
MAX_COMPATIBILITY = 500
MAX_YAML_DEPTH = 8
MAX_YAML_EVENTS = 5000
MAX_SEARCH_DEPTH = 3
MAX_SEARCH_ENTRIES = 10_000
MAX_GUIDELINE = 20_000
MAX_CONTEXT = 4000
PATTERN_KEY = "assay-pattern"
METRICS_KEY = "assay-metrics"
STATUS_ORDER: tuple[SkillStatus, ...] = ("active", "trial", "candidate", "retired")
"""Which version of a family an export writes: the first status present, newest version."""

_M = TypeVar("_M", SkillPattern, SkillMetrics)


class SkillFileError(ValueError):
    """Skill folders could not be exported or imported; nothing was written or returned.

    Attributes:
        problems: one line per problem, each naming the folder or file and what is wrong.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{count} with skill folders:\n" + "\n".join(f"- {p}" for p in problems))


class _Problem(Exception):
    """One problem that stops reading a file (internal; collected into ``SkillFileError``)."""


# --- export ----------------------------------------------------------------------------------


def export_skills(skills: Sequence[Skill], directory: Path, *, overwrite: bool = False
                  ) -> list[Path]:
    """Write one Agent Skills folder per skill family (name) into ``directory``.

    The family's active version is written, else its trial, else its newest candidate; a
    family whose versions are all retired exports its newest retired one.

    Args:
        skills: library rows, any number of versions per name.
        directory: where the folders go (created if missing).
        overwrite: replace folders that already exist (each folder is replaced whole).

    Returns:
        The folders written, in name order.

    Raises:
        SkillFileError: a folder exists (without ``overwrite``), a name is invalid or a job
            cannot be written; nothing is written then.
    """
    families: dict[str, list[Skill]] = {}
    for skill in skills:
        families.setdefault(skill.pattern.name, []).append(skill)
    chosen = [_representative(families[name]) for name in sorted(families)]
    problems: list[str] = []
    contents: list[tuple[Path, dict[str, bytes]]] = []
    for skill in chosen:
        target = directory / skill.pattern.name
        try:
            files = _skill_files(skill)
        except _Problem as err:
            problems.append(f"{target}: {err}")
            continue
        if os.path.lexists(target) and not overwrite:
            problems.append(f"{target}: already exists; export elsewhere or pass overwrite=True")
        contents.append((target, files))
    if problems:
        raise SkillFileError(problems)
    directory.mkdir(parents=True, exist_ok=True)
    for target, files in contents:
        _write_folder(target, files)
    return [target for target, _ in contents]


def _representative(versions: list[Skill]) -> Skill:
    for status in STATUS_ORDER:
        found = [s for s in versions if s.status == status]
        if found:
            return max(found, key=lambda s: s.pattern.version)
    raise AssertionError("a family has at least one version")  # pragma: no cover


def _skill_files(skill: Skill) -> dict[str, bytes]:
    """The files of ``skill``'s folder: relative path -> content.

    Raises:
        _Problem: the name is invalid, or the job has no source or an unsafe file name.
    """
    pattern = skill.pattern
    why = name_problem(pattern.name)
    if why:
        raise _Problem(why)
    data = pattern.model_dump(mode="json")
    files: dict[str, bytes] = {}
    compatibility: str | None = None
    if pattern.job is not None:
        filename, source = _job_script(pattern.job)
        job = cast("dict[str, Any]", data["job"])
        job.pop("source", None)
        job.pop("code", None)  # an inline job's code is the script; import restores it
        job["filename"] = filename
        files[f"{SCRIPTS}/{filename}"] = source.encode()
        compatibility = _compatibility(pattern.job, filename)
    metadata = {
        "assay-version": str(pattern.version),
        "assay-kind": pattern.kind,
        "assay-status": skill.status,
        "assay-origin": skill.origin,
        "assay-confidence": repr(skill.confidence),
        PATTERN_KEY: json.dumps(data, separators=(",", ":"), ensure_ascii=False),
        METRICS_KEY: json.dumps(skill.metrics.model_dump(mode="json"), separators=(",", ":")),
    }
    front: dict[str, Any] = {"name": pattern.name, "description": pattern.description}
    if compatibility:
        front["compatibility"] = compatibility
    front["metadata"] = metadata
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1 << 20)
    files[SKILL_FILE] = f"---\n{header}---\n\n{render_body(skill)}".encode()
    return files


def _job_script(job: JobSpec) -> tuple[str, str]:
    source = job.source if job.source is not None else job.code
    if source is None:
        raise _Problem(f"the job {job.entry!r} has no source; export skills from the library, "
                       "where jobs hold their code")
    filename = job.filename or (Path(job.entry).name if job.entry else "job.py")
    if not _plain_name(filename):
        raise _Problem(f"the job's file name {filename!r} is not a plain file name")
    return filename, source


def _compatibility(job: JobSpec, filename: str) -> str:
    text = f"Python 3; runs {SCRIPTS}/{filename} with its arguments as --name=value"
    if job.requirements:
        text += f"; needs the packages {', '.join(job.requirements)}"
    return text[:MAX_COMPATIBILITY]


def _write_folder(target: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` as the folder ``target``, all or nothing: a staging folder is renamed."""
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for relative, content in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        for folder in (staging, *(p for p in staging.rglob("*") if p.is_dir())):
            folder.chmod(0o755)
        if os.path.lexists(target):
            old = staging.with_name(staging.name + ".old")
            target.rename(old)
            staging.rename(target)
            _remove(old)
        else:
            staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


# --- the body --------------------------------------------------------------------------------


def render_body(skill: Skill) -> str:
    """The readable Markdown of an exported skill (what, when, how, and where it came from)."""
    p = skill.pattern
    sections = [f"# {p.name}\n\n{p.description}", _when(p), _parameters(p), _outputs(p),
                _text("Instructions" if p.kind == "subagent" else "Guideline", p.guideline),
                _text("Why it works", p.contrast), _recovery(p), _steps(p), _run(p),
                _provenance(skill)]
    return "\n\n".join(s for s in sections if s) + "\n"


def _text(title: str, text: str) -> str:
    return f"## {title}\n\n{text.strip()}" if text.strip() else ""


def _bullets(title: str, lines: list[str]) -> str:
    return f"## {title}\n\n" + "\n".join(f"- {line}" for line in lines) if lines else ""


def _when(p: SkillPattern) -> str:
    lines: list[str] = []
    if p.preconditions.input_types:
        lines.append(f"Needs one data file of each type: {', '.join(p.preconditions.input_types)}")
    if p.preconditions.keywords:
        lines.append(f"The goal or action mentions one of: {', '.join(p.preconditions.keywords)}")
    if p.preconditions.imports:
        lines.append(f"The job imports: {', '.join(p.preconditions.imports)}")
    if p.action:
        lines.append(f"Task action: {p.action}")
    text = "\n".join(f"- {line}" for line in lines)
    body = "\n\n".join(t for t in (p.context.strip(), text) if t)
    return f"## When to use it\n\n{body}" if body else ""


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def _parameters(p: SkillPattern) -> str:
    if not p.parameters:
        return ""
    rows = ["| Name | Type | Default | Range or options | Description |",
            "| --- | --- | --- | --- | --- |"]
    for param in p.parameters:
        if param.options:
            limits = ", ".join(str(o) for o in param.options)
        elif param.extensions:
            limits = ", ".join(f".{e}" for e in param.extensions)
        else:
            low = "" if param.minimum is None else _number(param.minimum)
            high = "" if param.maximum is None else _number(param.maximum)
            limits = f"{low} .. {high}" if low or high else ""
        kind = param.type if param.target == "arg" else f"{param.type} (data input)"
        rows.append("| " + " | ".join(_cell(v) for v in (
            param.name, kind, param.default, limits, param.description)) + " |")
    return "## Parameters\n\n" + "\n".join(rows)


def _outputs(p: SkillPattern) -> str:
    lines: list[str] = []
    if p.job is not None and p.job.expected_artifacts:
        lines.append("Artifacts: " + ", ".join(f"`{a}`" for a in p.job.expected_artifacts))
    if p.job is not None and p.job.expected_metrics:
        lines.append("Metrics: " + ", ".join(f"`{m}`" for m in p.job.expected_metrics))
    lines += [f"Check: `{c.describe()}`" for c in p.checks]
    lines += [f"Accepted when: {c}" for c in p.acceptance_criteria]
    return _bullets("Expected outputs and checks", lines)


def _recovery(p: SkillPattern) -> str:
    lines = [f"`{c.field}`: {c.old_value!r} -> {c.new_value!r}" + (f" ({c.reason})" if c.reason
                                                                    else "") for c in p.recovery]
    return _bullets("Fixes that worked before", lines)


def _steps(p: SkillPattern) -> str:
    lines = [f"{i}. {s.agent} ({s.phase})" + (f": {s.detail}" if s.detail else "")
             for i, s in enumerate(p.steps, 1)]
    return "## Steps\n\n" + "\n".join(lines) if lines else ""


def _run(p: SkillPattern) -> str:
    if p.job is None:
        return ""
    filename = p.job.filename or (Path(p.job.entry).name if p.job.entry else "job.py")
    flags = " ".join(f"--{k}={v}" for k, v in p.job.args.items())
    command = f"python {SCRIPTS}/{filename} {flags}".rstrip()
    return (f"## How to run\n\nFrom the folder holding the data files:\n\n```\n{command}\n```\n\n"
            "The job writes `metrics.json` and its artifacts in the working directory.")


def _provenance(skill: Skill) -> str:
    p, m = skill.pattern, skill.metrics
    lines = [f"Version {p.version}, {p.kind}, status {skill.status}, origin {skill.origin}, "
             f"confidence {skill.confidence:g}",
             f"Used {m.used} times ({m.succeeded} succeeded) of {m.retrieved} retrievals; "
             f"extracted from {m.evidence_successes} successes and {m.evidence_failures} failures"]
    if p.source_runs:
        lines.append(f"Source runs: {', '.join(p.source_runs)}")
    if p.tags:
        lines.append(f"Tags: {', '.join(p.tags)}")
    return _bullets("Provenance", lines)


# --- import: finding and scanning folders ---------------------------------------------------


def import_skills(directory: Path, *, status: SkillStatus | None = None,
                  origin: str = "imported") -> list[Skill]:
    """Read every skill folder in ``directory``, or ``directory`` itself if it is one.

    Skill folders may sit up to three levels below ``directory`` (grouped in subfolders);
    hidden entries are skipped. Everything is validated before anything is returned.

    Args:
        directory: one skill folder (holding ``SKILL.md``) or a folder of them.
        status: the status the skills get; ``None``: ``candidate`` (a person approves).
        origin: the skills' origin (``imported``; ``builtin`` for the starting library).

    Returns:
        The skills, in name order.

    Raises:
        SkillFileError: any folder has any problem, names repeat, or no folder was found.
    """
    folders, problems = _discover(directory)
    skills: list[Skill] = []
    by_name: dict[str, list[Path]] = {}
    for folder in folders:
        skill, found = _read_folder(folder, status, origin)
        problems += found
        if skill is not None:
            skills.append(skill)
            by_name.setdefault(skill.pattern.name, []).append(folder)
    for name, places in sorted(by_name.items()):
        if len(places) > 1:
            problems.append(f"the name {name!r} is used by {len(places)} folders: "
                            f"{', '.join(str(p) for p in places)}; skill names must be unique")
    if not folders and not problems:
        problems.append(f"{directory}: no skill folders (folders holding {SKILL_FILE}) found")
    if problems:
        raise SkillFileError(problems)
    return sorted(skills, key=lambda s: s.pattern.name)


def read_skill_folder(folder: Path, *, status: SkillStatus | None = None,
                      origin: str = "imported") -> Skill:
    """Read and validate one skill folder (see ``import_skills`` for the arguments).

    Raises:
        SkillFileError: every problem found in the folder.
    """
    if folder.is_symlink():
        raise SkillFileError([f"{folder}: is a symbolic link; give the folder itself"])
    skill, problems = _read_folder(folder, status, origin)
    if problems or skill is None:
        raise SkillFileError(problems or [f"{folder}: could not be read"])
    return skill


def _is_skill_folder(path: Path) -> bool:
    try:
        return any(name.lower() == SKILL_FILE.lower() for name in os.listdir(path))
    except OSError:
        return False


def _discover(directory: Path) -> tuple[list[Path], list[str]]:
    """Skill folders under ``directory`` (breadth first, no links followed)."""
    if directory.is_symlink() or not directory.is_dir():
        what = "is a symbolic link" if directory.is_symlink() else "is not a folder"
        return [], [f"{directory}: {what}; give a skill folder or a folder of skill folders"]
    if _is_skill_folder(directory):
        return [directory], []
    found: list[Path] = []
    problems: list[str] = []
    level, seen = [directory], 0
    for _ in range(MAX_SEARCH_DEPTH):
        below: list[Path] = []
        for parent in level:
            try:
                with os.scandir(parent) as entries:
                    listed = sorted(entries, key=lambda e: e.name)
            except OSError as err:
                problems.append(f"{parent}: cannot be read ({err.strerror})")
                continue
            for entry in listed:
                seen += 1
                if seen > MAX_SEARCH_ENTRIES:
                    return found, [*problems, f"{directory}: more than {MAX_SEARCH_ENTRIES} "
                                   "entries; point the import at the skill folders"]
                path = Path(entry.path)
                if entry.name.startswith("."):
                    continue
                if entry.is_symlink():
                    problems.append(f"{path}: is a symbolic link; copy the folder in instead")
                elif entry.is_dir(follow_symlinks=False):
                    (found if _is_skill_folder(path) else below).append(path)
        level = below
    return found, problems


def _scan(folder: Path) -> tuple[dict[str, int], list[str]]:
    """Regular files of ``folder`` (relative path -> size) and what breaks the limits."""
    files: dict[str, int] = {}
    problems: list[str] = []
    pending, seen = [folder], 0
    while pending:
        current = pending.pop()
        with os.scandir(current) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            seen += 1
            path = Path(entry.path)
            if seen > MAX_ENTRIES:
                return files, [*problems, f"{folder}: more than {MAX_ENTRIES} files and folders"
                               f" (at most {MAX_FILES} files are allowed)"]
            if entry.is_symlink():
                problems.append(f"{path}: is a symbolic link; links are refused, copy the file")
            elif entry.is_dir(follow_symlinks=False):
                pending.append(path)
            elif entry.is_file(follow_symlinks=False):
                size = entry.stat(follow_symlinks=False).st_size
                files[path.relative_to(folder).as_posix()] = size
                if size > MAX_FILE:
                    problems.append(f"{path}: {size} bytes; each file may hold at most "
                                    f"{MAX_FILE} bytes")
            else:
                problems.append(f"{path}: is not a regular file or folder")
    if len(files) > MAX_FILES:
        problems.append(f"{folder}: holds {len(files)} files; at most {MAX_FILES} are allowed")
    if sum(files.values()) > MAX_FOLDER:
        problems.append(f"{folder}: holds {sum(files.values())} bytes; at most {MAX_FOLDER}")
    return files, problems


def _read_text(path: Path, limit: int) -> str:
    """The UTF-8 text of ``path`` (never through a link), at most ``limit`` bytes."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as err:
        raise _Problem(f"cannot be read ({err.strerror})") from err
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise _Problem("is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise _Problem(f"is larger than {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _Problem(f"is not UTF-8 text (invalid byte at offset {err.start})") from err


# --- import: SKILL.md ------------------------------------------------------------------------


def _split_front_matter(text: str) -> tuple[str, str]:
    """``SKILL.md`` as (front matter, body)."""
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[0].rstrip() != "---":
        raise _Problem("must start with a line '---' opening the YAML front matter "
                       "(name and description)")
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1:])
    raise _Problem("the front matter is not closed: no line '---' follows the opening one")


def _load_front_matter(text: str) -> dict[str, Any]:
    """The front matter as a mapping; anchors, aliases and deep nesting are refused."""
    if len(text.encode()) > MAX_FRONT_MATTER:
        raise _Problem(f"the front matter is larger than {MAX_FRONT_MATTER} bytes")
    depth = events = 0
    try:
        for event in _yaml_events(text):
            events += 1
            if isinstance(event, yaml.NodeEvent) and (
                    isinstance(event, yaml.AliasEvent) or event.anchor is not None):
                raise _Problem("the front matter uses YAML anchors or aliases (& or *); "
                               "write the values out")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            if depth > MAX_YAML_DEPTH or events > MAX_YAML_EVENTS:
                raise _Problem("the front matter is nested too deeply or too long")
        data: object = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise _Problem(f"the front matter is not valid YAML: {' '.join(str(err).split())}"
                       ) from err
    if not isinstance(data, dict):
        raise _Problem(f"the front matter must be a YAML mapping (name: ..., description: ...), "
                       f"not {type(data).__name__}")
    return cast("dict[str, Any]", data)


def _yaml_events(text: str) -> Iterator[yaml.Event]:
    """The parser's events of ``text`` (nothing is constructed yet)."""
    events = yaml.parse(  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        text, Loader=yaml.SafeLoader)
    return cast("Iterator[yaml.Event]", events)


def _header_problems(front: dict[str, Any], folder_name: str) -> list[str]:
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
    elif len(description) > MAX_DESCRIPTION:
        problems.append(f"`description` has {len(description)} characters "
                        f"(at most {MAX_DESCRIPTION})")
    for key in ("license", "compatibility", "allowed-tools"):
        if key in front and not isinstance(front[key], str):
            problems.append(f"`{key}` must be text")
    compatibility = front.get("compatibility")
    if isinstance(compatibility, str) and len(compatibility) > MAX_COMPATIBILITY:
        problems.append(f"`compatibility` has {len(compatibility)} characters "
                        f"(at most {MAX_COMPATIBILITY})")
    metadata: object = front.get("metadata", {})
    if not isinstance(metadata, dict):
        problems.append("`metadata` must be a mapping of text keys to text values")
    else:
        wrong = [str(k) for k, v in cast("dict[object, object]", metadata).items()
                 if not isinstance(k, str) or not isinstance(v, str)]
        if wrong:
            problems.append(f"`metadata` values must be text (quote them): {', '.join(wrong[:5])}")
    return problems


def _read_folder(folder: Path, status: SkillStatus | None, origin: str
                 ) -> tuple[Skill | None, list[str]]:
    """One folder as a skill, or every problem found in it."""
    try:
        files, problems = _scan(folder)
    except OSError as err:
        return None, [f"{folder}: cannot be read ({err.strerror})"]
    where = folder / SKILL_FILE
    if SKILL_FILE not in files:
        if where.is_dir() and not where.is_symlink():
            problems.append(f"{where}: is a folder; {SKILL_FILE} must be a file")
        elif not os.path.lexists(where):
            variants = [n for n in os.listdir(folder) if n.lower() == SKILL_FILE.lower()]
            problems.append(f"{folder}: has no {SKILL_FILE}" + (
                f" (found {variants[0]}; the file must be called {SKILL_FILE})" if variants
                else ""))
        return None, problems or [f"{where}: is not a regular file"]
    try:
        front_text, body = _split_front_matter(_read_text(where, MAX_SKILL_FILE))
        front = _load_front_matter(front_text)
    except _Problem as err:
        return None, [*problems, f"{where}: {err}"]
    problems += [f"{where}: {p}" for p in _header_problems(front, folder.name)]
    if problems:
        return None, problems
    metadata = cast("dict[str, str]", front.get("metadata") or {})
    reader = _assay_skill if PATTERN_KEY in metadata else _foreign_skill
    return reader(_Source(folder, files, front, body), status, origin)


class _Source:
    """A validated folder's parts, handed to the reader of its kind."""

    def __init__(self, folder: Path, files: dict[str, int], front: dict[str, Any], body: str
                 ) -> None:
        self.folder = folder
        self.files = files
        self.front = front
        self.body = body
        self.metadata = cast("dict[str, str]", front.get("metadata") or {})

    @property
    def where(self) -> Path:
        """The folder's ``SKILL.md``, for messages."""
        return self.folder / SKILL_FILE

    def script(self, filename: str) -> str:
        """The text of ``scripts/<filename>`` (a plain name, checked by the caller)."""
        relative = f"{SCRIPTS}/{filename}"
        if relative not in self.files:
            raise _Problem(f"{self.folder / relative}: missing; the skill's job runs this script")
        try:
            return _read_text(self.folder / relative, MAX_FILE)
        except _Problem as err:
            raise _Problem(f"{self.folder / relative}: {err}") from err


# --- import: Assay's folders -----------------------------------------------------------------


def _assay_skill(src: _Source, status: SkillStatus | None, origin: str
                 ) -> tuple[Skill | None, list[str]]:
    """A folder Assay wrote: the pattern from ``assay-pattern``, the job from ``scripts/``."""
    problems: list[str] = []
    data = _json_object(src, PATTERN_KEY, problems)
    metrics_data = _json_object(src, METRICS_KEY, problems) if METRICS_KEY in src.metadata else {}
    confidence = _confidence(src, problems)
    if data is None or metrics_data is None:
        return None, problems
    if data.get("name", src.front["name"]) != src.front["name"]:
        problems.append(f"{src.where}: {PATTERN_KEY} names {data.get('name')!r}, the front "
                        f"matter {src.front['name']!r}; they must be equal")
    data["description"] = src.front["description"]
    job: object = data.get("job")
    if isinstance(job, dict):
        try:
            _restore_job(src, cast("dict[str, Any]", job))
        except _Problem as err:
            return None, [*problems, str(err)]
    pattern = _validated(SkillPattern, data, src, PATTERN_KEY, problems)
    metrics = _validated(SkillMetrics, metrics_data, src, METRICS_KEY, problems)
    if problems or pattern is None or metrics is None:
        return None, problems
    _check_consistent(src, pattern, problems)
    exported = src.metadata.get("assay-status", "unknown")
    skill = Skill(pattern=pattern, status=status or "candidate", metrics=metrics,
                  confidence=confidence, origin=origin,
                  note=f"{origin} from {src.folder} (exported as {exported}, origin "
                       f"{src.metadata.get('assay-origin', 'unknown')})")
    return (None, problems) if problems else (skill, [])


def _json_object(src: _Source, key: str, problems: list[str]) -> dict[str, Any] | None:
    try:
        value: object = json.loads(src.metadata[key])
    except (ValueError, RecursionError) as err:
        problems.append(f"{src.where}: metadata {key} is not valid JSON ({err})")
        return None
    if not isinstance(value, dict):
        problems.append(f"{src.where}: metadata {key} must be a JSON object")
        return None
    return cast("dict[str, Any]", value)


def _confidence(src: _Source, problems: list[str]) -> float:
    text = src.metadata.get("assay-confidence", "0")
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:  # also refuses nan
        problems.append(f"{src.where}: metadata assay-confidence {text[:40]!r} must be a number "
                        "from 0 to 1")
        return 0.0
    return value


def _restore_job(src: _Source, job: dict[str, Any]) -> None:
    """Put the script's text back into the job; its names may not leave ``scripts/``."""
    filename: object = job.get("filename")
    if not isinstance(filename, str) or not _plain_name(filename):
        raise _Problem(f"{src.where}: {PATTERN_KEY} job filename {filename!r} must be a plain "
                       f"file name under {SCRIPTS}/ (no '/', '..' or leading '.')")
    entry: object = job.get("entry")
    if entry is not None and (not isinstance(entry, str) or not _plain_relative(entry)):
        raise _Problem(f"{src.where}: {PATTERN_KEY} job entry {entry!r} must be a relative "
                       "path with no '..' parts")
    source = src.script(filename)
    job["source"] = source
    if entry is None:
        job["code"] = source


def _validated(model: type[_M], data: dict[str, Any], src: _Source, key: str,
               problems: list[str]) -> _M | None:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        for error in err.errors()[:10]:
            place = ".".join(str(part) for part in error["loc"]) or "(top)"
            problems.append(f"{src.where}: metadata {key}, {place}: {error['msg']}")
        return None


def _check_consistent(src: _Source, pattern: SkillPattern, problems: list[str]) -> None:
    for key, expected in (("assay-version", str(pattern.version)),
                          ("assay-kind", pattern.kind)):
        if key in src.metadata and src.metadata[key] != expected:
            problems.append(f"{src.where}: metadata {key} is {src.metadata[key]!r} but "
                            f"{PATTERN_KEY} says {expected!r}")


def _plain_name(name: str) -> bool:
    return (0 < len(name) <= 255 and not name.startswith(".")
            and not any(c in name for c in "/\\\0:"))


def _plain_relative(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return (bool(path) and not path.startswith(("/", "\\")) and "\0" not in path
            and all(p not in ("", ".", "..") for p in parts))


# --- import: folders written by other tools ---------------------------------------------------


def _foreign_skill(src: _Source, status: SkillStatus | None, origin: str
                   ) -> tuple[Skill | None, list[str]]:
    """A folder another tool wrote: a guideline skill, with a job if it has one Python script."""
    name, description = str(src.front["name"]), str(src.front["description"])
    scripts = sorted(f for f in src.files if f.startswith(f"{SCRIPTS}/"))
    references = sorted(f for f in src.files if f.startswith(f"{REFERENCES}/"))
    job: JobSpec | None = None
    imports: list[str] = []
    notes = [f"{origin} from {src.folder} (written by another tool)"]
    single = scripts[0].removeprefix(f"{SCRIPTS}/") if len(scripts) == 1 else ""
    if single.endswith(".py") and _plain_name(single):
        try:
            job, imports = _script_job(src, single)
        except _Problem as err:
            return None, [str(err)]
    unused = scripts if job is None else []
    if unused:
        notes.append(f"guideline only: a job template needs exactly one Python script, "
                     f"found {', '.join(unused)}")
    if "license" in src.front:
        notes.append(f"license: {src.front['license']}")
    guideline = _guideline(src.body, description, references, unused)
    if len(guideline) > MAX_GUIDELINE:
        return None, [f"{src.where}: the body and file list have {len(guideline)} characters; "
                      f"a guideline holds at most {MAX_GUIDELINE}"]
    try:
        pattern = SkillPattern(
            name=name, description=description, context=_context(description, src.body),
            guideline=guideline, job=job,
            signature=SkillSignature(keywords=list(dict.fromkeys(name.split("-")))),
            preconditions=Preconditions(imports=imports))
    except ValidationError as err:
        return None, [f"{src.where}: {' '.join(str(err).split())}"]
    return Skill(pattern=pattern, status=status or "candidate", origin=origin,
                 note="; ".join(notes)), []


def _script_job(src: _Source, filename: str) -> tuple[JobSpec, list[str]]:
    """The one Python script as an inline job, and the top-level modules it imports."""
    source = src.script(filename)
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise _Problem(f"{src.folder / SCRIPTS / filename}: is not valid Python "
                       f"({getattr(err, 'msg', err)}, line {getattr(err, 'lineno', '?')})"
                       ) from err
    modules: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.append(node.module.split(".")[0])
    imports = [m for m in dict.fromkeys(modules) if m != "__future__"][:64]
    return JobSpec(code=source, source=source, filename=filename), imports


def _guideline(body: str, description: str, references: list[str], unused: list[str]) -> str:
    """The Markdown body, with the files Assay keeps but does not run listed after it."""
    parts = [body.strip() or description]
    if references:
        parts.append("References (read, not run): " + ", ".join(references))
    if unused:
        parts.append("Scripts of the original skill (not run): " + ", ".join(unused))
    return "\n\n".join(parts)


def _context(description: str, body: str) -> str:
    """The description and the body's first paragraph that is not a heading."""
    paragraphs = [p.strip() for p in body.replace("\r\n", "\n").split("\n\n")]
    first = next((p for p in paragraphs if p and not p.startswith(("#", "```"))), "")
    return f"{description}\n\n{first}".strip()[:MAX_CONTEXT]
