"""The command line, ``evotrainer``: app.py holds the typer app and its commands (``main`` is the
console script), common.py what the commands share (consoles, options, overrides, failing),
run.py the parts of ``run`` and ``resume`` beyond their options, eval.py those of ``eval``.
``python -m evotrainer.cli`` runs it too (__main__.py)."""
