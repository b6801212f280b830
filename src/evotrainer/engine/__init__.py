"""The engine behind CoEvolution (coevolution.py), split by data: ``components`` (what a run is
made of, built from the config, frozen), ``state`` (RunState: what a run changes and a
checkpoint saves) and step functions over the two, in reading order: start (the first
generation), generation (one inner generation), validate (s_val, the archive, the anchor,
ratings), outer_step and trials (the harness step), rank_scores (validated answers scored as
training would), distill_step and adapters (distillation), outcome (confirmation, summary,
result files), resume (what a resume adds to the checkpoint), telemetry (events, the clock)."""
