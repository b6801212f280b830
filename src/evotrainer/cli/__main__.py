"""``python -m evotrainer.cli``: the ``evotrainer`` command."""

from evotrainer.cli.app import main

main()
