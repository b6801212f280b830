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
from evotrainer.run.estimate import TRAINING, Progress, estimate_calls, format_duration
from evotrainer.types import Instance

TICK_S = 1.0  # the most often a progress event is emitted


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
    (run/estimate.py); generation events then carry the ETA at the measured pace, and every
    answer may tick the progress (``tick``)."""
    vs = c.validation_set
    est = estimate_calls(
        c.cfg,
        len(vs.selection),
        len(vs.confirmation),
        len(s.inner.seeds),
        c.task.max_calls_per_rollout(),
        len(getattr(c.validator.probe, "instances", ())),
    )
    b = c.budget.snapshot()
    backend, answered = b["backend_calls"], b["backend_calls"] + b["cache_hits"]
    s.clock.progress = Progress(max(est.total, answered), est.kinds, est.cap, backend, answered)
    s.clock.session_t0 = time.perf_counter()
    c.budget.listen(lambda: tick(c, s))
    before = s.clock.calls_before if s.clock.calls_before is not None else backend
    message = f"estimate: {est.describe()}"
    if c.cfg.model.spec.startswith("local:"):  # the embedded model: its pace is known roughly
        message += (
            f"; about {format_duration(est.embedded_seconds())} on 2 idle cores at make "
            "demo's pace (the run measures its own: see the ETA)"
        )
    c.emit(
        ev.ESTIMATE,
        **est.to_json(),
        calls_spent=b["llm_calls"],
        message=message + (f"; {before} backend calls spent before this resume" if before else ""),
    )


def counters(c: Components) -> tuple[int, int]:
    """Backend calls and answers (backend calls and cached answers) so far."""
    b = c.budget.snapshot()
    return b["backend_calls"], b["backend_calls"] + b["cache_hits"]


def eta(c: Components, s: RunState) -> dict[str, Any]:
    """The generation event's time fields: the expected calls, the measured seconds per
    backend call and the seconds left (None until enough backend calls were made)."""
    progress = s.clock.progress
    if progress is None or s.clock.session_t0 is None:
        return {}
    backend, answered = counters(c)
    now = time.perf_counter()
    return {
        "expected_calls": progress.expected_calls,
        "s_per_call": progress.seconds_per_call(backend, answered, now),
        "eta_s": progress.eta_s(backend, answered, now),
    }


def phase(
    c: Components, s: RunState, name: str, kind: str, calls: int | None, message: str = ""
) -> None:
    """A stretch of work starts: the pace of its backend calls is timed as ``kind``
    (run/estimate.py's TRAINING or VALIDATION), and observers get a transient ``phase``
    event (the console's second bar; ``message``: a line to print where no recorded event
    announces the stretch). ``calls``: the most calls it may make (None: not known)."""
    backend, answered = counters(c)
    if s.clock.progress is not None:
        s.clock.progress.switch(kind, backend, answered, time.perf_counter())
    s.clock.phase = {"phase": name, "kind": kind, "calls": calls, "answered_at": answered}
    c.emit(ev.PHASE, phase=name, kind=kind, calls=calls, message=message)


def generation_phase(c: Components, s: RunState) -> None:
    """The next inner generation starts: its children meet at most the whole batch."""
    inner = c.cfg.inner
    children = max(0, inner.population - inner.elites)
    calls = children * inner.tasks_per_generation * c.task.max_calls_per_rollout()
    phase(c, s, f"generation {s.inner.generation + 1}/{inner.generations}", TRAINING, calls)


def tick(c: Components, s: RunState) -> None:
    """After an answer (the budget's listener): at most every ``TICK_S`` seconds, a
    transient ``progress`` event with the calls answered in the phase, the backend calls
    and cached answers so far and the ETA, so a display never goes silent while calls are
    answered (issue 51)."""
    now = time.monotonic()
    if now - s.clock.last_tick < TICK_S:
        return
    s.clock.last_tick = now
    c.emit(ev.PROGRESS, **progress_fields(c, s))


def progress_fields(c: Components, s: RunState) -> dict[str, Any]:
    """What a progress event says (``tick``)."""
    b = c.budget.snapshot()
    ph = s.clock.phase
    answered = b["backend_calls"] + b["cache_hits"]
    return {
        "phase": ph.get("phase"),
        "phase_answered": answered - int(ph.get("answered_at", 0)),
        "phase_calls": ph.get("calls"),
        "backend_calls": b["backend_calls"],
        "cached": b["cache_hits"],
        "elapsed_s": s.clock.since_start(),
        **eta(c, s),
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
