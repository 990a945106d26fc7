"""The model gateway: Anthropic Messages calls with accounting, recording and replay.

``gateway.ModelGateway`` owns the SDK client (``client``), structured output through tool use
(``output``), request building (``request``), errors and retry advice (``errors``), prices
(``pricing``), Prometheus metrics (``metrics``), record/replay of exchanges (``recording``)
and the tools a role may call before it answers (``helpers``, e.g. ``lookup_docs``).
``ledger.BudgetLedger`` is the runs' budget account in PostgreSQL (tables in ``schema``): each
call reserves what ``reserve`` says it may spend before it is sent, and settles after.
Nothing is imported here: a worker that records a job's metrics (``metrics``) does not load
the SDK client.
"""
