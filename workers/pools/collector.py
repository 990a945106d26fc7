"""The garbage collector's pace in a worker process: the young generation 20 000 objects at a time.

CPython collects its youngest generation once allocations outnumber deallocations by 700, every
tenth of those collections the middle generation too, and now and then everything. A worker
allocates in that measure for every payload it decodes, every model it validates and every
workflow activation it runs, and almost none of it outlives the task at hand. In a burst of
one-task runs it collected about three times a run, the middle generation every three or four
runs, and its whole heap (the workflow sandboxes' modules, the SDK, the stores) every forty or
so, in a pause of about a third of a second on whatever workflow task or activity was running.

:func:`pace` lets 20 000 young objects pile up before a collection. The middle and old
generations keep their thresholds, counted in young collections, so each comes round
proportionally less often. A burst of 150 one-task runs in one worker process (a profiling
script beside section 1 of ``make bench``) spent 10.8 ms a run in collections before, 1.1
after; the whole process's CPU fell from 110 to 94 ms a run and sequential latency from 181
to 165 ms. What the young generation holds at once stays a few megabytes.
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
