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
