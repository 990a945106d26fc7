"""Data profiles of small files written here: what they say, and that they stay bounded."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from activities.artifacts.store import LocalArtifactStore
from activities.profiles.formats import profile_of
from activities.profiles.stored import DataProfiles
from activities.profiles.tables import LINE_BYTES


def profile(data: bytes, name: str = "data.csv", **bounds: int) -> str:
    return profile_of(io.BytesIO(data), name, len(data), **bounds)


def test_csv_with_missing_values_gives_rows_types_missing_and_ranges() -> None:
    data = (b"id,age,city,score\n1,34,Oslo,0.5\n2,,Bergen,NA\n3,51,Oslo,1.25\n"
            b"4,29,,2\n")
    text = profile(data)
    assert "data.csv: CSV, 68 bytes" in text
    assert "rows: 4 (header not counted); columns: 4" in text
    assert "- id | integer | 0 | 1 to 4" in text
    assert "- age | integer | 1 | 29 to 51" in text
    assert '- city | text | 1 | top "Oslo": 2, "Bergen": 1 (2 distinct)' in text
    assert "- score | number | 1 | 0.5 to 2" in text
    assert "first 3 rows:\n1 | 34 | Oslo | 0.5\n2 |  | Bergen | NA" in text
    assert text == profile(data)


def test_tsv_delimiter_is_sniffed() -> None:
    text = profile(b"name\tvalue\nx\t1.5\ny\t-2\n", "table.txt")
    assert "table.txt: TSV" in text
    assert "- value | number | 0 | -2 to 1.5" in text


def test_header_only_file_says_it_has_no_rows() -> None:
    text = profile(b"a,b,c\n")
    assert "rows: 0 (header not counted); columns: 3" in text
    assert "- b | empty | 0 | -" in text
    assert "note: the file has a header and no rows" in text


def test_huge_row_is_cut_and_the_profile_stays_bounded() -> None:
    wide = b",".join(b"%d" % i for i in range(200_000))
    data = b"a,b\n" + wide + b"\n1,2\n"
    text = profile(data, max_bytes=1000)
    assert len(text.encode()) <= 1000
    assert "rows: 2 (header not counted)" in text
    assert f"1 lines longer than {LINE_BYTES:,} bytes were cut" in text


def test_profile_over_its_bound_says_what_it_cut() -> None:
    header = ",".join(f"column_{i}" for i in range(40)).encode()
    text = profile(header + b"\n" + b",".join([b"1"] * 40) + b"\n", max_bytes=600)
    assert len(text.encode()) <= 600
    assert "lines left out to stay within 600 bytes]" in text


def test_past_the_scan_bound_rows_are_counted_by_line_ends() -> None:
    data = b"x,y\n" + b"1,2\n" * 5000
    text = profile(data, scan_bytes=2049)
    assert "rows: about 5,000 (header not counted)" in text
    assert "note: the first 2,049 bytes were parsed (511 rows); the rest was only" in text
    assert "fields like the header" not in text  # the row the bound cut is not parsed


def test_binary_file_is_named_not_read() -> None:
    text = profile(bytes(range(256)) * 4, "blob.bin")
    assert "blob.bin: binary" in text
    assert "not profiled: it is not text" in text
    assert "rows:" not in text


def test_parquet_without_pyarrow_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins
    real = builtins.__import__

    def refuse(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith(("pyarrow", "openpyxl")):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", refuse)
    assert "not profiled: reading Parquet needs pyarrow" in profile(b"PAR1....PAR1", "t.parquet")
    assert "not profiled: reading Excel needs openpyxl" in profile(b"PK\x03\x04", "t.xlsx")


def test_stored_profiles_read_by_digest_and_cached(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    source = tmp_path / "d.csv"
    source.write_bytes(b"a\n1\n2\n")
    stored = store.put(source)
    profiles = DataProfiles(store)

    class Ref:
        name = "d.csv"
        sha256 = stored.sha256
        size = stored.size

    first = profiles.of([Ref()])
    assert "rows: 2" in first["d.csv"]
    (tmp_path / "store" / "sha256" / stored.sha256[:2] / stored.sha256).unlink()
    assert profiles.of([Ref()]) == first  # kept: the entry is not read again
    assert DataProfiles(store).of([Ref()]) == {}  # a store without it: no profile
    assert DataProfiles(None).of([Ref()]) == {}


def test_parquet_rows_from_its_footer_and_types_from_its_values(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"bmi": [22.5, None, 31.0], "sex": ["f", "m", "f"]})
    parquet.write_table(table, tmp_path / "t.parquet")
    data = (tmp_path / "t.parquet").read_bytes()
    text = profile(data, "t.parquet")
    assert "rows: 3 (header not counted); columns: 2" in text
    assert "- bmi | number | 1 | 22.5 to 31" in text
    assert '- sex | text | 0 | top "f": 2, "m": 1 (2 distinct)' in text


def test_excel_first_sheet_is_profiled(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    for row in (["age", "group"], [40, "a"], [None, "b"], [55, "a"]):
        sheet.append(row)
    book.save(tmp_path / "t.xlsx")
    text = profile((tmp_path / "t.xlsx").read_bytes(), "t.xlsx")
    assert "rows: 3 (header not counted); columns: 2" in text
    assert "- age | integer | 1 | 40 to 55" in text
