"""The parts of the CoEvolution driver (coevolution.py), one responsibility each, in reading
order: wiring (components from the config), generation (one inner generation), validate
(s_val, the archive, ratings), outer_step (the harness step and its trials), telemetry (events),
state (checkpoints and resume), outcome (confirmation, summary, result files)."""
