"""Scanning a folder: file counts, sizes and symbolic links refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills.folders import SkillFileError, import_skills
from skills.folders.limits import MAX_FILES
from tests.skills.folders.samples import problems_of, simple, write_folder


def test_import_refuses_too_many_files(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"assets/{i:03}.txt": "x" for i in range(MAX_FILES)}
    folder = write_folder(tmp_path, "alpha", simple("alpha"), files)
    assert problems_of(tmp_path) == [f"{folder}: holds 65 files; at most 64 are allowed"]
    for i in range(MAX_FILES, 2 * MAX_FILES):
        (folder / "assets" / f"{i:03}.txt").write_text("x")
    assert "more than 128 files and folders" in problems_of(tmp_path)[0]


def test_import_refuses_big_files_and_folders(tmp_path: Path) -> None:
    big = b"x" * (1024 * 1024 + 1)
    folder = write_folder(tmp_path, "alpha", simple("alpha"), {"assets/big.bin": big})
    assert problems_of(tmp_path) == [f"{folder / 'assets' / 'big.bin'}: 1048577 bytes; each "
                                     "file may hold at most 1048576 bytes"]
    (folder / "assets" / "big.bin").unlink()
    for i in range(5):
        (folder / "assets" / f"{i}.bin").write_bytes(b"x" * 900_000)
    assert problems_of(tmp_path) == [f"{folder}: holds {4_500_000 + len(simple('alpha'))} bytes;"
                                     " at most 4194304"]


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
