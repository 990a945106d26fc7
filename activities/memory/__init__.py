"""Reflection memory: episodes, semantic rules and procedural templates across runs.

``memory.Memory`` holds the ``consult_memory`` and ``remember_task`` activities and
``recall.Recall`` the ``recall_memory`` one (notes for a goal's planner); ``store``
and ``schema`` keep memory and its hash-chained ledger in PostgreSQL; ``rules`` applies and
promotes rules; ``promotion`` says whether a promotion is final or waits for a person
(``memory.promotion``); ``index`` finds similar task types in Qdrant (``carry`` moves an
index kept in qdrant-client's local mode into the in-process engine). Nothing is imported
here, so the CLI's reads of the store load the store alone.
"""
