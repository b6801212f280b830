"""State and resume: the run's full state as plain data (``state_dict``/``load_state_dict``),
a checkpoint after every generation and outer step (run/checkpoint.py), and ``resume``, which
rebuilds a CoEvolution from a run directory's config and its newest intact checkpoint."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

from evotrainer.engine.telemetry import Observer, _finite
from evotrainer.evaluation.runner import Runner
from evotrainer.harness.genome import HarnessGenome
from evotrainer.llm.base import LLMClient
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.run.checkpoint import load_latest, load_state_into, save_checkpoint
from evotrainer.run.rundir import RunDirectory
from evotrainer.run.validation_set import check_same_validation
from evotrainer.tasks.base import Task
from evotrainer.types import Instance, ValidationResult


class State:
    """The part of CoEvolution that saves and restores a run (a mixin)."""

    def state_dict(self) -> dict[str, Any]:
        return {
            "inner": self.inner.state_dict(),
            "outer": self.hopt.state_dict(),
            "epoch": self.epoch,
            "drawn": self.drawn.to_json(),
            "outer_step": self.outer_step,
            "outer_due": self.outer_due,
            "trial_generations": self.trial_generations,
            "initial": list(self.initial) if self.initial else None,
            "budget": self.budget.snapshot(),
            "elapsed_s": self.elapsed(),
            "policies": {pid: p.to_json() for pid, p in self.policies.items()},
            "learned": self.learned.state_dict(),
            "rejected": self.judge.state(),
            "train_ids": sorted(self.train_ids),
            "validation_ids": {
                "selection": [i.id for i in self.validation_set.selection],
                "confirmation": [i.id for i in self.validation_set.confirmation],
            },
            "race": [self.judge.raced_out, self.judge.race_saved],
            "monitor": self.monitor.state_dict() if self.monitor else None,
            "surrogate": self.surrogate.state_dict() if self.surrogate else None,
            "suspects": sorted(self._suspects),
            "validation_memo": {
                pid: {
                    "s_val": r.s_val,
                    "aggregates": dict(r.aggregates),
                    "per_instance": list(r.per_instance),
                    "n": r.n,
                    "truncation": r.truncation,
                }
                for pid, r in self.validator.memo.items()
            },
            "validation_raced_out": sorted(self.validator.raced_out),
        }

    def load_state_dict(self, s: dict[str, Any]) -> None:
        self.inner.load_state_dict(s["inner"])
        self.hopt.load_state_dict(s["outer"])
        self.epoch = int(s["epoch"])
        # checkpoints from before the field: the batch was drawn by the current harness
        self.drawn = HarnessGenome.from_json(s["drawn"]) if s.get("drawn") else self.harness
        self.outer_step = int(s["outer_step"])
        if "outer_due" in s:
            self.outer_due = bool(s["outer_due"])
        else:  # checkpoints from before the field: the rule they were resumed by
            g, every = self.inner.generation, self.cfg.outer.every
            self.outer_due = (
                0 < g < self.cfg.inner.generations
                and g % every == 0
                and self.outer_step < g // every
            )
        self.trial_generations = int(s["trial_generations"])
        self.initial = (s["initial"][0], float(s["initial"][1])) if s["initial"] else None
        self.meta.baseline = self.initial[0] if self.initial else None
        self.budget.restore(s["budget"])
        self.elapsed_before = float(s["elapsed_s"])
        self._t0 = time.perf_counter()
        self.policies = {pid: PolicyGenome.from_json(p) for pid, p in s["policies"].items()}
        self.learned.load_state_dict(s.get("learned") or {})
        self.judge.rejected = {pid: [] for pid in s.get("rejected", {})}
        self.train_ids = set(s.get("train_ids", ()))
        self.judge.raced_out, self.judge.race_saved = s.get("race", (0, 0))
        if self.monitor and s.get("monitor"):
            self.monitor.load_state_dict(s["monitor"])
        if self.surrogate and s.get("surrogate"):
            self.surrogate.load_state_dict(s["surrogate"])
        self._suspects = set(s.get("suspects", []))
        self.validator.memo = {
            pid: ValidationResult(
                s_val=r["s_val"],
                aggregates=r["aggregates"],
                per_instance=tuple(r["per_instance"]),
                n=r["n"],
                truncation=r["truncation"],
            )
            for pid, r in s["validation_memo"].items()
        }
        self.validator.raced_out = set(s.get("validation_raced_out", ()))

    def checkpoint(self) -> None:
        if self.run_dir is None:
            return
        self._seq += 1
        best = self.inner.best()
        index = {
            "generation": self.inner.generation,
            "outer_step": self.outer_step,
            "outer_due": self.outer_due,
            "best_policy": best.id,
            "best_fitness": _finite(self.inner.fitness[best.id].fitness),
            "last_s_val": self.hopt.s_val_history[-1] if self.hopt.s_val_history else None,
            "harness": self.harness.to_json(),
        }
        path = save_checkpoint(self.run_dir, self._seq, self.state_dict(), index)
        self.emit(ev.CHECKPOINT, generation=self.inner.generation, file=path.name)

    @classmethod
    def resume(
        cls,
        run_dir: str | Path,
        *,
        task: Task | None = None,
        llm: LLMClient | None = None,
        observers: Sequence[Observer] = (),
        validation: Sequence[Instance] | None = None,
        runner: Runner | None = None,
    ) -> tuple[Self, Path]:
        rd = RunDirectory.open(Path(run_dir))
        co = cls(
            rd.config, task=task, llm=llm, observers=observers, validation=validation, runner=runner
        )
        state, path, warnings = load_latest(rd.path)
        check_same_validation(co.validation_set, state)
        load_state_into(co, state, path)  # a malformed state is a CheckpointError
        # what an uninterrupted run holds in memory: the population's rollouts on the current
        # batch (answered by the cache; the budget is restored so they are not counted twice)
        co.fitness_of(co.inner.population, co.batch(co.epoch, co.drawn), co.harness, drawn=co.drawn)
        co.budget.restore(state["budget"])
        co._seq = int(path.stem.split("-")[1])
        co._notes += [(ev.WARNING, {"message": w}) for w in warnings]
        co._notes.append(
            (ev.RUN_RESUMED, {"checkpoint": path.name, "generation": co.inner.generation})
        )
        return co, rd.path
