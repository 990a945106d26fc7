"""Data profiles: what a goal's data file holds, in a few bounded lines, for the agents.

A profile gives a file's rows, columns, column types, missing values, ranges (or a text
column's most frequent values) and its first rows: CSV and TSV with the standard library
(``tables``), Parquet and Excel when pyarrow or openpyxl can be imported (``formats``). It
is built by the agents worker from the artifact store by digest (``stored``), so no file
content enters a workflow's history, and it never holds the whole file.
"""
