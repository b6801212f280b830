"""Telemetry: what a step reports, as the run's typed events (generation events, monitor
alerts, the estimate, the time limit); observers consume them (console, events.jsonl, --json;
engine/session.py: ``Events`` and ``Clock``); algorithms never print."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from evotrainer.engine.components import Components
from evotrainer.engine.session import finite
from evotrainer.engine.state import RunState
from evotrainer.errors import TimeLimitReached
from evotrainer.evaluation.diversity import mean_pairwise_distance
from evotrainer.loops.inner import PolicyOptimizer
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.repetition import degeneracy
from evotrainer.run import events as ev
from evotrainer.run.estimate import Progress, estimate_calls
from evotrainer.types import Instance


def elapsed(c: Components, s: RunState) -> float:
    """The run's seconds: those before the last resume plus this process's."""
    return s.elapsed_before + s.clock.since_start()


def alerts(c: Components, s: RunState, found: Sequence[Any]) -> None:
    """The proxy-gap monitor's alerts as events; a saturated component becomes a suspect."""
    for a in found:
        if a.kind == "component_saturated":
            s.suspects.add(a.detail["saturated"])
        c.emit(ev.ALERT, kind=a.kind, message=a.message, detail=dict(a.detail))


def emit_generation(
    c: Components, s: RunState, opt: PolicyOptimizer, batch: Sequence[Instance]
) -> None:
    fits = [f for p in opt.population if math.isfinite(f := opt.fitness[p.id].fitness)]
    best = opt.best()
    c.emit(
        ev.GENERATION,
        generation=opt.generation,
        best_fitness=max(fits) if fits else None,
        mean_fitness=sum(fits) / len(fits) if fits else None,
        rejected=len(opt.population) - len(fits),
        best_policy=best.id,
        best_components=dict(opt.fitness[best.id].components),
        population=[
            {
                "id": p.id,
                "fitness": finite(opt.fitness[p.id].fitness),
                "operator": p.lineage.operator,
                "parents": list(p.lineage.parents),
            }
            for p in opt.population
        ],
        diversity=mean_pairwise_distance([p.render() for p in opt.population]),
        answers=batch_degeneracy(c, opt, batch),
        harness=s.harness.to_json(),
        operator_stats={k: v.as_dict() for k, v in opt.op_stats.items()},
        batch_size=len(batch),
        budget=c.budget.snapshot(),
        threads=getattr(c.stack.backend, "n_threads", None),  # embedded model
        elapsed_s=elapsed(c, s),
        total_generations=c.cfg.inner.generations,
        last_s_val=s.hopt.s_val_history[-1] if s.hopt.s_val_history else None,
        **eta(c, s),
    )


def batch_degeneracy(
    c: Components, opt: PolicyOptimizer, batch: Sequence[Instance]
) -> dict[str, Any]:
    """How degenerate the generation's training answers are (policy/repetition.py): the best
    policy's and the whole population's, on the batch (the answers the reward scored)."""
    store = c.evaluator.store

    def of(policies: Sequence[PolicyGenome]) -> dict[str, Any]:
        texts = [
            "" if rec.rollout.error else rec.rollout.output
            for p in policies
            for i in batch
            if (rec := store.get((p.id, i.id))) is not None
        ]
        return degeneracy(texts).to_json()

    return {"best": of([opt.best()]), "population": of(opt.population)}


def emit_estimate(c: Components, s: RunState) -> None:
    """Before the run (or its resume) goes on: the calls it is expected to make
    (run/estimate.py); generation events then carry the ETA at the measured pace."""
    vs = c.validation_set
    est = estimate_calls(
        c.cfg,
        len(vs.selection),
        len(vs.confirmation),
        len(s.inner.seeds),
        c.task.max_calls_per_rollout(),
        len(getattr(c.validator.probe, "instances", ())),
    )
    spent = c.budget.snapshot()["llm_calls"]
    s.clock.progress = Progress(max(est.total, spent), calls_at_start=spent)
    s.clock.session_t0 = time.perf_counter()
    c.emit(
        ev.ESTIMATE,
        **est.to_json(),
        calls_spent=spent,
        message=f"estimate: {est.describe()}"
        + (f"; {spent} spent before this resume" if spent else ""),
    )


def eta(c: Components, s: RunState) -> dict[str, Any]:
    """The generation event's time fields: the expected calls, the measured seconds per
    call and the seconds left (None until enough calls were made)."""
    progress = s.clock.progress
    if progress is None or s.clock.session_t0 is None:
        return {}
    calls = c.budget.snapshot()["llm_calls"]
    spent = time.perf_counter() - s.clock.session_t0
    return {
        "expected_calls": progress.expected_calls,
        "s_per_call": progress.seconds_per_call(calls, spent),
        "eta_s": progress.eta_s(calls, spent),
    }


def check_time(c: Components, s: RunState) -> None:
    """``budget.max_wall_s``: raise TimeLimitReached once this session ran that long."""
    limit = c.cfg.budget.max_wall_s
    if limit is None:
        return
    spent = s.clock.session_seconds()
    if spent >= limit:
        raise TimeLimitReached(
            f"time limit reached: {spent:.0f} s of {limit:g} s (budget.max_wall_s, "
            f"--timeout) after generation {s.inner.generation}; the best policy is "
            "validated and confirmed now"
        )


def watch_generation(c: Components, s: RunState) -> None:
    """The proxy-gap monitor's look at the generation's best (alerts, when it is on)."""
    if c.monitor is None:
        return
    best = s.inner.best()
    fit = s.inner.fitness[best.id]
    alerts(
        c,
        s,
        c.monitor.observe_generation(
            s.inner.generation, fit.fitness, fit.components, s.harness.weights
        ),
    )
