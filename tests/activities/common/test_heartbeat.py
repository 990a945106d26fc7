"""Heartbeating while an activity waits on work in a thread."""

from __future__ import annotations

import time

from temporalio.testing import ActivityEnvironment

from activities.common.heartbeat import Heartbeats


async def test_heartbeats_are_sent_while_the_work_runs() -> None:
    beats: list[object] = []
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.append(details)

    async def slow() -> str:
        return await Heartbeats(0.01).in_thread(time.sleep, 0.2) or "done"

    assert await env.run(slow) == "done"
    assert beats and beats[0] == ({"phase": "sleep"},)
