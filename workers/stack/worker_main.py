"""What the stack's worker process runs: ``python -m workers.stack.worker_main POOL...``.

It serves the pools until the stack asks it to stop (SIGTERM) or the stack is gone (the pipe
on its stdin closes); it runs in a process group of its own, so a Ctrl-C reaches only the stack.
Exceptions end the process with a traceback on stderr (the stack's log when detached); the
stack notices the exit and restarts it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import traceback

from workers.connection import connect
from workers.pools.builders import make_runtime, run_pools
from workers.pools.versioning import describe_version
from workers.settings import Settings
from workers.stack.pools import worker_identity
from workflows.contracts.pools import Pool

log = logging.getLogger("assay.stack")


def main(pools: list[str]) -> None:
    """Serve ``pools`` until SIGTERM or until the stack's pipe on stdin closes."""
    logging.basicConfig(level=logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("assay").setLevel(logging.INFO)
    code = 0
    try:
        asyncio.run(_serve(Settings(), [Pool(name) for name in pools]))
    except Exception:  # the stack reports the exit; the traceback goes to its log
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # As in the CLI: the Temporal runtime's threads can crash interpreter finalization.
    os._exit(code)


async def _serve(settings: Settings, pools: list[Pool]) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_sigterm() -> None:
        log.info("the stack asks this worker process to stop; shutting the workers down")
        stop.set()

    loop.add_signal_handler(signal.SIGTERM, on_sigterm)

    def on_stdin() -> None:
        if not os.read(sys.stdin.fileno(), 4096):  # end of file: the stack is gone
            loop.remove_reader(sys.stdin.fileno())
            log.warning("the stack that started this worker process is gone; stopping")
            stop.set()

    loop.add_reader(sys.stdin.fileno(), on_stdin)
    client = await connect(settings, runtime=make_runtime(settings),
                           identity=worker_identity(os.getpid()))
    log.info("worker process %d: %s", os.getpid(), describe_version(settings))
    url = settings.database_url.get_secret_value() if settings.database_url else ""
    await run_pools(settings, pools, database_url=url, stop=stop, client=client)


if __name__ == "__main__":
    main(sys.argv[1:])
