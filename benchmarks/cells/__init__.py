"""The quality benchmark run cell by cell into a results directory (every profile with
``cells: true``, or any profile with ``--results-dir``): resumable, one shared test
evaluation, paired comparisons.

A *cell* is one method on one seed (``random_search-seed0`` ...; the deterministic seed
policies are one cell, ``seeds``). Each cell writes its result to its own JSON file as soon as it
finishes; a rerun with the same settings skips finished cells (failed ones are retried), and
``--cells``/``--methods`` run a subset. The settings are recorded in ``settings.json``; a rerun
with different settings into the same directory is refused.

The test evaluation is shared: every distinct returned policy (and the seeds A, B, C) on every
test meeting, instance-major (all policies on meeting 1, then meeting 2 ... so llama.cpp
prefills each meeting once), through a persistent response cache; per-meeting scores are saved
as they come, so a resumed evaluation costs nothing for finished pairs.

Layout::

    RESULTS_DIR/settings.json       what the run measures (compared on every rerun) + invocations
    RESULTS_DIR/cells/CELL.json     one per finished cell: returned policy (all components),
                                    selection s_val, calls, tokens, wall time, details
    RESULTS_DIR/test/policies.json  every policy evaluated on the test sets
    RESULTS_DIR/test/scores.json    test set -> meeting -> policy -> metrics, s_val, output
    RESULTS_DIR/summary.json        means and paired differences to seed_best with 95% CIs
    WORK_DIR/                       git-ignored: per-cell caches (cache/), the test-set
                                    cache (test-cache.sqlite), engine run directories (runs/:
                                    events.jsonl, checkpoints, summary.json), cell locks
                                    (locks/: evotrainer.run.lock), the llama_cpp.server log

Cells run seeds first, then seed by seed (seed 0 of every method, then seed 1 ...). Settings
that only the engine cells read (engine sizes, --engine-set, the engine's resolved config) may
change until an engine cell has finished; everything else must match from the first run on.

The modules, in the order a run reads them: grid.py (the cells, their locks, the run),
settings.py (settings.json), adapters.py (the LoRA adapters a cell's policy carries),
scoring.py (the test evaluation), answers.py (what the answers are), summary.py
(summary.json: means, paired differences, targets), table.py (the markdown tables).
"""
