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

The run is split by data, as pymoo's ``minimize`` over its ``Algorithm``: ``Components``
(engine/components.py), built once from the config and frozen; ``RunState``
(engine/state.py), what the run changes and a checkpoint saves; and step functions over the
two, each callable alone: engine/start.py (the first generation), generation.py (one inner
generation), validate.py (validation, archive, anchor), outer_step.py and trials.py (the
harness step), distill_step.py (distillation), outcome.py (confirmation, summary, results).
This file holds the loop (``run``), the checkpoints and ``resume``; the optimisers stay
outside it, ask/tell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from evotrainer.config import RunConfig
from evotrainer.engine import outer_step as outer
from evotrainer.engine.adapters import check_distill
from evotrainer.engine.checkpoint_schema import checked_checkpoint
from evotrainer.engine.components import Note, build_components
from evotrainer.engine.distill_step import DistillStep, distill_due_after, weights_first_due
from evotrainer.engine.generation import draw_batch, retune_threads, run_generation
from evotrainer.engine.outcome import RunResult, finish
from evotrainer.engine.resume import (
    counted_at_finish,
    generations_done,
    reread_population,
    with_settings,
)
from evotrainer.engine.session import Observer
from evotrainer.engine.start import read_warm_start, start
from evotrainer.engine.state import (
    RunState,
    checkpoint_index,
    cpu_seconds,
    load_state_dict,
    new_state,
    outer_due_after,
    state_dict,
)
from evotrainer.engine.telemetry import (
    check_time,
    elapsed,
    emit_estimate,
    emit_generation,
    generation_phase,
    watch_generation,
)
from evotrainer.engine.validate import validate_generation
from evotrainer.errors import BudgetExceeded, EvoTrainerError, TimeLimitReached
from evotrainer.evaluation.runner import Runner
from evotrainer.llm.base import LLMClient
from evotrainer.report.build import build_report
from evotrainer.run import events as ev
from evotrainer.run.checkpoint import (
    checkpoint_files,
    checkpoint_seq,
    load_latest,
    load_state_into,
    save_checkpoint,
)
from evotrainer.run.data_identity import check_same_data
from evotrainer.run.rundir import RunDirectory
from evotrainer.run.tracking import attach
from evotrainer.run.validation_set import check_same_validation
from evotrainer.run.warm_start import WarmStart
from evotrainer.tasks.base import Task
from evotrainer.types import Instance

__all__ = ["CoEvolution"]


INTERRUPTED = "interrupted (Ctrl-C): the run did not finish; its last checkpoint stands"


