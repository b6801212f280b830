"""The Python API in the ecosystem's shape (DSPy, GEPA): ``evotrainer.optimize`` and
``evotrainer.Optimizer`` (run.py) evolve a policy on examples held in memory (examples.py),
judged by the task's metric or a metric function of yours (metric.py), with progress through
``logging`` (progress.py), and return a ``Policy`` (policy.py) you call, save and load.
``evotrainer apply`` is its command-line twin. docs/api.md shows it."""
