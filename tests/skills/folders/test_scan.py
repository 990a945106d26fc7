"""Scanning a folder: file counts, sizes and symbolic links refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.common.trees import MAX_DEPTH, remove_tree
from skills.folders import SkillFileError, import_skills
from skills.folders.limits import MAX_FILE, MAX_FILES, MAX_FOLDER
from tests.skills.folders.samples import problems_of, simple, write_folder
from tests.support.disks import nest


def test_import_refuses_too_many_files(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"assets/{i:04}.txt": "x" for i in range(MAX_FILES)}
    folder = write_folder(tmp_path, "alpha", simple("alpha"), files)
    assert problems_of(tmp_path) == [f"{folder}: holds {MAX_FILES + 1} files; at most "
                                     f"{MAX_FILES} are allowed"]
    for i in range(MAX_FILES, 2 * MAX_FILES):
        (folder / "assets" / f"{i:04}.txt").write_text("x")
    assert f"more than {2 * MAX_FILES} files and folders" in problems_of(tmp_path)[0]


def test_import_refuses_big_files_and_folders(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, "alpha", simple("alpha"))
    (folder / "assets").mkdir()
    with (folder / "assets" / "big.bin").open("wb") as handle:
        handle.truncate(MAX_FILE + 1)  # sparse: sizes are checked before anything is read
    assert problems_of(tmp_path) == [f"{folder / 'assets' / 'big.bin'}: {MAX_FILE + 1} bytes; "
                                     f"each file may hold at most {MAX_FILE} bytes"]
    (folder / "assets" / "big.bin").unlink()
    count = MAX_FOLDER // MAX_FILE + 1
    for i in range(count):
        with (folder / "assets" / f"{i}.bin").open("wb") as handle:
            handle.truncate(MAX_FILE)
    assert problems_of(tmp_path) == [f"{folder}: holds {count * MAX_FILE + len(simple('alpha'))}"
                                     f" bytes; at most {MAX_FOLDER}"]


def test_import_refuses_symbolic_links(tmp_path: Path) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("print('secret')\n")
    root = tmp_path / "skills"
    folder = write_folder(root, "alpha", simple("alpha"))
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.py").symlink_to(outside)
    assert problems_of(root) == [f"{folder / 'scripts' / 'run.py'}: is a symbolic link; links "
                                 "are refused, copy the file"]
    (folder / "scripts" / "run.py").unlink()
    (root / "linked").symlink_to(folder)
    assert problems_of(root) == [f"{root / 'linked'}: is a symbolic link; copy the folder in "
                                 "instead"]
    with pytest.raises(SkillFileError, match="is a symbolic link"):
        import_skills(root / "linked")


def test_import_refuses_a_folder_nested_deeper_than_a_path_can_name(tmp_path: Path) -> None:
    folder = write_folder(tmp_path, "alpha", simple("alpha"))
    nest(folder, 400, "dddddddddd")  # 400 levels of 10 letters: more than a path's 4,096 bytes
    try:
        assert problems_of(tmp_path) == [f"{folder}: folders nested more than {MAX_DEPTH} "
                                         "deep; a skill folder holds a few flat folders"]
    finally:
        remove_tree(folder)  # pytest's own clean-up would recurse
