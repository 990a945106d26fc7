"""A study's end concludes the hypotheses its cycles left undecided.

A hypothesis takes its verdict from its own test whenever that test ran: a child's support
does not prove its parent (a gain of boosted trees over a logistic model says nothing of
whether either reaches an AUC of 0.75). So when a study ends, however it ends (its rules, a
person, a failure, a cancel):

- a hypothesis its own test decided (**supported** or **refuted**) keeps that verdict,
  whatever its children say (a refuted parent stays refuted);
- one its own test left **inconclusive** stays inconclusive, with its own evidence: its
  children's verdicts are theirs;
- only a hypothesis whose own test never ran (still **open**) and that has children is
  concluded from them, deepest first, so a concluded child counts for its parent. A child
  is proposed as a refinement of its parent's claim, and nothing else speaks for the parent:
  **supported** when at least one child is supported, **refuted** when every child is
  refuted, **inconclusive** otherwise. ``concluded`` says so: "its own test never ran; from
  its children (H1a refuted, H1b supported): a child is supported";
- a root with no children that is still open ends **inconclusive** (the study ended before
  its test was decided), so the study's question always gets an answer; other childless
  hypotheses keep their status.

A concluded hypothesis takes its children's evidence (at most :data:`MAX_EVIDENCE`) and the
study's last cycle as ``decided_in``. Studies begun before the ``own-test-verdicts`` patch
(``workflows.patches``) conclude as they did: every open or inconclusive parent from its
children (``own_tests=False``). Pure and deterministic: the study workflow applies it to the
state it reports at its end.
"""

from __future__ import annotations

from workflows.contracts.hypotheses import (
    CONCLUDED_CHARS,
    DECIDED,
    MAX_EVIDENCE,
    Hypothesis,
    HypothesisStatus,
    HypothesisTree,
)
from workflows.contracts.plaintext import clip

UNTESTED = "its own test never ran; "
"""How the account of a hypothesis concluded from its children begins (its test never ran)."""


def concluded(tree: HypothesisTree, cycle: int, *, own_tests: bool = True) -> HypothesisTree:
    """``tree`` with its untested parents (and childless open roots) concluded at ``cycle``.

    A study that ran no cycle (``cycle`` 0) has nothing to conclude from.

    Args:
        tree: the study's tree as its last cycle left it.
        cycle: the study's last cycle.
        own_tests: a hypothesis its own test left inconclusive keeps its verdict (False:
            the rule of studies begun before the ``own-test-verdicts`` patch, which
            concluded it from its children too).
    """
    if cycle < 1:
        return tree
    by_id = {h.id: h for h in tree.hypotheses}
    for hid in _deepest_first(tree):
        h = by_id[hid]
        if h.status in DECIDED or (own_tests and h.status == "inconclusive"):
            continue
        children = [by_id[c.id] for c in tree.children(hid)]
        if children:
            by_id[hid] = _from_children(h, children, cycle, untested=own_tests)
        elif h.parent is None and h.status == "open":
            by_id[hid] = h.model_copy(update={
                "status": "inconclusive", "decided_in": cycle,
                "concluded": "the study ended before its test was decided"})
    return HypothesisTree(hypotheses=[by_id[h.id] for h in tree.hypotheses])


def _from_children(h: Hypothesis, children: list[Hypothesis], cycle: int, *,
                   untested: bool) -> Hypothesis:
    """``h`` concluded from ``children``; ``untested``: its account says its test never ran."""
    status: HypothesisStatus
    if any(c.status == "supported" for c in children):
        status, why = "supported", [c for c in children if c.status == "supported"]
        rule = "a child is supported"
    elif all(c.status == "refuted" for c in children):
        status, why, rule = "refuted", children, "every child is refuted"
    else:
        status, why = "inconclusive", children
        rule = "no child is supported and not every child is refuted"
    said = ", ".join(f"{c.id} {c.status}" for c in children)
    evidence = [e for c in why for e in c.evidence][-MAX_EVIDENCE:]
    return h.model_copy(update={
        "status": status, "decided_in": cycle, "evidence": evidence or h.evidence,
        "concluded": clip(f"{UNTESTED if untested else ''}from its children ({said}): {rule}",
                          CONCLUDED_CHARS)})


def _deepest_first(tree: HypothesisTree) -> list[str]:
    """Every hypothesis id, children before their parents (tree order among equals)."""
    parent = {h.id: h.parent for h in tree.hypotheses}

    def depth(hid: str) -> int:
        n, node = 0, parent.get(hid)
        while node is not None and node in parent:
            n, node = n + 1, parent[node]
        return n

    return sorted(parent, key=lambda hid: -depth(hid))
