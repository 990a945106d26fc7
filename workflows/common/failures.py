"""Turning Temporal failure chains into the sentence a person needs."""

from __future__ import annotations


def root_message(err: BaseException) -> str:
    """The innermost message of a failure chain (what the activity or child itself said)."""
    while err.__cause__ is not None:
        err = err.__cause__
    return str(err)
