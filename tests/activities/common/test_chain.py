"""Hash chains: each entry carries its predecessor's digest, and a walk finds any break.

The two ledgers built on them are checked against what earlier releases wrote in
tests/activities/reports/test_ledger.py and tests/activities/memory/store/test_ledger.py.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from activities.common.chain import GENESIS, ChainWalk, chain, link, sha256_hex


def compact(entry: Mapping[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"))


def test_a_link_hashes_the_entry_with_the_digest_it_follows() -> None:
    linked = link({"n": 1}, GENESIS, compact)
    assert linked.text == '{"n":1,"prev":"' + "0" * 64 + '"}'
    assert linked.digest == hashlib.sha256(linked.text.encode()).hexdigest()
    assert linked.prev == GENESIS
    assert sha256_hex("é") == hashlib.sha256("é".encode()).hexdigest()


def test_each_entry_carries_the_digest_of_the_one_before() -> None:
    links = chain([{"n": 1}, {"n": 2}, {"n": 3}], "f" * 64, compact)
    assert [linked.prev for linked in links] == ["f" * 64, links[0].digest, links[1].digest]
    assert [json.loads(linked.text)["prev"] for linked in links] == [
        linked.prev for linked in links]
    assert chain([], GENESIS, compact) == []


def test_a_walk_accepts_the_chain_and_counts_it() -> None:
    walk = ChainWalk()
    assert all(walk.follows(linked.prev, linked.digest)
               for linked in chain([{"n": n} for n in range(5)], GENESIS, compact))
    assert walk.count == 5


def test_a_walk_finds_a_removed_or_reordered_entry() -> None:
    first, second, third = chain([{"n": 1}, {"n": 2}, {"n": 3}], GENESIS, compact)
    walk = ChainWalk()
    assert walk.follows(first.prev, first.digest)
    assert not walk.follows(third.prev, third.digest), "the second entry is missing"
    reordered = ChainWalk()
    assert not reordered.follows(second.prev, second.digest)
