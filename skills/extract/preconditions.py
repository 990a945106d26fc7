"""Preconditions, postconditions and signature: what every (or any) success had in common.

A pattern applies where its successes ran: the third-party modules the job imports, the types
of data file it was given, the words most of its actions share. Its postconditions are the
checks every success passed.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter

from skills.extract.cases import Case, Group, without_data_names
from workflows.contracts.plan import Check, JobSpec
from workflows.contracts.words import TASK_TYPE_STOP_WORDS

_TOKEN = re.compile(r"[a-z][a-z0-9]+")


def job_imports(source: str) -> list[str] | str:
    """Top-level modules the source imports, outside the standard library; or why not."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"does not parse (line {exc.lineno}: {exc.msg})"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"does not parse ({type(exc).__name__}: {str(exc)[:200]})"
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if n not in sys.stdlib_module_names and n != "__future__")


def extension(name: str) -> str:
    """A file name's extension, lowercased (``""`` for none, or a name that is all dots)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""


def input_types(ok: list[Case], *, every: bool = False) -> list[str]:
    """Extensions of the successes' data inputs: of any (signature) or of every success."""
    sets = [{e for n in c.outcome.input_names if (e := extension(n))} for c in ok]
    found = sets[0].intersection(*sets[1:]) if every else sets[0].union(*sets[1:])
    return sorted(found)[:16]


def output_types(job: JobSpec) -> list[str]:
    """The extensions of the job's artifacts and the names of its metrics."""
    extensions = {e for a in job.expected_artifacts if (e := extension(a))}
    return sorted(extensions | set(job.expected_metrics))[:32]


def keywords(group: Group) -> list[str]:
    """Significant words in more than half of the group's actions, most frequent first."""
    actions = [without_data_names(c.outcome.action, c.outcome.input_names)
               for c in group.ok + group.bad]
    counts: Counter[str] = Counter()
    for action in actions:
        counts.update({w for w in _TOKEN.findall(action.lower())
                       if w not in TASK_TYPE_STOP_WORDS})
    common = [w for w, n in counts.items() if 2 * n > len(actions)]
    return sorted(common, key=lambda w: (-counts[w], w))[:32]


def common_checks(ok: list[Case]) -> list[Check]:
    """The checks every success had (its postconditions)."""
    keyed = [{c.model_dump_json(): c for c in case.outcome.checks} for case in ok]
    common = set(keyed[0]).intersection(*keyed[1:])
    return [keyed[0][k] for k in sorted(common)][:32]
