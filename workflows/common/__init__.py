"""What every workflow shares: failure texts, the event log, gates, advisory calls.

``events`` writes a workflow's events before it waits for something slow, and also sets its
search attributes, merged into one upsert per activation.

Also what keeps signals and updates from wedging a workflow: bounds on what they carry
(``bounds``); how every list a prompt bounds is cut, saying what it left out (``cuts``); and
what keeps results from doing so: how big a task's and a run's results may
be, and how they are cut to fit (``sizes``, imported from its module); and the guardrails
every change of a job passes, reflection's patches and people's branches and modifications
alike (``guard``, ``changes``) and how a patch is applied and sealed (``patching``).

And the deterministic primitives activities and workers use as well: canonical JSON
(``canonical``), validation errors in words (``validation``) and answer formats
(``answer_format``: ``@name[value]`` fields and their rounding). Error types, words and
slugs, plain text and the Web UI's summaries are contracts (:mod:`workflows.contracts`).

The package re-exports only its leaf modules (``failures``, ``canonical``, ``validation``);
``events``, ``gates`` and ``advisory`` call activities through :mod:`workflows.catalogue`, so
they are imported from their modules, as is ``bounds`` (it reads payloads with the running
workflow's converter).
"""

from workflows.common.canonical import canonical_json
from workflows.common.failures import root_message
from workflows.common.validation import FieldError, field_errors, field_path

__all__ = [
    "FieldError",
    "canonical_json",
    "field_errors",
    "field_path",
    "root_message",
]
