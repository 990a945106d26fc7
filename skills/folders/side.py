"""The side file ``assay.json``: Assay's own data, kept out of ``SKILL.md``.

An exported folder's ``SKILL.md`` holds only the Agent Skills fields and the readable body;
the pattern (without what the folder already says: name, description, licence, the job's
code, the referenced files), its metrics, status, origin and confidence go in ``assay.json``.
A folder written by anyone may carry a side file with only ``run``, which is how a script
becomes a runnable job::

    {"run": {"script": "scripts/fit.py", "args": {"data": "table.csv"},
             "requirements": ["numpy"], "network": false}}

Without that declaration a folder's scripts are kept as files, never run: most scripts of
public skills are command-line tools that need arguments, keys or the network.
"""

from __future__ import annotations

import json
from typing import Any, cast

from pydantic import ValidationError

from skills.folders.errors import Problem
from skills.folders.limits import MAX_SIDE_FILE, SCRIPTS, SIDE_FILE, plain_name
from skills.folders.scan import Source, read_text
from workflows.contracts.patterns import Skill
from workflows.contracts.plan import JobSpec

FORMAT = 1
"""The side file's format; a newer one is refused with a message saying so."""
KEPT_BODY = "kept"
"""``body`` of a side file whose ``SKILL.md`` body is an imported one, kept as written."""
_RUN_KEYS = {"script", "args", "requirements", "network"}


def read_side(src: Source) -> dict[str, Any] | None:
    """The folder's side file as a JSON object, or ``None`` if it has none.

    Raises:
        Problem: the side file is not UTF-8 JSON holding an object, or is of a newer format.
    """
    if SIDE_FILE not in src.files:
        return None
    where = src.folder / SIDE_FILE
    try:
        value: object = json.loads(read_text(where, MAX_SIDE_FILE))
    except Problem as err:
        raise Problem(f"{where}: {err}") from err
    except (ValueError, RecursionError) as err:
        raise Problem(f"{where}: is not valid JSON ({err})") from err
    if not isinstance(value, dict):
        raise Problem(f"{where}: must hold a JSON object")
    data = cast("dict[str, Any]", value)
    if data.get("format", FORMAT) != FORMAT:
        raise Problem(f"{where}: format {data.get('format')!r} is newer than this version of "
                      f"Assay reads ({FORMAT}); upgrade Assay")
    return data


def side_bytes(skill: Skill, parts: dict[str, Any]) -> bytes:
    """The side file of an exported skill: ``parts`` (the trimmed pattern…) and its state."""
    data = {"format": FORMAT, "status": skill.status, "origin": skill.origin,
            "confidence": skill.confidence, "metrics": skill.metrics.model_dump(mode="json"),
            **parts}
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode()


def declared_job(src: Source, run: object) -> tuple[JobSpec, str]:
    """The job a side file's ``run`` declares, and the script's text.

    Raises:
        Problem: the declaration is malformed, names a missing script, or asks for network.
    """
    where = src.folder / SIDE_FILE
    if not isinstance(run, dict) or not set(cast("dict[str, Any]", run)) <= _RUN_KEYS:
        raise Problem(f"{where}: `run` must be an object with {', '.join(sorted(_RUN_KEYS))}")
    declared = cast("dict[str, Any]", run)
    script: object = declared.get("script")
    name = script.removeprefix(f"{SCRIPTS}/") if isinstance(script, str) else ""
    if not (isinstance(script, str) and script.startswith(f"{SCRIPTS}/") and plain_name(name)
            and name.endswith(".py")):
        raise Problem(f"{where}: run.script {script!r} must name a Python file directly under "
                      f"{SCRIPTS}/, e.g. {SCRIPTS}/fit.py")
    if declared.get("network", False) is not False:
        raise Problem(f"{where}: run.network must be false: jobs run without network; keep "
                      "the script as a file by removing `run`")
    source = src.script(name)
    try:
        job = JobSpec(code=source, source=source, filename=name,
                      args=declared.get("args") or {},
                      requirements=declared.get("requirements") or [])
    except ValidationError as err:
        raise Problem(f"{where}: run: {' '.join(str(err).split())[:400]}") from err
    return job, source