class CoEvolution:
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
        training: Sequence[Instance] | None = None,
    ) -> None:
        """``operator_llm``: the client the LLM-driven operators ask (a teacher), instead of
        the one ``operator_model`` names (default: the agent model, ``llm``). ``validation``
        and ``training``: instances instead of the files the config names (``training``: the
        real training pool and the terminal reward's, as ``run --data``'s file)."""
        self.components, notes = build_components(
            config, task, llm, observers, validation, runner, operator_llm, training
        )
        self.state: RunState = new_state(self.components)
        self._notes: list[Note] = notes  # events to emit once run() starts
        self.run_dir: Path | None = None
        self._seq = 0  # the last checkpoint's number
        self._stopped_at_resume: BudgetExceeded | None = None  # the cap, reached by a resume
        self._start_over = False  # resumed before its first checkpoint: run() starts it
        self._rewrite_config = False  # resumed with new settings: config.yaml records them
        self._reopen = False  # a finished run continued (resume --more-generations)
        check_distill(config)

    # -- the run -------------------------------------------------------------------------
    def run(self, run_dir: str | Path | None = None) -> RunResult:
        c, s = self.components, self.state
        rd = None
        resuming = s.initial is not None or self._start_over
        warm = read_warm_start(c, s) if s.initial is None else None  # before any file
        if run_dir is not None:
            rd = RunDirectory.open_or_create(
                Path(run_dir),
                c.cfg,
                resuming,
                rewrite_config=self._rewrite_config,
                reopen=self._reopen,
            )
            self.run_dir = rd.path
            c.adapters.write_to(rd.path)
            assert rd.log is not None  # open_or_create opens events.jsonl
            c.events.observers.append(rd.log)
            c.meta.attach(rd.path)
        config = c.cfg.model_dump(mode="json")
        self._notes += attach(
            c.tracker, c.events.observers, self.run_dir, config, resuming, build_report
        )
        for type_, data in self._notes:
            c.emit(type_, **data)
        self._notes = []
        stopped = "completed"
        try:
            self._loop(warm)
        except TimeLimitReached as exc:
            stopped = "timeout"
            c.emit(ev.BUDGET_EXHAUSTED, message=str(exc), budget=c.budget.snapshot())
        except BudgetExceeded as exc:
            stopped = "budget"
            c.emit(ev.BUDGET_EXHAUSTED, message=str(exc), budget=c.budget.snapshot())
        except BaseException as exc:
            if isinstance(exc, EvoTrainerError):
                c.emit(ev.RUN_FAILED, message=str(exc), budget=c.budget.snapshot())
            if isinstance(exc, KeyboardInterrupt):
                c.emit(ev.RUN_INTERRUPTED, message=INTERRUPTED, budget=c.budget.snapshot())
            if c.tracker is not None:
                c.tracker.close()
            if rd is not None:
                rd.close()
            raise
        try:
            return finish(c, self.state, stopped, self.run_dir)
        except KeyboardInterrupt:  # validating, confirming, writing the results: no summary
            c.emit(ev.RUN_INTERRUPTED, message=INTERRUPTED, budget=c.budget.snapshot())
            raise
        finally:
            if rd is not None:
                rd.close()

    def _loop(self, warm: WarmStart | None) -> None:
        """Start (or go on from the checkpoint), then generations with their outer and
        distillation steps, each followed by a checkpoint."""
        c, s = self.components, self.state
        if self._stopped_at_resume is not None:
            raise self._stopped_at_resume  # the cap was reached re-reading the population
        if s.initial is None:
            start(c, s, warm, self.run_dir)  # says what the run will cost once its data is known
            s.distill_due = weights_first_due(c, s)  # the references' adapter comes first
            self.checkpoint()
        else:
            emit_estimate(c, s)
        batch = draw_batch(c, s, s.epoch, s.drawn)
        if s.outer_due:  # resumed from the checkpoint written before an outer step
            batch = self._outer_or_monitor_step(batch)
        if s.distill_due:  # resumed from the checkpoint written before a distillation
            self._distill_and_checkpoint(batch)
        while s.inner.generation < c.cfg.inner.generations:
            check_time(c, s)
            retune_threads(c, s)
            generation_phase(c, s)
            s.epoch = run_generation(c, s, s.inner, batch, s.harness, s.epoch, s.drawn)
            emit_generation(c, s, s.inner, batch)
            watch_generation(c, s)
            validate_generation(c, s, batch)
            g = s.inner.generation
            s.outer_due = outer_due_after(c.cfg, g)
            s.distill_due = distill_due_after(c, s, g) and g < c.cfg.inner.generations
            self.checkpoint()
            if s.outer_due:
                check_time(c, s)
                batch = self._outer_or_monitor_step(batch)
            if s.distill_due:
                self._distill_and_checkpoint(batch)

    def _outer_or_monitor_step(self, batch: list[Instance]) -> list[Instance]:
        """The step due after a generation: an outer step (when on and affordable), else the
        monitor step; then a checkpoint. Returns the main line's batch."""
        c, s = self.components, self.state
        if c.cfg.outer.enabled and outer.outer_affordable(c, s):
            batch = outer.outer_step(c, s, batch)
        else:
            outer.monitor_step(c, s)
        s.outer_due = False
        self.checkpoint()
        return batch

    def _distill_and_checkpoint(self, batch: list[Instance]) -> None:
        DistillStep(self.components, self.state).run(batch)
        self.checkpoint()

    # -- checkpoints ---------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The checkpoint's JSON (engine/state.py)."""
        return state_dict(self.state, self.elapsed(), cpu_seconds(self.state))

    def load_state_dict(self, data: dict[str, Any]) -> None:
        load_state_dict(self.state, data, self.components.cfg)
        initial = self.state.initial
        self.components.meta.use_baseline(initial[0] if initial else None)

    def checkpoint(self) -> None:
        if self.run_dir is None:
            return
        self._seq += 1
        index = checkpoint_index(self.state)
        path = save_checkpoint(self.run_dir, self._seq, self.state_dict(), index)
        self.components.emit(ev.CHECKPOINT, generation=self.state.inner.generation, file=path.name)

    def elapsed(self) -> float:
        return elapsed(self.components, self.state)

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
        training: Sequence[Instance] | None = None,
    ) -> tuple[Self, Path]:
        """Continue the run in ``run_dir``. ``base_url``/``ray_address``/``operator_base_url``:
        the endpoints the command line named (config.yaml's are taken only when they match or
        are the environment's: run/resume_settings.py). ``settings``: ``{"budget.max_calls":
        400}``, what the command line sets anew (``resume --max-calls``); config.yaml records
        it. ``operator_llm``, ``validation``, ``training``: as for the constructor (a run
        given its data in memory is resumed with the same data).
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
        if saved is not None:
            checked_checkpoint(saved[0], saved[1])  # every field's type, naming the one wrong
        if more:
            done = generations_done(saved, rd.path)
            settings = {**(settings or {}), "inner.generations": done + more}
        config = with_settings(rd.config, settings, rd.path / "config.yaml")
        co = cls(
            config,
            task=task,
            llm=llm,
            observers=observers,
            validation=validation,
            runner=runner,
            operator_llm=operator_llm,
            training=training,
        )
        co._rewrite_config = config != rd.config
        co._reopen = finished
        if saved is None:
            return co._start_again(), rd.path
        state, path, warnings = saved
        c, s = co.components, co.state
        check_same_validation(c.validation_set, state)
        check_same_data(state.get("data_sha256"), c.data_sha256, c.data_sources())
        load_state_into(co, state, path)  # a malformed state is a CheckpointError
        if finished:
            counted_at_finish(c, rd.path)  # the final validation's calls, in summary.json
        s.clock.calls_before = c.budget.snapshot()["backend_calls"]
        c.adapters.read_from(rd.path)  # a population carrying an adapter is re-read with it
        co._stopped_at_resume = reread_population(c, s, state["budget"])
        co._seq = checkpoint_seq(path)
        co._notes += [(ev.WARNING, {"message": w}) for w in warnings]
        resumed: dict[str, Any] = {"checkpoint": path.name, "generation": s.inner.generation}
        if (best := s.hopt.archive.best()) is not None:  # the console's best validated s_val
            resumed |= {"best_policy": best.policy.id, "best_s_val": best.s_val}
        if more:
            g, total = s.inner.generation, c.cfg.inner.generations
            # the steps a run of the new length takes after generation g (the finished one
            # took none: g was its last)
            s.outer_due = s.outer_due or outer_due_after(c.cfg, g)
            s.distill_due = s.distill_due or (distill_due_after(c, s, g) and g < total)
            resumed["more_generations"] = more
        co._notes.append((ev.RUN_RESUMED, resumed))
        return co, rd.path

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
