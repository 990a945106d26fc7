"""Tiny wheels built in the test, so environments are provisioned with no network."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def make_wheel(wheelhouse: Path, name: str, version: str, *, requires: tuple[str, ...] = (),
               module: str | None = None, code: str = "",
               extra: dict[str, bytes] | None = None) -> Path:
    """A pure-Python wheel of ``name`` holding ``<module>.py`` (default: the name).

    ``extra`` adds files by their path inside the wheel.
    """
    module = module or name.replace("-", "_")
    dist = f"{name.replace('-', '_')}-{version}"
    files: dict[str, bytes] = {
        **(extra or {}),
        f"{module}.py": (code or f"VALUE = {name!r} + ' ' + {version!r}\n").encode(),
        f"{dist}.dist-info/METADATA": "\n".join(
            ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
             *(f"Requires-Dist: {r}" for r in requires), ""]).encode(),
        f"{dist}.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: assay-tests\n"
                                   b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [_record_line(n, d) for n, d in files.items()] + [f"{dist}.dist-info/RECORD,,"]
    files[f"{dist}.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    wheelhouse.mkdir(parents=True, exist_ok=True)
    path = wheelhouse / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


def tiny_wheelhouse(root: Path) -> Path:
    """alpha 1.0 (needs beta>=2), beta 1.0 and 2.0, gamma 1.0 (needs beta<2)."""
    house = root / "wheelhouse"
    make_wheel(house, "alpha", "1.0", requires=("beta>=2",))
    make_wheel(house, "beta", "1.0")
    make_wheel(house, "beta", "2.0")
    make_wheel(house, "gamma", "1.0", requires=("beta<2",))
    return house
