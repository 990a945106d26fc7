"""``assay skills search``: the skills a run would retrieve for a goal, and the candidates.

The search is the one a run makes (``SkillIndex.search``) over an index kept between
commands in the data directory, one per database: a search brings it up to date with the rows
changed since the last one (``SkillStore.changes_since``) and reads only the rows of its hits,
so once the library is indexed a search costs the query, not the library. An index held by
another command at the same moment is not waited for: this one indexes into a temporary
directory. Registered on ``skills_app`` by :mod:`workers.cli.skills`.
"""

from __future__ import annotations

import asyncio
import hashlib
import tempfile
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workers.cli.common import EXIT_BAD_INPUT, fail, print_table
from workers.cli.skills import IN_USE, STATUSES, skills_app, with_store
from workers.settings import Settings
from workflows.contracts.policy import SkillPolicy
from workflows.library.formulas import match_confidence

if TYPE_CHECKING:
    from skills.index import Hit, SkillIndex
    from skills.store import SkillStore
    from workflows.contracts.patterns import Skill

INDEX_FORMAT = "bm25f-1"
"""Part of the kept index's directory name: a new format starts a new index."""
_REVISION = "revision"
CANDIDATE_NOTE = ("candidate: found, but no run applies it until a person approves it "
                  "(assay skills approve ID)")


@skills_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="A goal or task, in words.")],
    k: Annotated[int, typer.Option("--k", min=1, max=100, help="At most this many.")] = 5,
    threshold: Annotated[float, typer.Option(min=0, max=1, help="Minimum similarity.")]
    = SkillPolicy().threshold,
    all_statuses: Annotated[bool, typer.Option(
        "--all-statuses", help="Also retired skills (by default the active and trial ones a "
        "run would apply and the candidates waiting for approval).")] = False,
) -> None:
    """Find the skills a run would retrieve for a goal or task, best score first.

    The score fuses the ranks of each skill by words (its name and description weigh most)
    and by meaning; similarity is the meaning alone, which θ (--threshold) bounds.
    Candidates are listed and marked: a run applies them only once approved.
    """
    if not query.strip():
        fail("the query is empty: give a goal or task in words", EXIT_BAD_INPUT)
    statuses = STATUSES if all_statuses else IN_USE
    root = Settings().root

    async def find(store: SkillStore) -> list[tuple[Hit, Skill]]:
        return await searched(store, index_dir(root, store), query, k, threshold, statuses)

    found = with_store(find)
    if not found:
        typer.echo("no skills match" + ("" if all_statuses else
                                        " (--all-statuses also searches retired skills)"))
        return
    now = datetime.now(UTC)
    rows = [[hit.skill_id, skill.status, f"{hit.fused:.4f}", f"{hit.similarity:.2f}",
             f"{_confidence(skill, hit.similarity, now):.2f}",
             skill.pattern.description[:60]] for hit, skill in found]
    print_table(["id", "status", "score", "similarity", "confidence", "description"], rows)
    if any(skill.status == "candidate" for _, skill in found):
        typer.echo(CANDIDATE_NOTE)


def index_dir(root: Path, store: SkillStore) -> Path:
    """Where the index of ``store``'s database is kept between commands, under ``root``."""
    url = store.engine.url.render_as_string(hide_password=True)
    key = hashlib.sha256(url.encode()).hexdigest()[:16]
    return root / "skill-index" / f"{INDEX_FORMAT}-{key}"


async def searched(store: SkillStore, where: Path, query: str, k: int, threshold: float,
                   statuses: Sequence[str]) -> list[tuple[Hit, Skill]]:
    """The hits of ``query`` in the kept index at ``where``, updated first, with their rows."""
    from skills.index import load_model, reformulate
    from skills.store import SkillNotFound, SkillUnreadable

    model = asyncio.create_task(asyncio.to_thread(load_model))  # while the rows are read
    with kept_index(where) as (index, revision_file):
        await synced(store, index, revision_file)
        await model
        hits = index.search(reformulate(query, SkillPolicy().queries), top_k=k,
                            threshold=threshold, statuses=statuses)
    out: list[tuple[Hit, Skill]] = []
    for hit in hits:
        try:
            skill = await store.get(hit.skill_id)
        except (SkillNotFound, SkillUnreadable):  # gone or broken since the index saw it
            continue
        if skill.status in statuses:
            out.append((hit, skill))
    return out


@contextmanager
def kept_index(where: Path) -> Generator[tuple[SkillIndex, Path]]:
    """The index kept at ``where`` and its revision file, or a temporary one if it is busy."""
    from skills.index import SkillIndex

    where.mkdir(parents=True, exist_ok=True)
    try:
        index = SkillIndex(where / "shard")
    except RuntimeError:  # another command holds it: index into a directory of our own
        with tempfile.TemporaryDirectory(prefix="assay-skill-search-") as tmp, \
                SkillIndex(Path(tmp) / "shard") as fresh:
            yield fresh, Path(tmp) / _REVISION
        return
    with index:
        yield index, where / _REVISION


async def synced(store: SkillStore, index: SkillIndex, revision_file: Path) -> None:
    """Apply to ``index`` every row changed since the revision in ``revision_file``.

    An empty index (its directory removed, say) is rebuilt from every row.
    """
    try:
        revision = int(revision_file.read_text()) if len(index) else 0  # an emptied index
    except (OSError, ValueError):
        revision = 0
    latest, changed = await store.changes_since(revision)
    if changed:
        index.upsert(changed)  # every status: the search filters them
    if latest != revision:
        revision_file.write_text(str(latest))


def _confidence(skill: Skill, similarity: float, now: datetime) -> float:
    """The confidence a run would give this match, its preconditions taken as holding."""
    return match_confidence(similarity, 1.0, skill.metrics, now, prior=skill.confidence)
