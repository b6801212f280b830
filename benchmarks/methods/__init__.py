"""The quality benchmark's methods, one small module each, one signature:
``run(bench, seed) -> RunOut`` (or, for ``seeds``, one RunOut per row), registered by name in
registry.py. A method gets the shared ``Bench`` (task, data, model) and makes its own budget
and cache with ``bench.stack``; a failure is a result (the runner records it), never a crash.

Where a new method goes: a module here with its ``run``, one ``Method`` line in registry.py
(its rows, what it is, whether it runs the engine), then a profile's ``methods`` names it
(docs/benchmarks.md, "Adding a profile, a method or a test set")."""
