"""Assay's workflows, their contracts and the typed client.

Everything reachable from a workflow module here is deterministic: no I/O, no settings,
no SDK clients, no sandbox code.
"""
