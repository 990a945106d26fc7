"""Activities: everything Assay does that touches the world, one package per capability.

Workflows never import this package; they call activities through the typed catalogue in
:mod:`workflows.catalogue`, and each worker builds the activity objects of its pool from
settings (:mod:`workers.pools`). Inside, ``common`` holds the primitives the others share.
"""
