"""A worker process's heap, settled once its workers are built, so collections stay short.

Python's cyclic garbage collector walks, at each full collection, every container object of
the process, and pauses every thread while it does. A worker's process holds hundreds of
thousands of them from its start alone (the modules, the workflows' sandboxed imports, the
SDK's tables): on a loaded 2-core machine such a pause took 0.5 s, and more under load, and a
workflow task it pauses past Temporal's 2-second deadlock detector fails, is retried from a
replay, and may leave its workflow stuck in the worker (issue 34's 10 000-task run).
:func:`settle_heap` moves what the start made out of the collector's reach: a full collection
then walks only what the workers made since.
"""

from __future__ import annotations

import gc


def settle_heap() -> int:
    """Collect what the start left over, then freeze the rest; how many objects it froze."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
