"""Activities: every piece of I/O Assay does, run by the worker pools."""
