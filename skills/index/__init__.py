"""Skill retrieval: the patterns' vectors and the hybrid search over them.

``embed`` turns text into dense vectors (the wordllama model shipped in its wheel); ``text``
says what is matched (a pattern's text, a goal's reformulations); ``lexical`` makes the BM25
vectors of a pattern's fields (name and description weigh most) and of a query; ``search``
holds ``SkillIndex``, the library's patterns in an ``activities.vectors`` index (a Qdrant Edge
shard of this process, or a Qdrant server's collection shared by every worker), searched by
dense and BM25 rankings fused by weighted reciprocal rank, then θ and maximal marginal
relevance.
"""

from skills.index.embed import DIM, MAX_TEXT, Embedder, Vectors, load_model
from skills.index.search import (
    CANDIDATES,
    COLLECTION,
    DENSE,
    LAYOUT,
    LEXICAL_TOP,
    RRF_K,
    SPARSE,
    WEIGHTS,
    Hit,
    SkillIndex,
    point_id,
)
from skills.index.text import FILE_KINDS, clean, keywords, reformulate, skill_text

__all__ = [
    "CANDIDATES",
    "COLLECTION",
    "DENSE",
    "DIM",
    "FILE_KINDS",
    "LAYOUT",
    "LEXICAL_TOP",
    "MAX_TEXT",
    "RRF_K",
    "SPARSE",
    "WEIGHTS",
    "Embedder",
    "Hit",
    "SkillIndex",
    "Vectors",
    "clean",
    "keywords",
    "load_model",
    "point_id",
    "reformulate",
    "skill_text",
]
