"""The ``make bench`` harness: Assay's speed, each figure beside a baseline from the same run.

``__main__`` runs the sections (``python -m benchmarks [SECTION]``) and prints their tables;
each ``bench_*`` module measures one capability (runs, jobs, events, memory, skills, results,
branches, studies, parts, guards...). The baselines are ``bare`` (a one-activity workflow)
and ``floor`` (a bare workflow with a one-task run's dispatch shape); ``measuring`` times
variants in turns, ``cpu`` reads each process's CPU over a burst, ``breakdown`` reads where a
run's time went from its histories, and ``retrieval`` scores skill search on a labelled
collection. Figures and their history are in ``docs/design/benchmarks.md``.
"""
