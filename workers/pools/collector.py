"""The garbage collector's pace in a worker process: the young generation 20 000 objects at a time.

CPython collects its youngest generation once allocations outnumber deallocations by 700, every
tenth of those collections the middle generation too, and now and then everything. A worker
allocates in that measure for every payload it decodes, every model it validates and every
workflow activation it runs, and almost none of it outlives the task at hand. In a burst of
one-task runs (counted by a profiling script) it collected about three times a run and its
whole heap (the workflow sandboxes' modules, the SDK, the stores) every forty or so, in a
pause of about a third of a second on whatever workflow task or activity was running.

:func:`pace` lets 20 000 young objects pile up before a collection. The middle and old
generations keep their thresholds, counted in young collections, so each comes round
proportionally less often. ``make bench`` section 1 prints the workers' time in collections per
run (``benchmarks/cpu.py``): for a one-task run it went from 10.4-11.5 ms to 3.2-3.8.
"""

from __future__ import annotations

import gc

YOUNG_OBJECTS = 20_000
"""Net allocations between two collections of the young generation (Python's default: 700)."""


def pace() -> None:
    """Collect the young generation every :data:`YOUNG_OBJECTS` net allocations.

    The process's other two thresholds are kept, whatever they are.
    """
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS, middle, old)
