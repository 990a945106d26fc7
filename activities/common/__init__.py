"""Primitives shared by every capability, written once and imported everywhere else.

Database lifecycle, stored-payload limits, digests, canonical JSON, hash chains, words and
slugs, error texts.
"""


from activities.common.database import Database, append_only_ddl

__all__ = [
    "Database",
    "append_only_ddl",
]
