"""The client side of Assay: what starts, steers, reads and links runs and studies.

Code here talks to a Temporal server from outside any workflow: it never runs in a workflow
sandbox, so it may do I/O. ``assay`` holds :class:`~client.assay.AssayClient` (connect with
the data converter, start a run, read results and progress), ``steering`` the updates and
queries that steer a running run, ``study`` the same for studies, ``linking`` a branch of a
closed run started as a new run linked to it, ``batches`` a large run's progress from its
batches' results, and ``runs`` the plain data the client reads of runs (summaries, live task
state, tallies), which the CLI renders without a server.
"""
