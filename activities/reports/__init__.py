"""Reports: the results JSON, the Markdown summary, figures, artifact copies, the ledger.

``writer.ReportWriter`` holds the ``write_report`` and ``write_task_report`` activities;
``keep`` copies a run's verified artifacts into its folder; ``timeline`` draws the tasks'
timeline (PNG, with Pillow) and ``figures`` the DAG (Mermaid) and what figures share;
``markdown`` renders a run's report, ``tasks`` each task's section, ``branches`` its branch
tree, comparisons and their flowchart (``assay branches`` prints the same rows),
``checkpoints`` its named checkpoints (``assay checkpoints`` prints the same rows), ``numbers``
every number in it; ``ledger`` appends to and verifies ``ledger.jsonl``; ``reading`` reads a
results JSON back, from its path or the artifact store. A study's report across its cycles:
``study.StudyReportWriter`` holds ``write_study_report`` (``study.json``, read back as the
study's state), ``study_markdown`` renders ``study.md`` and ``study_figures`` draws its key
metric across cycles and branches.
"""
