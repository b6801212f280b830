"""Telemetry: the run's typed events. Observers consume them (console, events.jsonl, --json);
one that raises is detached (run/events.py). Generation events, monitor alerts, constitution
violations and the run's clock live here; algorithms never print."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from evotrainer.loops.inner import PolicyOptimizer
from evotrainer.run import events as ev
from evotrainer.types import Instance

Observer = Callable[[ev.Event], None]


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


class Telemetry:
    """The part of CoEvolution that emits events (a mixin: it reads the run's state)."""

    observers: list[Observer]
    elapsed_before: float
    _t0: float

    def emit(self, type_: str, **data: Any) -> None:
        with self._emit_lock:  # concurrent trials emit from threads
            ev.notify(self.observers, ev.Event(type_, data))  # a raising observer is detached

    def _on_violation(self, policy_id: str, violations: list[Any]) -> None:
        self.emit(
            ev.CONSTITUTION,
            policy_id=policy_id,
            rules=sorted({v.rule for v in violations}),
            detail="; ".join(map(str, violations)),
        )

    def _alerts(self, alerts: Sequence[Any]) -> None:
        for a in alerts:
            if a.kind == "component_saturated":
                self._suspects.add(a.detail["saturated"])
            self.emit(ev.ALERT, kind=a.kind, message=a.message, detail=dict(a.detail))

    def _emit_generation(self, opt: PolicyOptimizer, batch: Sequence[Instance]) -> None:
        from evotrainer.report.diversity import mean_pairwise_distance

        fits = [f for p in opt.population if math.isfinite(f := opt.fitness[p.id].fitness)]
        best = opt.best()
        self.emit(
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
                    "fitness": _finite(opt.fitness[p.id].fitness),
                    "operator": p.lineage.operator,
                    "parents": list(p.lineage.parents),
                }
                for p in opt.population
            ],
            diversity=mean_pairwise_distance([p.render() for p in opt.population]),
            harness=self.harness.to_json(),
            operator_stats={k: v.as_dict() for k, v in opt.op_stats.items()},
            batch_size=len(batch),
            budget=self.budget.snapshot(),
            threads=getattr(self.stack.backend, "n_threads", None),  # embedded model
            elapsed_s=self.elapsed(),
            total_generations=self.cfg.inner.generations,
            last_s_val=self.hopt.s_val_history[-1] if self.hopt.s_val_history else None,
            **self._eta(),
        )

    def _emit_estimate(self) -> None:
        """Before the run (or its resume) goes on: the calls it is expected to make
        (run/estimate.py); generation events then carry the ETA at the measured pace."""
        from evotrainer.run.estimate import Progress, estimate_calls

        vs = self.validation_set
        est = estimate_calls(
            self.cfg,
            len(vs.selection),
            len(vs.confirmation),
            len(self.inner.seeds),
            self.task.max_calls_per_rollout(),
            len(getattr(self.validator.probe, "instances", ())),
        )
        spent = self.budget.snapshot()["llm_calls"]
        self.progress = Progress(max(est.total, spent), calls_at_start=spent)
        self._session_t0 = time.perf_counter()
        self.emit(
            ev.ESTIMATE,
            **est.to_json(),
            calls_spent=spent,
            message=f"estimate: {est.describe()}"
            + (f"; {spent} spent before this resume" if spent else ""),
        )

    def _eta(self) -> dict[str, Any]:
        """The generation event's time fields: the expected calls, the measured seconds per
        call and the seconds left (None until enough calls were made)."""
        progress = getattr(self, "progress", None)
        if progress is None:
            return {}
        calls = self.budget.snapshot()["llm_calls"]
        spent = time.perf_counter() - self._session_t0
        return {
            "expected_calls": progress.expected_calls,
            "s_per_call": progress.seconds_per_call(calls, spent),
            "eta_s": progress.eta_s(calls, spent),
        }

    def _check_time(self) -> None:
        """``budget.max_wall_s``: raise TimeLimitReached once this session ran that long."""
        limit = self.cfg.budget.max_wall_s
        if limit is None:
            return
        spent = time.perf_counter() - getattr(self, "_session_t0", self._t0)
        if spent >= limit:
            from evotrainer.errors import TimeLimitReached

            raise TimeLimitReached(
                f"time limit reached: {spent:.0f} s of {limit:g} s (budget.max_wall_s, "
                f"--timeout) after generation {self.inner.generation}; the best policy is "
                "validated and confirmed now"
            )

    def _watch_generation(self) -> None:
        if self.monitor is None:
            return
        best = self.inner.best()
        fit = self.inner.fitness[best.id]
        self._alerts(
            self.monitor.observe_generation(
                self.inner.generation, fit.fitness, fit.components, self.harness.weights
            )
        )

    def elapsed(self) -> float:
        return self.elapsed_before + (time.perf_counter() - self._t0)
