"""The ``assay`` command line: a thin shim over the client, the stack and the stores.

``main`` holds the app and the run/status commands' wiring; one module per command group;
``progress`` follows a run for ``assay run --wait`` and ``watch`` says a run's events in words.
"""


from workers.cli.main import app, main

__all__ = [
    "app",
    "main",
]
