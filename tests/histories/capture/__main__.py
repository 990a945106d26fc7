"""``python -m tests.histories.capture``: capture every scenario's histories."""

import asyncio

from tests.histories.capture.all import capture

asyncio.run(capture())
