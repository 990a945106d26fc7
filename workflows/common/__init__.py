"""What every workflow shares: error types, failure texts, the event log, gates, advisory calls.

Also the deterministic primitives activities and workers use as well: canonical JSON
(``canonical``), words and slugs (``words``) and validation errors in words
(``validation``).

The package re-exports only its leaf modules (``errors``, ``failures``, ``canonical``,
``words``, ``validation``); ``events``, ``gates`` and ``advisory`` call activities through
:mod:`workflows.catalogue`, which itself uses ``errors``, so they are imported from their
modules.
"""

from workflows.common.canonical import canonical_json
from workflows.common.errors import PERMANENT, ErrorType
from workflows.common.failures import root_message
from workflows.common.validation import FieldError, field_errors, field_path
from workflows.common.words import STOP_WORDS, TASK_TYPE_STOP_WORDS, slug, slug_words

__all__ = [
    "PERMANENT",
    "STOP_WORDS",
    "TASK_TYPE_STOP_WORDS",
    "ErrorType",
    "FieldError",
    "canonical_json",
    "field_errors",
    "field_path",
    "root_message",
    "slug",
    "slug_words",
]
