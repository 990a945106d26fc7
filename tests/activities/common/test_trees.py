"""The one walk of trees someone else made: bounded, iterative, never through a link."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.common.trees import TreeLimitError, remove_tree, walk
from tests.support.disks import nest


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "b" / "c").mkdir(parents=True)
    (root / "a.txt").write_text("a")
    (root / "b" / "c" / "d.txt").write_text("d")
    (root / "b2").mkdir()
    (root / "b2" / "e.txt").write_text("e")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    (root / "link").symlink_to(tmp_path / "outside")
    return root


def test_a_walk_lists_in_name_order_depth_or_breadth_first_and_never_enters_a_link(
        tree: Path) -> None:
    assert [f.rel for f in walk(tree)] == [
        "a.txt", "b", "b2", "link", "b/c", "b/c/d.txt", "b2/e.txt"]
    assert [f.rel for f in walk(tree, breadth_first=True)] == [
        "a.txt", "b", "b2", "link", "b/c", "b2/e.txt", "b/c/d.txt"]
    assert [f.rel for f in walk(tree, prune=lambda f: f.rel == "b")] == [
        "a.txt", "b", "b2", "link", "b2/e.txt"]


def test_a_walk_refuses_past_its_depth_and_its_budget(tree: Path) -> None:
    with pytest.raises(TreeLimitError, match="nested more than 1 directories deep") as deep:
        list(walk(tree, max_depth=1))
    assert deep.value.kind == "depth"
    with pytest.raises(TreeLimitError, match="more than 3 files and directories") as many:
        list(walk(tree, max_entries=3))
    assert many.value.kind == "entries"


def test_a_tree_deeper_than_a_path_can_name_is_refused_and_removed(tmp_path: Path) -> None:
    root = tmp_path / "deep"
    root.mkdir()
    nest(root, 500, name="d" * 20)  # 10,500 bytes of path: no path-based call reaches the end
    with pytest.raises(TreeLimitError) as refused:
        list(walk(root, max_depth=10_000))
    assert refused.value.kind == "depth" and "deeper than a path can name" in str(refused.value)
    remove_tree(root)
    assert not root.exists()


def test_removal_leaves_what_a_link_points_to(tree: Path, tmp_path: Path) -> None:
    remove_tree(tree)
    assert not tree.exists() and (tmp_path / "outside" / "secret.txt").exists()
    remove_tree(tree)  # already gone: nothing to do

