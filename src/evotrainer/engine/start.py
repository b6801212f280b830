"""The start of a run: say what it runs on (model, data) and what it will cost, seed it from an
earlier run (``init_from``), score the first population, validate the best member and the
seeds (the best seed is the baseline the run has to beat: ``initial_s_val``) and anchor the
best validated policy."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

from evotrainer.engine.components import Components
from evotrainer.engine.generation import draw_batch, fitness_of
from evotrainer.engine.state import RunState, new_inner
from evotrainer.engine.telemetry import emit_estimate, emit_generation, phase, watch_generation
from evotrainer.engine.validate import anchor_best, archive, validate
from evotrainer.harness.genome import HarnessGenome
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.run.estimate import TRAINING, VALIDATION
from evotrainer.run.ratings import RatingStore, ReplayedRating
from evotrainer.run.warm_start import WarmStart, load_warm_start
from evotrainer.tasks.registry import task_words


def start(
    c: Components, s: RunState, warm: WarmStart | None = None, run_dir: Path | None = None
) -> None:
    """From the seeds to the first validated generation (the caller checkpoints)."""
    _announce(c, s, run_dir)
    if warm is not None:
        warm_start(c, s, warm, run_dir)
    emit_estimate(c, s)
    s.drawn = s.harness
    batch = draw_batch(c, s, s.epoch, s.harness)
    initial = s.inner.ask()
    cpr = c.task.max_calls_per_rollout()
    phase(c, s, "first population", TRAINING, len(initial) * len(batch) * cpr)
    s.inner.tell(fitness_of(c, s, initial, batch, s.harness))
    emit_generation(c, s, s.inner, batch)
    watch_generation(c, s)
    best = s.inner.best()
    seeds: list[PolicyGenome] = []
    if c.cfg.validation.validate_seeds:
        # The proxy ranks on synthetic meetings; a seed that is better on the real data must
        # not be lost because the proxy prefers another. The baseline a run must beat is
        # the best seed, so that is the initial s_val.
        seeds = [
            p
            for p in initial
            if p.id != best.id
            and p.lineage.operator in ("seed", "import")
            and math.isfinite(s.inner.fitness[p.id].fitness)
        ]
        n, noun = len(c.validator.instances), task_words(c.task.name).instances
        phase(
            c,
            s,
            "seeds' validation",
            VALIDATION,
            (1 + len(seeds)) * n * cpr,
            f"validating the first population's best and {len(seeds)} seeds on {n} {noun}",
        )
        c.validator.validate([best, *seeds])  # together: one prefill per meeting
    first = validate(c, s, [best], "initial")[best.id]
    div = c.meta.population_diversity(s.inner, batch)
    archive(c, s, best, s.harness, first, div)
    initial_best = (best.id, first.s_val)
    results = validate(c, s, seeds, "seed")
    for p in seeds:
        s_seed = results[p.id].s_val
        archive(c, s, p, s.harness, results[p.id], div)
        if s_seed > initial_best[1]:
            initial_best = (p.id, s_seed)
    s.initial = initial_best
    c.meta.use_baseline(initial_best[0])
    s.hopt.observe(c.meta.score(c.meta.vector(best.id, first, div)))
    anchor_best(c, s, batch)


def _announce(c: Components, s: RunState, run_dir: Path | None) -> None:
    """The run_started, validation_set and training_set events (and their warnings)."""
    c.emit(
        ev.RUN_STARTED,
        config=c.cfg.model_dump(mode="json"),
        model=c.stack.backend.describe(),
        operator_model=(
            c.operator_stack.backend.describe() if c.operator_stack is not c.stack else None
        ),
        run_dir=str(run_dir) if run_dir else None,
    )
    vs = c.validation_set
    c.emit(
        ev.VALIDATION_SET,
        source=vs.source,
        n=len(vs.selection),
        confirmation=len(vs.confirmation),
        message=vs.message,
    )
    c.emit(
        ev.TRAINING_SET,
        real=len(c.real_pool.instances),
        source=c.real_pool.source,
        real_share=s.harness.real_share,
        message=c.real_pool.message,
    )
    if vs.synthetic:
        c.emit(ev.WARNING, message=vs.message)
    if vs.confirmation_note:
        c.emit(ev.WARNING, message=vs.confirmation_note)


def read_warm_start(c: Components, s: RunState) -> WarmStart | None:
    """What ``init_from`` hands over (run/warm_start.py), read before the run directory is
    made: a source that cannot be used is refused before any file is written."""
    if not c.cfg.init_from:
        return None
    return load_warm_start(
        c.cfg.init_from,
        c.task.name,
        set(c.evaluator.components),
        max(1, c.cfg.inner.population - len(s.inner.seeds)),
        bool(c.real_pool.instances),
        c.cfg.harness.real_share,
    )


def warm_start(c: Components, s: RunState, w: WarmStart, run_dir: Path | None) -> None:
    """Seed the population and the harness from an earlier run."""
    s.inner = new_inner(c, [*w.policies, *s.inner.seeds])
    if w.harness is not None:
        # this run's genes: the earlier run's value where this run declares the gene too
        table = c.bounds.genes
        genes = {k: w.harness.genes.get(k, spec.initial) for k, spec in table.items()}
        h = HarnessGenome(
            w.harness.weights, genes, w.harness.task_mix, "import", note=w.harness.note
        )
        h = h.bounded(c.bounds)
        s.hopt.base = s.hopt.current = h
        s.hopt.space = tuple(sorted(set(s.hopt.space) | set(h.active())))
    carry_ratings(w, run_dir)
    c.emit(ev.WARM_START, **w.to_json())


def carry_ratings(w: WarmStart, run_dir: Path | None) -> None:
    """The earlier run's ratings into this run's ratings file (read at every outer step
    and at the end). Without a run directory they are not kept (the note says so)."""
    if not w.ratings:
        return

    if run_dir is None:
        w.notes.append(f"{len(w.ratings)} ratings not carried over: no run directory")
        w.ratings = []
        return
    store = RatingStore(run_dir)
    for r in w.ratings:
        with contextlib.suppress(ReplayedRating):  # carried before: a run started again
            store.add(r)
    w.notes.append(f"{len(w.ratings)} ratings carried over from {w.source.name}")
