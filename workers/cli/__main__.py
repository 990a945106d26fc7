"""``python -m workers.cli``: the ``assay`` command without the installed script."""

from workers.cli.main import main

main()
