"""Every dev server of Assay's (the embedded stack's, the suite's, the benchmarks') starts with
the same flags: the search attributes and the queue-read tuning that keeps a dispatch from
waiting for the single history shard's next read (``make bench`` section 1 measures it)."""

from __future__ import annotations

from pathlib import Path

from workers.settings import Settings
from workers.stack.temporal import (
    DEV_SERVER_TUNING,
    QUEUE_POLL_RPS,
    TemporalDevServer,
    dev_server_flags,
)
from workflows.constants import SEARCH_ATTRIBUTES


def _values(flags: list[str], name: str) -> list[str]:
    return [flags[i + 1] for i, flag in enumerate(flags) if flag == name]


def test_the_stack_persists_to_its_file_with_every_shared_flag(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    command = TemporalDevServer(settings).command()
    shared = dev_server_flags(settings.temporal_db)
    at = command.index(shared[0])
    assert command[at:at + len(shared)] == shared
    assert _values(command, "--db-filename") == [str(settings.temporal_db)]
    assert _values(command, "--sqlite-pragma") == ["journal_mode=wal", "synchronous=1"]


def test_every_queue_a_shard_reads_is_tuned_and_every_search_attribute_registered() -> None:
    flags = dev_server_flags()
    tuned = _values(flags, "--dynamic-config-value")
    assert tuned == [f"history.{queue}ProcessorMaxPollRPS={QUEUE_POLL_RPS}"
                     for queue in ("transfer", "timer", "visibility")]
    assert [*DEV_SERVER_TUNING] == [a for v in tuned for a in ("--dynamic-config-value", v)]
    assert _values(flags, "--search-attribute") == [f"{n}={k}"
                                                    for n, k in SEARCH_ATTRIBUTES.items()]
    assert "--db-filename" not in flags  # in memory, as the suite runs it
