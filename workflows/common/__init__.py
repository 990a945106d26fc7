"""What every workflow shares: error types, failure texts, the event log, gates, advisory calls.

``events`` writes a workflow's events before it waits for something slow, and also sets its
search attributes, merged into one upsert per activation.

Also what keeps signals and updates from wedging a workflow: bounds on what they carry
(``bounds``); how every list a prompt bounds is cut, saying what it left out (``cuts``); and
what keeps results from doing so: how big a task's and a run's results may
be, and how they are cut to fit (``sizes``, imported from its module); the guardrails every
change of a job passes, reflection's patches and people's branches and modifications alike
(``guard``, ``changes``) and how a patch is applied and sealed (``patching``); and the one-line
summaries and details the Web UI shows of task workflows and activities (``metadata``).

And the deterministic primitives activities and workers use as well: canonical JSON
(``canonical``), words and slugs (``words``) and validation errors in words
(``validation``).

The package re-exports only its leaf modules (``errors``, ``failures``, ``canonical``,
``words``, ``validation``); ``events``, ``gates`` and ``advisory`` call activities through
:mod:`workflows.catalogue`, which itself uses ``errors``, so they are imported from their
modules, as is ``bounds`` (it reads payloads with the running workflow's converter).
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
