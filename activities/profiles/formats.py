"""Which reader profiles a file, by its name: Parquet and Excel when their library imports.

pyarrow and openpyxl are optional: a worker without them gives a profile that says which
library it needs, never an error. Parquet row counts come from the file's footer; only the
first :data:`TYPED_ROWS` rows are read for the column facts, and a profile says so.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from typing import Any, BinaryIO

from activities.profiles.columns import PROFILE_BYTES, SAMPLE_ROWS, Column, Profile, profile_text
from activities.profiles.tables import SCAN_BYTES, table_profile

TYPED_ROWS = 10_000
"""Rows of a Parquet file or an Excel sheet whose values are profiled."""
PARQUET = (".parquet", ".pq")
EXCEL = (".xlsx", ".xlsm")


def profile_of(handle: BinaryIO, name: str, size: int, *, max_bytes: int = PROFILE_BYTES,
               scan_bytes: int = SCAN_BYTES) -> str:
    """The profile text of the file ``name`` open at ``handle`` (seekable, at its start)."""
    lower = name.lower()
    if lower.endswith(PARQUET):
        profile = _parquet(handle, name, size)
    elif lower.endswith(EXCEL):
        profile = _excel(handle, name, size)
    elif lower.endswith(".xls"):
        profile = Profile(name=name, size=size, kind="Excel 97-2003",
                          notes=["not profiled: the old .xls format is not read; save it as "
                                 ".xlsx or CSV"])
    else:
        profile = table_profile(handle, name, size, scan_bytes)
    return profile_text(profile, max_bytes)


def _library(module: str) -> Any | None:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _missing(name: str, size: int, kind: str, library: str) -> Profile:
    return Profile(name=name, size=size, kind=kind,
                   notes=[f"not profiled: reading {kind} needs {library}, which the agents "
                          "worker cannot import"])


def _typed(profile: Profile, names: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Fill ``profile``'s columns and samples from typed rows (at most TYPED_ROWS)."""
    profile.columns = [Column(name=str(n)) for n in names]
    seen = 0
    for row in rows:
        if seen >= TYPED_ROWS:
            break
        seen += 1
        for col, value in zip(profile.columns, row, strict=False):
            col.add_typed(value)
        if len(profile.samples) < SAMPLE_ROWS:
            profile.samples.append(["" if v is None else str(v) for v in row])
    if profile.rows is None or profile.rows > seen:
        profile.notes.append(f"column facts are from the first {seen:,} rows")


def _parquet(handle: BinaryIO, name: str, size: int) -> Profile:
    parquet = _library("pyarrow.parquet")
    if parquet is None:
        return _missing(name, size, "Parquet", "pyarrow")
    try:
        data = parquet.ParquetFile(handle)
        profile = Profile(name=name, size=size, kind="Parquet", rows=data.metadata.num_rows)
        batches = data.iter_batches(batch_size=1000)
        rows = (row for batch in batches for row in zip(*(c.to_pylist() for c in batch.columns),
                                                        strict=True))
        _typed(profile, data.schema_arrow.names, rows)
    except Exception as err:  # a damaged file is a note, never a failure
        return Profile(name=name, size=size, kind="Parquet",
                       notes=[f"not profiled: pyarrow cannot read it ({type(err).__name__})"])
    return profile


def _excel(handle: BinaryIO, name: str, size: int) -> Profile:
    openpyxl = _library("openpyxl")
    if openpyxl is None:
        return _missing(name, size, "Excel", "openpyxl")
    try:
        book = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        sheet = book.worksheets[0]
        rows = sheet.iter_rows(values_only=True)
        header = next(rows, None) or ()
        total = sheet.max_row - 1 if sheet.max_row else None
        profile = Profile(name=name, size=size, kind="Excel", rows=total,
                          rows_exact=total is not None)
        _typed(profile, [h if h is not None else f"(column {i + 1})"
                         for i, h in enumerate(header)], rows)
        if len(book.worksheets) > 1:
            profile.notes.append(f"first of {len(book.worksheets)} sheets "
                                 f"({sheet.title!r}) profiled")
        book.close()
    except Exception as err:  # a damaged file is a note, never a failure
        return Profile(name=name, size=size, kind="Excel",
                       notes=[f"not profiled: openpyxl cannot read it ({type(err).__name__})"])
    return profile
