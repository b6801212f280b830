"""State and resume: the run's full state as plain data (``state_dict``/``load_state_dict``),
a checkpoint after every generation and outer step (run/checkpoint.py), and ``resume``, which
rebuilds a CoEvolution from a run directory's config (as far as run/resume_settings.py takes
it) and its newest intact checkpoint. The data is checked by content (run/data_identity.py);
the calls a resume makes to re-read the population's rollouts count against the budget."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from evotrainer.config import RunConfig
from evotrainer.engine.telemetry import Observer, _finite
from evotrainer.errors import BudgetExceeded, CheckpointError
from evotrainer.evaluation.runner import Runner
from evotrainer.harness.genome import HarnessGenome
from evotrainer.llm.base import LLMClient
from evotrainer.llm.budget import Budget
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.run.checkpoint import (
    checkpoint_files,
    checkpoint_seq,
    load_latest,
    load_state_into,
    save_checkpoint,
)
from evotrainer.run.data_identity import check_same_data, instances_sha256
from evotrainer.run.plain import typed
from evotrainer.run.rundir import RunDirectory
from evotrainer.run.validation_set import check_same_validation
from evotrainer.tasks.base import Task
from evotrainer.types import Instance, ValidationResult


def with_settings(config: RunConfig, settings: Mapping[str, Any] | None, source: Path) -> RunConfig:
    """``config`` with ``settings`` (dotted keys -> values, taken as they are) applied."""
    if not settings:
        return config
    from evotrainer.config import config_from_dict, set_value

    data = config.model_dump(mode="json")
    for key, value in settings.items():
        set_value(data, key, value)
    return config_from_dict(data, f"{source} + the command line")


def _done(saved: Any, run_dir: Path) -> int:
    """The generations a run made, from its newest checkpoint (``resume --more-generations``)."""
    if saved is None:
        raise CheckpointError(
            f"{run_dir}: no checkpoint to continue from; `evotrainer resume {run_dir}` without "
            "--more-generations starts it again"
        )
    try:
        return int(saved[0]["inner"]["generation"])
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(f"{saved[1]}: no generation count in the checkpoint") from None


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
            "distill": {
                "rounds": self.distill_rounds,
                "due": self.distill_due,
                "records": self.distillations,
            },
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
            "data_sha256": self.data_sha256(),
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
        distill = s.get("distill") or {}
        self.distill_rounds = int(distill.get("rounds", 0))
        self.distill_due = bool(distill.get("due", False))
        self.distillations = list(distill.get("records", []))
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
            pid: typed(
                ValidationResult,
                {
                    "s_val": r["s_val"],
                    "aggregates": r["aggregates"],
                    "per_instance": tuple(r["per_instance"]),
                    "n": r["n"],
                    "truncation": r["truncation"],
                },
            )
            for pid, r in s["validation_memo"].items()
        }
        self.validator.raced_out = set(s.get("validation_raced_out", ()))

    def data_sha256(self) -> dict[str, str]:
        """The sha256 of each part of the data (validation selection and confirmation, real
        training pool, terminal-reward pool), computed once."""
        if self._data_sha256 is None:
            vs = self.validation_set
            self._data_sha256 = {
                "selection": instances_sha256(vs.selection),
                "confirmation": instances_sha256(vs.confirmation),
                "training": instances_sha256(self.real_pool.instances),
                "terminal": instances_sha256(self.terminal_pool),
            }
        return self._data_sha256

    def _data_sources(self) -> dict[str, str]:
        vs = self.validation_set
        terminal = self.cfg.defences.terminal_data
        return {
            "selection": vs.source,
            "confirmation": vs.source,
            "training": self.real_pool.source,
            "terminal": terminal or "synthetic",
        }

    def checkpoint(self) -> None:
        if self.run_dir is None:
            return
        self._seq += 1
        best = self.inner.best()
        index = {
            "generation": self.inner.generation,
            "outer_step": self.outer_step,
            "outer_due": self.outer_due,
            "distill": {
                "rounds": self.distill_rounds,
                "due": self.distill_due,
                "records": self.distillations,
            },
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
        base_url: str | None = None,
        ray_address: str | None = None,
        settings: Mapping[str, Any] | None = None,
        operator_base_url: str | None = None,
        operator_llm: LLMClient | None = None,
        more_generations: int = 0,
    ) -> tuple[Self, Path]:
        """Continue the run in ``run_dir``. ``base_url``/``ray_address``/``operator_base_url``:
        the endpoints the command line named (config.yaml's are taken only when they match or
        are the environment's: run/resume_settings.py). ``settings``: ``{"budget.max_calls":
        400}``, what the command line sets anew (``resume --max-calls``); config.yaml records
        it. ``operator_llm``: the teacher client, as for the constructor.
        ``more_generations``: continue, finished or not, for that many generations more than
        the run has made (inner.generations becomes done + N; as Optuna continues a study),
        taking the steps a run configured that long would take after its last generation."""
        more = max(0, more_generations)
        rd = RunDirectory.open(
            Path(run_dir), base_url, ray_address, operator_base_url, finished_ok=more > 0
        )
        finished = (rd.path / "summary.json").exists()
        # the checkpoint is read before a model loads: a damaged run is named at once
        saved = load_latest(rd.path) if checkpoint_files(rd.path / "checkpoints") else None
        if more:
            settings = {**(settings or {}), "inner.generations": _done(saved, rd.path) + more}
        config = with_settings(rd.config, settings, rd.path / "config.yaml")
        co = cls(
            config,
            task=task,
            llm=llm,
            observers=observers,
            validation=validation,
            runner=runner,
            operator_llm=operator_llm,
        )
        co._rewrite_config = config != rd.config
        co._reopen = finished
        if saved is None:
            return co._start_again(), rd.path
        state, path, warnings = saved
        check_same_validation(co.validation_set, state)
        check_same_data(state.get("data_sha256"), co.data_sha256(), co._data_sources())
        load_state_into(co, state, path)  # a malformed state is a CheckpointError
        co.adapter_root = rd.path  # a population carrying an adapter is re-read with it
        co._reread_population(state["budget"])
        co._seq = checkpoint_seq(path)
        co._notes += [(ev.WARNING, {"message": w}) for w in warnings]
        resumed = {"checkpoint": path.name, "generation": co.inner.generation}
        if more:
            g, total = co.inner.generation, co.cfg.inner.generations
            # the steps a run of the new length takes after generation g (the finished one
            # took none: g was its last)
            co.outer_due = co.outer_due or (g % co.cfg.outer.every == 0 and 0 < g < total)
            co.distill_due = co.distill_due or (co._distill_due_after(g) and g < total)
            resumed["more_generations"] = more
        co._notes.append((ev.RUN_RESUMED, resumed))
        return co, rd.path

    def _reread_population(self, spent: dict[str, Any]) -> None:
        """What an uninterrupted run holds in memory: the population's rollouts on the current
        batch. Answered by the cache when it is on; calls that reach the backend count against
        the budget (``spent``: the counters the checkpoint restored), so the server never sees
        more than ``budget.max_calls`` across a resume. The requests' counters stay those of
        the checkpoint (they are a function of the run). A cap reached here ends the run at its
        start (``run()``)."""
        try:
            batch = self.batch(self.epoch, self.drawn)
            self.fitness_of(self.inner.population, batch, self.harness, drawn=self.drawn)
        except BudgetExceeded as exc:
            self._stopped_at_resume = exc
        self.budget.restore({k: spent[k] for k in Budget.REQUEST_COUNTERS if k in spent})

    def _start_again(self) -> Self:
        """A run stopped before its first checkpoint (killed, or failed before its first
        generation was saved) has nothing to continue from: it starts again from the beginning
        in its own directory, as `evotrainer run` would have."""
        self._start_over = True
        self._notes.append(
            (
                ev.WARNING,
                {
                    "message": "no checkpoint was written before the run stopped: it starts "
                    "again from the beginning"
                },
            )
        )
        return self
