"""The event store: ExecutionEvent rows in PostgreSQL, written idempotently in batches.

``store.EventStore`` holds the ``record_events`` activity and the reads used by
``assay watch``, reflection and the reports; ``schema`` the table; ``format`` one-line texts;
``words`` each event said in words; ``tree`` the events put back in the tree their
``parent_event_id`` draws (``assay watch --tree``, the report's ``timeline.md``).
"""
