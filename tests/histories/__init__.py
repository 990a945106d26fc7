"""Saved workflow histories (``*.json``) that the replay test replays, and their capture.

Each ``<scenario>.<workflow>.json`` is one workflow's history from a scenario run on the
time-skipping server; ``tests/workflows/test_replay.py`` replays every one against today's
workflow code. The ``capture`` package re-records them (``make histories``).
"""
