"""The driver: wires the inner loop (policy GA) and the outer loop (harness evolution).

One generation: the current harness draws a batch (real training instances and synthetic ones,
harness/training_set.py); the inner optimiser asks for candidates; the evaluator runs them
(instance-major, racing: a child meets a few instances first) and scores every reward
component; the harness weights turn score vectors into fitness; the optimiser is told; the
fittest children not validated yet race on the selection part of the validation data and the
best validated policy becomes the population's anchor (a parent of a share of the children). Every
``outer.every`` generations: validate the best policy (s_val, on the selection part of the
validation data, racing against the best so far), maybe roll back, ask the harness optimiser for
variants, trial each by a short inner run from a copy of the current population, validate the
trials' best policies, tell the harness optimiser, continue from the winning trial. At the end
the selection winner and the best seed meet the held-out confirmation part (paired, with an
interval), and the return rule picks one. A checkpoint is written after every generation and
every outer step.

This file holds the loop (``run``) and its start; the optimisers stay outside it, ask/tell. The
parts, in reading order (engine/): wiring.py builds the components from the config,
generation.py runs one inner generation, validate.py validates and archives, outer_step.py is
the harness step, telemetry.py emits the events, state.py checkpoints and resumes, outcome.py
confirms, builds the summary and writes the results.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from pathlib import Path

from evotrainer.config import RunConfig
from evotrainer.engine.distill_step import DistillStep
from evotrainer.engine.generation import Generation
from evotrainer.engine.outcome import Outcome, RunResult
from evotrainer.engine.outer_step import OuterStep
from evotrainer.engine.state import State
from evotrainer.engine.telemetry import Observer, Telemetry
from evotrainer.engine.validate import Validation
from evotrainer.engine.wiring import Wiring
from evotrainer.errors import BudgetExceeded, EvoTrainerError, TimeLimitReached
from evotrainer.evaluation.runner import Runner
from evotrainer.llm.base import LLMClient
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.run.rundir import RunDirectory
from evotrainer.run.tracking import attach
from evotrainer.run.warm_start import WarmStart
from evotrainer.tasks.base import Task
from evotrainer.types import Instance

__all__ = ["CoEvolution", "Observer", "RunResult"]


class CoEvolution(
    Wiring, Generation, Validation, OuterStep, DistillStep, Telemetry, State, Outcome
):
    """Build it from a RunConfig (and optionally your own task, LLM client or validation set);
    call ``run()``. ``CoEvolution.resume(run_dir)`` continues a killed run."""

    def __init__(
        self,
        config: RunConfig,
        *,
        task: Task | None = None,
        llm: LLMClient | None = None,
        observers: Sequence[Observer] = (),
        validation: Sequence[Instance] | None = None,
        runner: Runner | None = None,
        operator_llm: LLMClient | None = None,
    ) -> None:
        """``operator_llm``: the client the LLM-driven operators ask (a teacher), instead of
        the one ``operator_model`` names (default: the agent model, ``llm``)."""
        self._wire(config, task, llm, observers, validation, runner, operator_llm)

    # -- the run -------------------------------------------------------------------------
    def run(self, run_dir: str | Path | None = None) -> RunResult:
        rd = None
        resuming = self.initial is not None or self._start_over
        warm = self._read_warm_start() if self.initial is None else None  # before any file
        if run_dir is not None:
            rd = RunDirectory.open_or_create(
                Path(run_dir),
                self.cfg,
                resuming,
                rewrite_config=self._rewrite_config,
                reopen=self._reopen,
            )
            self.run_dir = rd.path
            self.observers.append(rd.log)
            self.meta.attach(rd.path)
        config = self.cfg.model_dump(mode="json")
        warning = attach(self.tracker, self.observers, self.run_dir, config, resuming)
        if warning:
            self._notes.append((ev.WARNING, {"message": warning}))
        for type_, data in self._notes:
            self.emit(type_, **data)
        self._notes = []
        stopped = "completed"
        try:
            if self._stopped_at_resume is not None:
                raise self._stopped_at_resume  # the cap was reached re-reading the population
            if self.initial is None:
                self._start(warm)  # says what the run will cost once its data is known
            else:
                self._emit_estimate()
            batch = self.batch(self.epoch, self.drawn)
            if self.outer_due:  # resumed from the checkpoint written before an outer step
                batch = self._outer_or_monitor_step(batch)
            if self.distill_due:  # resumed from the checkpoint written before a distillation
                self._distill_and_checkpoint(batch)
            while self.inner.generation < self.cfg.inner.generations:
                self._check_time()
                self._retune_threads()
                self.epoch = self._generation(
                    self.inner, batch, self.harness, self.epoch, self.drawn
                )
                self._emit_generation(self.inner, batch)
                self._watch_generation()
                self._validate_generation(batch)
                g = self.inner.generation
                self.outer_due = g % self.cfg.outer.every == 0 and g < self.cfg.inner.generations
                self.distill_due = self._distill_due_after(g) and g < self.cfg.inner.generations
                self.checkpoint()
                if self.outer_due:
                    self._check_time()
                    batch = self._outer_or_monitor_step(batch)
                if self.distill_due:
                    self._distill_and_checkpoint(batch)
        except TimeLimitReached as exc:
            stopped = "timeout"
            self.emit(ev.BUDGET_EXHAUSTED, message=str(exc), budget=self.budget.snapshot())
        except BudgetExceeded as exc:
            stopped = "budget"
            self.emit(ev.BUDGET_EXHAUSTED, message=str(exc), budget=self.budget.snapshot())
        except BaseException as exc:
            if isinstance(exc, EvoTrainerError):
                self.emit(ev.RUN_FAILED, message=str(exc), budget=self.budget.snapshot())
            if self.tracker is not None:
                self.tracker.close()
            if rd is not None:
                rd.close()
            raise
        try:
            return self._finish(stopped)
        finally:
            if rd is not None:
                rd.close()

    def _outer_or_monitor_step(self, batch: list[Instance]) -> list[Instance]:
        """The step due after a generation: an outer step (when on and affordable), else the
        monitor step; then a checkpoint. Returns the main line's batch."""
        if self.cfg.outer.enabled and self._outer_affordable():
            batch = self._outer_step(batch)
        else:
            self._monitor_step()
        self.outer_due = False
        self.checkpoint()
        return batch

    def _distill_and_checkpoint(self, batch: list[Instance]) -> None:
        self._distill_step(batch)
        self.checkpoint()

    def _start(self, warm: WarmStart | None = None) -> None:
        self.emit(
            ev.RUN_STARTED,
            config=self.cfg.model_dump(mode="json"),
            model=self.stack.backend.describe(),
            operator_model=(
                self.operator_stack.backend.describe()
                if self.operator_stack is not self.stack
                else None
            ),
            run_dir=str(self.run_dir) if self.run_dir else None,
        )
        vs = self.validation_set
        self.emit(
            ev.VALIDATION_SET,
            source=vs.source,
            n=len(vs.selection),
            confirmation=len(vs.confirmation),
            message=vs.message,
        )
        self.emit(
            ev.TRAINING_SET,
            real=len(self.real_pool.instances),
            source=self.real_pool.source,
            real_share=self.harness.real_share,
            message=self.real_pool.message,
        )
        if vs.synthetic:
            self.emit(ev.WARNING, message=vs.message)
        if vs.confirmation_note:
            self.emit(ev.WARNING, message=vs.confirmation_note)
        if warm is not None:
            self._warm_start(warm)
        self._emit_estimate()
        self.drawn = self.harness
        batch = self.batch(self.epoch, self.harness)
        initial = self.inner.ask()
        self.inner.tell(self.fitness_of(initial, batch, self.harness))
        self._emit_generation(self.inner, batch)
        self._watch_generation()
        best = self.inner.best()
        seeds: list[PolicyGenome] = []
        if self.cfg.validation.validate_seeds:
            # The proxy ranks on synthetic meetings; a seed that is better on the real data must
            # not be lost because the proxy prefers another. The baseline a run must beat is
            # the best seed, so that is the initial s_val.
            seeds = [
                p
                for p in initial
                if p.id != best.id
                and p.lineage.operator in ("seed", "import")
                and math.isfinite(self.inner.fitness[p.id].fitness)
            ]
            self.validator.validate([best, *seeds])  # together: one prefill per meeting
        first = self.validate([best], "initial")[best.id]
        s = first.s_val
        div = self.meta.population_diversity(self.inner, batch)
        self._archive(best, self.harness, first, div)
        initial_best = (best.id, s)
        results = self.validate(seeds, "seed")
        for p in seeds:
            s_seed = results[p.id].s_val
            self._archive(p, self.harness, results[p.id], div)
            if s_seed > initial_best[1]:
                initial_best = (p.id, s_seed)
        self.initial = initial_best
        self.meta.baseline = initial_best[0]
        self.hopt.observe(self.meta.score(self.meta.vector(best.id, first, div)))
        self._anchor_best(batch)
        self.checkpoint()

    def _read_warm_start(self) -> WarmStart | None:
        """What ``init_from`` hands over (run/warm_start.py), read before the run directory is
        made: a source that cannot be used is refused before any file is written."""
        if not self.cfg.init_from:
            return None
        from evotrainer.run.warm_start import load_warm_start

        return load_warm_start(
            self.cfg.init_from,
            self.task.name,
            set(self.evaluator.components),
            max(1, self.cfg.inner.population - len(self.inner.seeds)),
            bool(self.real_pool.instances),
            self.cfg.harness.real_share,
        )

    def _warm_start(self, w: WarmStart) -> None:
        """Seed the population and the harness from an earlier run."""
        self.inner = self._new_inner([*w.policies, *self.inner.seeds])
        if w.harness is not None:
            h = w.harness.bounded(self.bounds)
            self.hopt.base = self.hopt.current = h
            self.hopt.space = tuple(sorted(set(self.hopt.space) | set(h.active())))
        self._carry_ratings(w)
        self.emit(ev.WARM_START, **w.to_json())

    def _carry_ratings(self, w: WarmStart) -> None:
        """The earlier run's ratings into this run's ratings file (read at every outer step
        and at the end). Without a run directory they are not kept (the note says so)."""
        if not w.ratings:
            return
        from evotrainer.review.store import RatingStore, ReplayedRating

        if self.run_dir is None:
            w.notes.append(f"{len(w.ratings)} ratings not carried over: no run directory")
            w.ratings = []
            return
        store = RatingStore(self.run_dir)
        for r in w.ratings:
            with contextlib.suppress(ReplayedRating):  # carried before: a run started again
                store.add(r)
        w.notes.append(f"{len(w.ratings)} ratings carried over from {w.source.name}")
