"""A study's end concludes the hypotheses its cycles left undecided, from their children.

When a study ends, however it ends (its rules, a person, a failure, a cancel), every
hypothesis that is still open or inconclusive and has children gets a verdict from its
children's, deepest first, so a concluded child counts for its parent:

- **supported** when at least one child is supported (a refinement of the claim holds);
- **refuted** when every child is refuted (no refinement of it holds);
- **inconclusive** otherwise (no child supported, at least one still open or inconclusive).

A root with no children that is still open ends **inconclusive** (the study ended before its
test was decided), so the study's question always gets an answer; other childless
hypotheses keep their status. A concluded hypothesis is marked as such (``concluded`` says
from which children), takes their evidence (at most :data:`MAX_EVIDENCE`) and the study's
last cycle as ``decided_in``. Pure and deterministic: the study workflow applies it to the
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


def concluded(tree: HypothesisTree, cycle: int) -> HypothesisTree:
    """``tree`` with its undecided parents (and childless open roots) concluded at ``cycle``.

    A study that ran no cycle (``cycle`` 0) has nothing to conclude from.
    """
    if cycle < 1:
        return tree
    by_id = {h.id: h for h in tree.hypotheses}
    for hid in _deepest_first(tree):
        h = by_id[hid]
        if h.status in DECIDED:
            continue
        children = [by_id[c.id] for c in tree.children(hid)]
        if children:
            by_id[hid] = _from_children(h, children, cycle)
        elif h.parent is None and h.status == "open":
            by_id[hid] = h.model_copy(update={
                "status": "inconclusive", "decided_in": cycle,
                "concluded": "the study ended before its test was decided"})
    return HypothesisTree(hypotheses=[by_id[h.id] for h in tree.hypotheses])


def _from_children(h: Hypothesis, children: list[Hypothesis], cycle: int) -> Hypothesis:
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
        "concluded": clip(f"from its children ({said}): {rule}", CONCLUDED_CHARS)})


def _deepest_first(tree: HypothesisTree) -> list[str]:
    """Every hypothesis id, children before their parents (tree order among equals)."""
    parent = {h.id: h.parent for h in tree.hypotheses}

    def depth(hid: str) -> int:
        n, node = 0, parent.get(hid)
        while node is not None and node in parent:
            n, node = n + 1, parent[node]
        return n

    return sorted(parent, key=lambda hid: -depth(hid))
