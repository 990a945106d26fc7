"""Contracts workflows and activities exchange: plans, policies, results, verdicts, memory.

Pydantic models (see :mod:`workflows.contracts.base`), serialised by the client's data
converter; new fields get defaults so saved histories keep replaying. Also the roles'
requests and answers (``roles``, ``drafts``, ``reflector``, ``writing``), the skill
library's (``patterns``, ``skills``, ``subagents``), the pools (``pools``), the error
types activities raise (``errors``), and the pure rules the models are built on: plain text
and clipping (``plaintext``), words and slugs (``words``), task kinds (``kinds``), the
one-line summaries the Web UI shows (``metadata``), and how a job's Python source is parsed,
one parse at a time in the process (``pysource``).

A leaf: nothing here imports another package of :mod:`workflows`, so every package may
import contracts and none is loaded by them (the layout test holds this).
"""
