"""CSV and TSV profiles with the standard library, read as a stream of bounded lines.

The delimiter is sniffed from the first :data:`SNIFF_BYTES` (a ``.tsv`` or ``.tab`` name
falls back to tabs, anything else to commas); the first row is taken as the header. Lines
are read at most :data:`LINE_BYTES` at a time, and at most ``scan_bytes`` of the file in
all, so neither a single enormous row nor a huge file is ever held whole. Past
``scan_bytes`` the rest of the file is only streamed to count its line ends, so the row
count is then an estimate, and the profile says so.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterator
from typing import BinaryIO

from activities.profiles.columns import SAMPLE_ROWS, Column, Profile

SNIFF_BYTES = 64 * 1024
LINE_BYTES = 64 * 1024
"""A physical line longer than this is cut (and counted in a note)."""
SCAN_BYTES = 8 * 1024 * 1024
"""The default bytes of a file parsed for its profile (``ASSAY_PROFILE_SCAN_BYTES``)."""
COUNT_CHUNK = 1024 * 1024
MAX_COLUMNS = 2000
"""Columns beyond this many are not tracked (the header says how many there are)."""
DELIMITERS = ",\t;|"


class _Lines:
    """The file's text lines, each at most LINE_BYTES, stopping after ``scan_bytes``."""

    def __init__(self, handle: BinaryIO, scan_bytes: int) -> None:
        self.handle = handle
        self.left = scan_bytes
        self.cut_lines = 0
        self.stopped = False
        self.rest_lines = 0
        """Line ends counted (not parsed) after ``scan_bytes``."""
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")

    def __iter__(self) -> Iterator[str]:
        while True:
            if self.left <= 0:
                self._count_rest()
                return
            line = self.handle.readline(min(LINE_BYTES, self.left))
            if not line:
                return
            self.left -= len(line)
            if self.left <= 0 and not line.endswith(b"\n") and len(line) < LINE_BYTES:
                self._count_rest()
                if self.stopped:  # the row the bound cut is counted with the rest
                    return
            if not line.endswith(b"\n") and len(line) >= LINE_BYTES:
                self.cut_lines += 1
                self._skip_rest()
                line += b"\n"
            yield self.decoder.decode(line)

    def _count_rest(self) -> None:
        while chunk := self.handle.read(COUNT_CHUNK):
            self.stopped = True
            self.rest_lines += chunk.count(b"\n")

    def _skip_rest(self) -> None:
        while self.left > 0:
            more = self.handle.readline(min(LINE_BYTES, self.left))
            self.left -= len(more)
            if not more or more.endswith(b"\n"):
                return


def delimiter_of(sample: str, name: str) -> str:
    """The sample's delimiter as sniffed, else a tab for .tsv/.tab names, else a comma."""
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return "\t" if name.lower().endswith((".tsv", ".tab")) else ","


def table_profile(handle: BinaryIO, name: str, size: int, scan_bytes: int) -> Profile:
    """The profile of a delimited text file read from ``handle`` (at its start)."""
    head = handle.read(SNIFF_BYTES)
    if b"\0" in head:
        return Profile(name=name, size=size, kind="binary",
                       notes=["not profiled: it is not text (it holds NUL bytes) and not a "
                              "table format Assay reads (CSV, TSV, Parquet, Excel)"])
    sample = head.decode("utf-8-sig", errors="replace")
    sample = sample.rsplit("\n", 1)[0] if len(head) == SNIFF_BYTES else sample
    delimiter = delimiter_of(sample, name)
    handle.seek(0)
    lines = _Lines(handle, scan_bytes)
    kind = {"\t": "TSV", ",": "CSV"}.get(delimiter, f"delimited text ({delimiter!r})")
    profile = Profile(name=name, size=size, kind=kind, rows=0)
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        _read(reader, profile)
    except csv.Error as err:
        profile.rows_exact = False
        profile.notes.append(f"reading stopped at line {reader.line_num}: {err}")
    if lines.stopped:
        parsed = profile.rows or 0
        profile.rows = parsed + max(0, lines.rest_lines)
        profile.rows_exact = False
        profile.notes.append(f"the first {scan_bytes:,} bytes were parsed ({parsed:,} rows); "
                             "the rest was only counted by line ends, so the row count is "
                             "an estimate")
    if lines.cut_lines:
        profile.notes.append(f"{lines.cut_lines:,} lines longer than {LINE_BYTES:,} bytes "
                             "were cut to that length")
    return profile


def _read(reader: Iterator[list[str]], profile: Profile) -> None:
    header = next(reader, None)
    if header is None:
        profile.notes.append("the file is empty")
        return
    profile.columns = [Column(name=h.strip() or f"(column {i + 1})")
                       for i, h in enumerate(header[:MAX_COLUMNS])]
    if len(header) > MAX_COLUMNS:
        profile.notes.append(f"{len(header):,} columns; only the first {MAX_COLUMNS:,} are "
                             "profiled")
    ragged = 0
    count = 0
    for row in reader:
        if not row:
            continue
        count += 1
        ragged += len(row) != len(header)
        for col, value in zip(profile.columns, row, strict=False):
            col.add(value)
        for col in profile.columns[len(row):]:
            col.add(None)
        if len(profile.samples) < SAMPLE_ROWS:
            profile.samples.append(row[:len(profile.columns)])
    profile.rows = count
    if ragged:
        profile.notes.append(f"{ragged:,} rows do not have {len(header)} fields like the "
                             "header (missing fields counted as missing)")
    if not count:
        profile.notes.append("the file has a header and no rows")
