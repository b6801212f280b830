"""Harness trials (the outer step's test of its variants): ``outer.trials: rerank``, one short
inner run under the current harness whose population each variant ranks by its own weights;
``rerun``, a short inner run per variant from a copy of the population, concurrently when the
backend serves parallel requests."""

from __future__ import annotations

from evotrainer.engine.components import Components
from evotrainer.engine.distill_step import trial_adapter
from evotrainer.engine.generation import draw_batch, fitness_of, run_generation
from evotrainer.engine.session import finite
from evotrainer.engine.state import RunState
from evotrainer.engine.telemetry import phase
from evotrainer.evaluation.runner import ThreadRunner
from evotrainer.harness.distill_mix import TRIAL as DISTILL_TRIAL
from evotrainer.harness.genome import HarnessGenome
from evotrainer.llm.base import parallel_requests_of
from evotrainer.loops.inner import PolicyOptimizer
from evotrainer.loops.rng import stream
from evotrainer.run import events as ev
from evotrainer.run.estimate import TRAINING
from evotrainer.types import Instance

# a trial's population, batch, epoch and the harness that drew the batch
Trial = tuple[PolicyOptimizer, list[Instance], int, HarnessGenome]
Move = tuple[str, str]  # a queued neighbour move (kind, value)


def trial_started(c: Components, s: RunState, i: int, n: int, h: HarnessGenome) -> None:
    inner = c.cfg.inner
    per_generation = max(0, inner.population - inner.elites) * inner.tasks_per_generation
    calls = (inner.elites + c.cfg.outer.trial_generations * per_generation) * (
        c.task.max_calls_per_rollout()
    )
    phase(c, s, f"outer step {s.outer_step}: trial {i + 1}/{n}", TRAINING, calls)
    c.emit(
        ev.TRIAL_STARTED,
        outer_step=s.outer_step,
        trial=i + 1,
        trials=n,
        harness=h.to_json(),
        mode=c.cfg.outer.trials,
    )


def trial_finished(c: Components, s: RunState, i: int, n: int, opt: PolicyOptimizer) -> None:
    tbest = opt.best()
    c.emit(
        ev.TRIAL_FINISHED,
        outer_step=s.outer_step,
        trial=i + 1,
        trials=n,
        best_policy=tbest.id,
        best_fitness=finite(opt.fitness[tbest.id].fitness),
        budget=c.budget.snapshot(),
    )


def trial_run(
    c: Components, s: RunState, opt: PolicyOptimizer, h: HarnessGenome, trial: int | None = None
) -> tuple[list[Instance], int]:
    """Run ``opt`` (a copy) under ``h`` on the next epoch's fresh batch: the elites re-scored
    there, then ``outer.trial_generations`` generations; returns the batch and the epoch.
    ``trial``: this rerun trial's index, when the run makes distillation trials (the elites
    then carry a small adapter trained under ``h``'s data mix first: ``trial_adapter``)."""
    epoch = s.epoch + 1
    tb = draw_batch(c, s, epoch, h)
    opt.shrink_to_elites()
    opt.refit(fitness_of(c, s, opt.population, tb, h, epoch))
    if trial is not None and DISTILL_TRIAL in s.hopt.trials:
        trial_adapter(c, s, opt, h, tb, epoch, trial)
    for _ in range(c.cfg.outer.trial_generations):
        epoch = run_generation(c, s, opt, tb, h, epoch)
    return tb, epoch


def trial_runs(c: Components, variants: int) -> int:
    """How many trial runs an outer step with ``variants`` variants makes."""
    return 1 if c.cfg.outer.trials == "rerank" else variants


def rerun_trials(
    c: Components, s: RunState, variants: list[HarnessGenome]
) -> tuple[list[Trial], list[Move]]:
    """``outer.trials: rerun``: each variant runs its own trial from a copy of the
    population, on its own batch; returns the trials and the main line's neighbour queue."""

    def trial(i: int, h: HarnessGenome) -> Trial:  # independent of the others
        trial_started(c, s, i, len(variants), h)
        opt = s.inner.clone(stream(c.cfg.seed, "trial", s.outer_step, i))
        tb, epoch = trial_run(c, s, opt, h, i)
        trial_finished(c, s, i, len(variants), opt)
        return opt, tb, epoch, h

    # Trials make children by the operators only: with one neighbour queue they would all
    # make the same children, and sibling trials would read each other's rollouts of them
    # (a race under concurrency). The queue goes on with the winning trial.
    moves = list(s.inner.moves)
    # concurrently when the backend serves parallel requests (same results either way)
    width = len(variants) if parallel_requests_of(c.stack.client) > 1 else 1
    return ThreadRunner(width).map(lambda x: trial(*x), list(enumerate(variants))), moves


def rerank_trials(
    c: Components, s: RunState, variants: list[HarnessGenome]
) -> tuple[list[Trial], list[Move]]:
    """``outer.trials: rerank``: one trial run under the current harness on a fresh batch
    (the main line's next generation, its neighbour queue included), then each variant
    ranks that population by its own weights, and by its own real share: the batch's real
    and synthetic instances weighted to it (``share_weights``). Ranking needs no new
    rollouts except for a child that racing stopped early and a variant would promote: it
    meets the rest of the batch. Every variant's trial shares the batch and the children,
    so the validation that follows compares what the variants choose, not which trial was
    luckier with its children. A winner's L and task mix apply from the next batch."""
    n = len(variants)
    drawer = s.harness
    trial_started(c, s, 0, n, drawer)
    opt = s.inner.clone(stream(c.cfg.seed, "trial", s.outer_step, 0))
    opt.moves = list(s.inner.moves)  # one trial run: no sibling shares the queue
    tb, epoch = trial_run(c, s, opt, drawer)
    trials: list[Trial] = []
    for i, h in enumerate(variants):
        if i or h.id != drawer.id:
            trial_started(c, s, i, n, h)
        twin = opt.clone(stream(c.cfg.seed, "trial", s.outer_step, i))
        twin.refit(fitness_of(c, s, twin.population, tb, h, epoch, race=opt, drawn=drawer))
        trial_finished(c, s, i, n, twin)
        trials.append((twin, tb, epoch, drawer))
    return trials, list(opt.moves)
