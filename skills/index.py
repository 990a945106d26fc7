"""Retrieval of skill patterns: dense and BM25 vectors in an in-process Qdrant shard.

A goal or a task's action is matched against the library's patterns (DESIGN §8): several
reformulations of it are searched, each as one hybrid Qdrant query whose dense (static word
embeddings) and sparse (BM25) candidates Qdrant fuses by reciprocal rank. The candidates of
every reformulation are pooled; a pattern's similarity is its best dense cosine to any
reformulation; those under θ are dropped and maximal marginal relevance picks the top k, so
near-duplicate patterns do not crowd out the alternatives.

The shard is a Qdrant Edge shard in a directory: the real engine, in this process, with no
server. The embedding model ships inside the ``wordllama`` wheel and is loaded once per process.
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt
import qdrant_edge as qe

from skills.apply import extension
from workflows.common.words import STOP_WORDS
from workflows.library.patterns import Skill, SkillPattern

DIM = 256
"""Dimensions of the dense vectors (the wordllama model shipped in its wheel)."""
MAX_TEXT = 4000
"""Characters of a query or a pattern's text that are matched; the rest is ignored."""
DENSE = "dense"
SPARSE = "bm25"
CANDIDATES = 50
"""Fused candidates per reformulation (at least twice ``top_k``)."""
RRF_K = 60
"""k of reciprocal rank fusion: 1 / (k + rank)."""
AVG_TOKENS = 40
"""Typical length of a pattern's text in BM25 tokens (its length normalisation)."""
_IDS = uuid.uuid5(uuid.NAMESPACE_URL, "assay:skill-index")
_CONFIG = "edge_config.json"

Vectors = npt.NDArray[np.float32]

_model_lock = threading.Lock()
_model: Any = None


