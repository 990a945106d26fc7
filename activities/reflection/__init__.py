"""Reflection: diagnosing a failed phase and proposing a guarded, scored patch.

``reflection.Reflection`` holds the ``diagnose_failure`` activity. It reads the run's signals
(``mining``), applies the rule table per phase (``approval``, ``execution``, ``evidence``,
``rules``), prefers fixes memory has seen work, and passes every patch through the guardrails
of :mod:`activities.patches`.
"""


from activities.reflection.reflection import Reflection

__all__ = [
    "Reflection",
]
