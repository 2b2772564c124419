"""``python -m tfcloud.cli``: the ``tfcloud`` command."""

from tfcloud.cli import main

main()
