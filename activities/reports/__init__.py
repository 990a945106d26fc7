"""Reports: the results JSON, the Markdown summary and the run's hash-chained ledger.

``writer.ReportWriter`` holds the ``write_report`` activity; ``ledger`` appends to and
verifies ``ledger.jsonl``.
"""


from activities.reports.ledger import LedgerError, append_ledger, verify_ledger
from activities.reports.writer import ReportWriter, render_markdown

__all__ = [
    "LedgerError",
    "ReportWriter",
    "append_ledger",
    "render_markdown",
    "verify_ledger",
]