def _load_model() -> Any:
    """The wordllama model of this process, loaded from its wheel on first use.

    Importing wordllama calls ``logging.basicConfig``; the root logger's handlers and level
    are put back so that the process's logging stays its own.
    """
    global _model
    with _model_lock:
        if _model is None:
            root = logging.getLogger()
            handlers, level = list(root.handlers), root.level
            import wordllama

            root.handlers[:] = handlers
            root.setLevel(level)
            _model = wordllama.WordLlama.load(  # pyright: ignore[reportUnknownMemberType]
                cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        return _model


class Embedder:
    """Dense sentence vectors from the static word embeddings shipped with ``wordllama``."""

    dim = DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit-length vectors of ``texts``, one row each; a blank text gives a zero row.

        Raises:
            TypeError: ``texts`` is one string rather than a sequence of them.
        """
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string: wrap it in a list")
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        rows = [i for i, text in enumerate(texts) if text.strip()]
        if rows:
            raw = _load_model().embed([texts[i][:MAX_TEXT] for i in rows], norm=False)
            vecs = np.asarray(raw, dtype=np.float32)
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            out[rows] = np.divide(vecs, norms, out=np.zeros_like(vecs), where=norms > 0)
        return out


# --- the text of a pattern, and of a query ---------------------------------------------------

FILE_KINDS = {
    "csv": "csv table", "tsv": "tsv table", "parquet": "parquet table", "feather": "table",
    "xlsx": "excel spreadsheet table", "xls": "excel spreadsheet table",
    "json": "json records", "jsonl": "json records", "txt": "text document",
    "md": "markdown text document", "pdf": "pdf document", "html": "html page",
    "png": "png image", "jpg": "jpeg image", "jpeg": "jpeg image", "tif": "tiff image",
    "tiff": "tiff image", "npy": "numpy array", "h5": "hdf5 array", "nc": "netcdf array",
}
"""Data-file extensions and the words a goal would use for them."""
_EXT = "(" + "|".join(FILE_KINDS) + ")"
_FILE = re.compile(rf"\b[\w-]+\.{_EXT}\b"  # a file name, or an extension and what it names
                   rf"|\b{_EXT}\b(?:\s+(?:files?|tables?|data|documents?|images?))?",
                   re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_CLAUSE = re.compile(r",\s+(?:and\s+|then\s+)?|\s+(?:and then|then)\s+", re.IGNORECASE)


def _clean(text: str) -> str:
    return " ".join(text[:MAX_TEXT].split())


def skill_text(pattern: SkillPattern) -> str:
    """The text a pattern is matched on: name words, description, context and signature.

    Plain words without labels: every token of a static embedding counts in its mean.
    """
    sig = pattern.signature
    kinds = [FILE_KINDS.get(t.lower(), t) for t in (*sig.input_types, *sig.output_types)]
    parts = [pattern.name.replace("-", " "), pattern.description, pattern.context,
             *sig.keywords, *kinds, *pattern.tags]
    return _clean(" ".join(parts))


def keywords(text: str) -> list[str]:
    """The significant words of ``text``, lower-cased, stop words dropped, in order."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


def _with_file_kinds(text: str) -> str:
    """``text`` with file names and extensions said as data (``sales.csv`` → a csv table)."""
    return _FILE.sub(lambda m: ("a " + FILE_KINDS[m.group(1).lower()]) if m.group(1)
                     else FILE_KINDS[m.group(2).lower()], text)


def reformulate(text: str, n: int, *, data: Sequence[str] = ()) -> list[str]:
    """Up to ``n`` distinct wordings of a goal or action to search, most faithful first.

    The text itself; with data-file types spelled out; its keywords; when ``data`` names the
    files given with it, the text with the kinds of those files said (``Does y depend on x``
    with ``data.csv``: "... in a csv table"), so a short goal is still matched to what works
    on its data; then its sentences and clauses of two keywords or more. Deterministic, no
    model.

    Raises:
        ValueError: ``n`` is below 1.
    """
    if n < 1:
        raise ValueError(f"reformulate needs n >= 1, not {n}")
    base = _clean(text)
    if not base:
        return []
    pieces = [_clean(clause) for sentence in _SENTENCE.split(base)
              for clause in _CLAUSE.split(sentence)]
    pieces = [p.strip(" .;:!?") for p in pieces if len(keywords(p)) >= 2]
    forms = [base, _with_file_kinds(base), " ".join(keywords(_with_file_kinds(base))),
             _with_data(base, data), *(pieces if len(pieces) > 1 else [])]
    out: list[str] = []
    seen: set[str] = set()
    for form in forms:
        key = form.lower()
        if form and key not in seen:
            seen.add(key)
            out.append(form)
    return out[:n]


def _with_data(base: str, data: Sequence[str]) -> str:
    """``base`` followed by the kinds of the data files given with it (empty: none known)."""
    kinds = dict.fromkeys(FILE_KINDS[e] for e in (extension(n) for n in data[:8])
                          if e in FILE_KINDS)
    return f"{base.rstrip(' .?!')} in a {' and a '.join(kinds)}" if kinds else ""


# --- the index --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """A retrieved pattern.

    Attributes:
        skill_id: the pattern's ``name@vN``.
        similarity: its best dense cosine to any of the queries (what θ and MMR use).
        fused: its best reciprocal-rank-fusion score from Qdrant over the queries: the sum of
            ``1 / (RRF_K + rank)`` over the dense and the BM25 rankings it appears in.
    """

    skill_id: str
    similarity: float
    fused: float


def point_id(skill_id: str) -> str:
    """The stable Qdrant point id (a UUID) of a skill id."""
    return str(uuid.uuid5(_IDS, skill_id))


def _config() -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)})


def _open_shard(path: Path) -> qe.EdgeShard:
    try:
        if (path / _CONFIG).exists():
            return qe.EdgeShard.load(str(path), _config())
        shard = qe.EdgeShard.create(str(path), _config())
        shard.update(qe.UpdateOperation.create_field_index("status", qe.PayloadSchemaType.Keyword))
        return shard
    except Exception as err:
        held = "WouldBlock" in str(err)
        hint = ("it is open in another SkillIndex or process; close that one first" if held
                else "remove the directory to rebuild the index from the library")
        raise RuntimeError(f"the skill index at {path} cannot be opened ({err}): {hint}") from err


class SkillIndex:
    """The library's patterns in a Qdrant Edge shard, searchable by goal or action.

    Args:
        path: the shard's directory; created with an empty index when it holds none.
        embedder: dense vectors of texts (the shared wordllama model by default).
    """

    def __init__(self, path: Path, *, embedder: Embedder | None = None) -> None:
        self.path = path
        self.embedder = embedder or Embedder()
        self._bm25 = qe.Bm25(qe.Bm25Config(avg_len=AVG_TOKENS))
        self._shard: qe.EdgeShard | None = _open_shard(path)

    @property
    def shard(self) -> qe.EdgeShard:
        """The open shard.

        Raises:
            RuntimeError: the index was closed.
        """
        if self._shard is None:
            raise RuntimeError(f"the skill index at {self.path} is closed")
        return self._shard

    def close(self) -> None:
        """Flush and close the shard (a second close does nothing)."""
        if self._shard is not None:
            self._shard.flush()
            self._shard.close()
            self._shard = None

    def __enter__(self) -> SkillIndex:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __len__(self) -> int:
        return self.shard.count(qe.CountRequest(exact=True))

    def ids(self) -> set[str]:
        """The skill ids in the index."""
        records, _ = self.shard.scroll(qe.ScrollRequest(limit=len(self) + 1,
                                                        with_payload=["skill_id"]))
        return {str((r.payload or {})["skill_id"]) for r in records}

    def upsert(self, skills: Sequence[Skill]) -> None:
        """Index ``skills``, replacing any earlier point of the same skill id."""
        latest = {skill.skill_id: skill for skill in skills}
        if not latest:
            return
        texts = [skill_text(skill.pattern) for skill in latest.values()]
        dense = self.embedder.embed(texts)
        points = [qe.Point(point_id(sid), {
            DENSE: vector.tolist(), SPARSE: self._bm25.embed_document(text)}, {
                "skill_id": sid, "name": skill.pattern.name, "status": skill.status,
                "kind": skill.pattern.kind})
            for (sid, skill), text, vector in zip(latest.items(), texts, dense, strict=True)]
        self.shard.update(qe.UpdateOperation.upsert_points(points))

    def remove(self, skill_ids: Sequence[str]) -> None:
        """Drop these skills from the index; ids it does not hold are ignored."""
        if skill_ids:
            self.shard.update(qe.UpdateOperation.delete_points([point_id(s) for s in skill_ids]))

    def similarity(self, a: str, b: str) -> float:
        """Dense cosine between two indexed patterns.

        Raises:
            KeyError: either skill is not in the index.
        """
        found = {str((r.payload or {})["skill_id"]): r for r in self.shard.retrieve(
            [point_id(a), point_id(b)], with_payload=["skill_id"], with_vector=[DENSE])}
        missing = [s for s in (a, b) if s not in found]
        if missing:
            raise KeyError(f"skill {missing[0]!r} is not in the skill index at {self.path}")
        va, vb = (_dense(found[s].vector) for s in (a, b))
        return float(np.dot(va, vb))

    def search(self, queries: Sequence[str], *, top_k: int = 20, threshold: float = 0.5,
               mmr_lambda: float = 0.7,
               statuses: Sequence[str] | None = ("active", "trial")) -> list[Hit]:
        """The patterns that fit any of ``queries``, by relevance and diversity.

        Args:
            queries: reformulations of one goal or action (see ``reformulate``).
            top_k: at most this many hits.
            threshold: θ, the least similarity (best dense cosine to a query) of a hit.
            mmr_lambda: λ of maximal marginal relevance; 1 orders by similarity alone.
            statuses: only patterns of these statuses; ``None``: any status.

        Returns:
            Hits in the order MMR selected them; ties go to the smaller skill id.

        Raises:
            ValueError: no non-blank query, or an option out of range.
        """
        texts = [t for t in dict.fromkeys(_clean(q) for q in queries) if t]
        _check(texts, queries, top_k, mmr_lambda, statuses)
        asked = self.embedder.embed(texts)
        pool = self._candidates(texts, asked, max(CANDIDATES, 2 * top_k), statuses)
        if not pool:
            return []
        ids = sorted(pool)
        vectors = np.stack([pool[s][0] for s in ids])
        sims = (asked @ vectors.T).max(axis=0)
        keep = [int(i) for i in np.flatnonzero(sims >= threshold)]
        chosen = [keep[i] for i in _mmr(sims[keep], vectors[keep], top_k, mmr_lambda)]
        return [Hit(ids[i], round(float(sims[i]), 6), pool[ids[i]][1]) for i in chosen]

    def _candidates(self, texts: list[str], dense: Vectors, limit: int,
                    statuses: Sequence[str] | None) -> dict[str, tuple[Vectors, float]]:
        """Each candidate's dense vector and best fused score, over one batch of hybrid queries.

        The status filter is given once, on the fusion: Qdrant applies it to both prefetches.
        """
        where = (None if statuses is None else qe.Filter(must=[qe.FieldCondition(
            key="status", match=qe.MatchAny(list(statuses)))]))
        requests = [qe.QueryRequest(
            # the stub types Fusion.Rrf as a class nested in Fusion rather than a Fusion
            limit=limit, query=qe.Fusion.Rrf(k=RRF_K),  # pyright: ignore[reportArgumentType]
            filter=where,
            with_payload=["skill_id"], with_vector=[DENSE], prefetches=[
                qe.Prefetch(limit=limit, query=qe.Query.Nearest(vector.tolist(), using=DENSE)),
                qe.Prefetch(limit=limit, query=qe.Query.Nearest(
                    self._bm25.embed_query(text), using=SPARSE))])
            for text, vector in zip(texts, dense, strict=True)]
        pool: dict[str, tuple[Vectors, float]] = {}
        for result in self.shard.query_batch(qe.QueryBatchRequest(requests)):
            for point in result:
                sid = str((point.payload or {})["skill_id"])
                best = max(point.score, pool[sid][1]) if sid in pool else point.score
                pool[sid] = (_dense(point.vector), best)
        return pool


def _dense(vector: Any) -> Vectors:
    """The dense part of a point's returned vectors."""
    return np.asarray(vector[DENSE], dtype=np.float32)


def _check(texts: list[str], queries: Sequence[str], top_k: int, mmr_lambda: float,
           statuses: Sequence[str] | None) -> None:
    if isinstance(queries, str):
        raise ValueError("search takes a list of queries, not one string: wrap it in a list")
    if not texts:
        raise ValueError(f"search needs at least one non-blank query, got {list(queries)[:4]!r}")
    if top_k < 1:
        raise ValueError(f"top_k must be 1 or more, not {top_k}")
    if not 0.0 <= mmr_lambda <= 1.0:
        raise ValueError(f"mmr_lambda must be between 0 and 1, not {mmr_lambda}")
    if statuses is not None and (isinstance(statuses, str) or not statuses):
        raise ValueError(f"statuses must be a non-empty list of statuses or None, "
                         f"not {statuses!r}")


def _mmr(sims: npt.NDArray[np.float32], vectors: Vectors, top_k: int,
         lam: float) -> list[int]:
    """Indices picked by MMR: λ·sim - (1-λ)·(max cosine to those picked), first index on ties."""
    chosen: list[int] = []
    if not len(sims):
        return chosen
    penalty = np.zeros(len(sims), dtype=np.float32)
    left = np.ones(len(sims), dtype=bool)
    for _ in range(min(top_k, len(sims))):
        score = np.where(left, lam * sims - (1.0 - lam) * penalty, -np.inf)
        best = int(np.argmax(score))
        chosen.append(best)
        left[best] = False
        penalty = np.maximum(penalty, vectors @ vectors[best])
    return chosen
