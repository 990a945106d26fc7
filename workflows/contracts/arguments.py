"""What a job may be given as arguments: what ``execve`` can start it with.

A job's ``args`` become ``--name=value`` flags of the interpreter the sandbox starts (and a
JSON file). A value with a NUL byte, or one or all too long for the kernel, would fail only when
the job starts (``E2BIG``); plans, branch changes and the sandbox refuse them with this check.
"""

from __future__ import annotations

from workflows.contracts.base import Scalar

MAX_ARG_BYTES = 131_071
"""The longest ``--name=value`` a job may be given: Linux refuses a longer single argument
(MAX_ARG_STRLEN, 128 KiB with its NUL) with E2BIG."""
MAX_ARGS_BYTES = 512 * 1024
"""All of a job's arguments together: well within what ``execve`` takes with the sandbox's own
arguments and environment (ARG_MAX is a quarter of the stack limit, 2 MiB by default)."""


def check_job_args(args: dict[str, Scalar]) -> None:
    """Refuse arguments a job could never be started with, before it is queued.

    Raises:
        ValueError: a bad name, a NUL byte, one argument or all of them too long.
    """
    total = 0
    for key, value in args.items():
        if not key.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"argument name {key[:60]!r} may hold only letters, digits, - and _")
        text = f"--{key}={value}"
        if "\0" in text:
            raise ValueError(f"argument {key!r} contains a NUL byte, which no program can be "
                             "given; pass binary data as an input file")
        size = len(text.encode("utf-8", "surrogatepass")) + 1
        if size > MAX_ARG_BYTES:
            raise ValueError(f"argument {key!r} is {size:,} bytes, over the {MAX_ARG_BYTES:,} "
                             "bytes a program accepts in one argument; put large values in an "
                             "input file")
        total += size
    if total > MAX_ARGS_BYTES:
        raise ValueError(f"the job's arguments are {total:,} bytes in all, over the "
                         f"{MAX_ARGS_BYTES:,}-byte limit; put large values in an input file")
