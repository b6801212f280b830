"""The run's state: what a step changes and a checkpoint saves. ``RunState`` holds the two
optimisers (the inner loop's population, the harness optimiser with its archive) and the run's
counters; ``state_dict`` is the checkpoint's JSON: the RunState's fields plus the saved parts of
the components that keep memos (the validator's results, the judge's rejections and racing
counts, the learned defences, the monitor, the surrogate, the budget's counters).
``load_state_dict`` restores both from it. As gepa's ``GEPAState`` beside its engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evotrainer.config import RunConfig
from evotrainer.defences.learned import LearnedDefences
from evotrainer.defences.monitor import ProxyGapMonitor
from evotrainer.engine.checkpoint_schema import check_checkpoint
from evotrainer.engine.components import Components
from evotrainer.engine.session import Clock, finite
from evotrainer.evaluation.fitness import RaceTally
from evotrainer.evaluation.surrogate import FitnessSurrogate
from evotrainer.harness.distill_mix import TRIAL as DISTILL_TRIAL
from evotrainer.harness.genes import ENGINE_TRIALS
from evotrainer.harness.genome import HarnessGenome
from evotrainer.llm.base import SamplingParams, parallel_requests_of
from evotrainer.llm.budget import Budget
from evotrainer.loops.inner import OperatorResources, PolicyOptimizer
from evotrainer.loops.outer import HarnessOptimizer
from evotrainer.loops.rng import stream
from evotrainer.plain import typed
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.seeds import seed_policies
from evotrainer.types import ValidationResult


@dataclass
class Memos:
    """The run's state that lives in components built once from the config, which read and
    fill it as they go: the validator's results and raced-out ids, the judge's rejections and
    racing tally, the budget's counters, the learned defences, the monitor and the surrogate.
    The RunState holds the very objects, so the checkpoint is a function of the RunState
    alone, and a resume restores them in place (no component is ever re-assigned)."""

    validations: dict[str, ValidationResult]
    raced_out: set[str]
    rejected: dict[str, list[Any]]
    race: RaceTally
    budget: Budget
    learned: LearnedDefences
    monitor: ProxyGapMonitor | None
    surrogate: FitnessSurrogate | None

    @classmethod
    def of(cls, c: Components) -> Memos:
        return cls(
            validations=c.validator.memo,
            raced_out=c.validator.raced_out,
            rejected=c.judge.rejected,
            race=c.judge.race,
            budget=c.budget,
            learned=c.learned,
            monitor=c.monitor,
            surrogate=c.surrogate,
        )


@dataclass
class RunState:
    """Everything a run changes as it goes (engine/components.py holds what it is made of)."""

    inner: PolicyOptimizer  # the policy optimiser: population, fitness, operator statistics
    hopt: HarnessOptimizer  # the harness optimiser: current harness, archive, decisions
    # the harness that drew the main line's batch: the current one, except after an outer
    # step whose rerank winner (or a rollback) changed the harness, until the next draw
    drawn: HarnessGenome
    epoch: int = 0  # the batch's epoch (a new batch per harness epoch or per generation)
    outer_step: int = 0
    outer_due: bool = False  # a generation is done and its outer (or monitor) step is not
    trial_generations: int = 0  # generations run by harness trials
    initial: tuple[str, float] | None = None  # the best seed: (policy id, s_val)
    elapsed_before: float = 0.0  # seconds the run ran before this process (resumes)
    # CPU seconds the run spent before this process (None: resumed from a checkpoint written
    # before they were recorded, so the run's CPU is unknown)
    cpu_before: float | None = 0.0
    # this process's times and expected calls (never checkpointed: a resume starts its own)
    clock: Clock = field(default_factory=Clock)
    policies: dict[str, PolicyGenome] = field(default_factory=dict)  # every policy, lineage
    train_ids: set[str] = field(default_factory=set)  # every instance a training batch held
    suspects: set[str] = field(default_factory=set)  # flagged by the monitor since a step
    # distillation (engine/distill_step.py): rounds done, due, their records
    distill_rounds: int = 0
    distill_due: bool = False
    distillations: list[dict[str, Any]] = field(default_factory=list)
    # the pairs the last kept adapter learned (TrainingPair.to_dict): gene distill_warm_start
    distill_last_pairs: list[dict[str, Any]] = field(default_factory=list)
    # what the components fill as they go (the same objects: they are built before the state)
    memos: Memos | None = None
    # the run's facts the checkpoint records to refuse another data set on resume
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def harness(self) -> HarnessGenome:
        """The current harness (the harness optimiser's incumbent)."""
        return self.hopt.current


def outer_due_after(cfg: RunConfig, generation: int) -> bool:
    """Whether an outer (or monitor) step follows ``generation``: every ``outer.every``
    generations, never after the first's start nor after the last. The one rule: the loop,
    a resume with more generations and a checkpoint from before ``outer_due`` use it."""
    g = generation
    return 0 < g < cfg.inner.generations and g % cfg.outer.every == 0


def new_inner(c: Components, seeds: list[PolicyGenome]) -> PolicyOptimizer:
    """A policy optimiser for ``seeds``, its operators asking the operators' model."""
    cfg = c.cfg
    op_sampling = SamplingParams(
        temperature=cfg.model.operator_temperature,
        max_tokens=cfg.model.operator_max_tokens,
        seed=cfg.seed,
    )
    client = c.operator_stack.client  # the agent's own client unless operator_model
    opt = PolicyOptimizer(cfg.inner, seeds, stream(cfg.seed, "inner"), client, op_sampling)
    opt.parallel = parallel_requests_of(client)  # children made concurrently
    opt.resources = OperatorResources(
        templates=tuple(c.task.output_templates()),
        edits=dict(c.task.feedback_edits()),
        vocabulary=c.task.vocabulary(),
        max_tokens=cfg.model.max_tokens,
    )
    return opt


def run_trials(cfg: RunConfig) -> frozenset[str]:
    """The trials the run can make: a generation's always; a distillation's (a trial that
    trains a small adapter, engine/trials.py) with the data-mix genes and rerun trials."""
    if cfg.distill_trials():
        return ENGINE_TRIALS | {DISTILL_TRIAL}
    return ENGINE_TRIALS


def new_state(c: Components) -> RunState:
    """The state of a run that has not started: the config's harness, the seed policies."""
    cfg = c.cfg
    hopt = HarnessOptimizer(
        cfg.outer,
        c.base_harness,
        c.bounds,
        stream(cfg.seed, "outer"),
        c.harness_space,
        real_pool=bool(c.real_pool.instances),
        hints=c.task.harness_hints(),
        trials=run_trials(cfg),
    )
    hopt.archive.rank = c.meta.rank
    inner = new_inner(c, seed_policies(cfg.inner, c.task))
    facts = {
        "validation_ids": {
            "selection": [i.id for i in c.validation_set.selection],
            "confirmation": [i.id for i in c.validation_set.confirmation],
        },
        "data_sha256": c.data_sha256,
    }
    return RunState(inner=inner, hopt=hopt, drawn=hopt.current, memos=Memos.of(c), facts=facts)


def cpu_seconds(s: RunState) -> float | None:
    """The run's process CPU seconds: those before the last resume plus this process's (None
    when a checkpoint it resumed from did not record them)."""
    return None if s.cpu_before is None else s.cpu_before + s.clock.cpu_since_start()


def state_dict(s: RunState, elapsed_s: float, cpu_s: float | None = None) -> dict[str, Any]:
    """The checkpoint's JSON (plain data: evotrainer/plain.py reads it back): the RunState's
    fields and its memos; the run's seconds and CPU seconds as the caller read them
    (``cpu_seconds``; None: unknown)."""
    m = _memos(s)
    return {
        "inner": s.inner.state_dict(),
        "outer": s.hopt.state_dict(),
        "epoch": s.epoch,
        "drawn": s.drawn.to_json(),
        "outer_step": s.outer_step,
        "outer_due": s.outer_due,
        "distill": {
            "rounds": s.distill_rounds,
            "due": s.distill_due,
            "records": s.distillations,
            # only when an adapter was kept under the data-mix genes (older checkpoints lack it)
            **({"last_pairs": s.distill_last_pairs} if s.distill_last_pairs else {}),
        },
        "trial_generations": s.trial_generations,
        "initial": list(s.initial) if s.initial else None,
        "budget": m.budget.snapshot(),
        "elapsed_s": elapsed_s,
        "cpu_s": cpu_s,
        "policies": {pid: p.to_json() for pid, p in s.policies.items()},
        "learned": m.learned.state_dict(),
        "rejected": {pid: [str(v) for v in vs] for pid, vs in m.rejected.items()},
        "train_ids": sorted(s.train_ids),
        "validation_ids": s.facts.get("validation_ids"),
        "data_sha256": s.facts.get("data_sha256"),
        "race": [m.race.raced_out, m.race.race_saved],
        "monitor": m.monitor.state_dict() if m.monitor else None,
        "surrogate": m.surrogate.state_dict() if m.surrogate else None,
        "suspects": sorted(s.suspects),
        "validation_memo": {
            pid: {
                "s_val": r.s_val,
                "aggregates": dict(r.aggregates),
                "per_instance": list(r.per_instance),
                "n": r.n,
                "truncation": r.truncation,
            }
            for pid, r in m.validations.items()
        },
        "validation_raced_out": sorted(m.raced_out),
    }


def load_state_dict(s: RunState, data: dict[str, Any], cfg: RunConfig) -> None:
    """Restore ``s`` and its memos (in place) from a checkpoint's JSON (``cfg``: the rule a
    checkpoint from before ``outer_due`` is resumed by)."""
    check_checkpoint(data)  # every field's type first: TypeError naming the one wrong
    m = _memos(s)
    s.inner.load_state_dict(data["inner"])
    s.hopt.load_state_dict(data["outer"])
    s.epoch = int(data["epoch"])
    # checkpoints from before the field: the batch was drawn by the current harness
    s.drawn = HarnessGenome.from_json(data["drawn"]) if data.get("drawn") else s.harness
    s.outer_step = int(data["outer_step"])
    if "outer_due" in data:
        s.outer_due = bool(data["outer_due"])
    else:  # checkpoints from before the field: the rule, unless that step was made
        g = s.inner.generation
        s.outer_due = outer_due_after(cfg, g) and s.outer_step < g // cfg.outer.every
    distill = data.get("distill") or {}
    s.distill_rounds = int(distill.get("rounds", 0))
    s.distill_due = bool(distill.get("due", False))
    s.distillations = list(distill.get("records", []))
    s.distill_last_pairs = list(distill.get("last_pairs", []))
    s.trial_generations = int(data["trial_generations"])
    s.initial = (data["initial"][0], float(data["initial"][1])) if data["initial"] else None
    m.budget.restore(data["budget"])
    s.elapsed_before = float(data["elapsed_s"])
    s.cpu_before = float(data["cpu_s"]) if data.get("cpu_s") is not None else None
    s.clock.restart()
    s.policies = {pid: PolicyGenome.from_json(p) for pid, p in data["policies"].items()}
    m.learned.load_state_dict(data.get("learned") or {})
    m.rejected.clear()
    m.rejected.update({pid: [] for pid in data.get("rejected", {})})
    s.train_ids = set(data.get("train_ids", ()))
    m.race.raced_out, m.race.race_saved = data.get("race", (0, 0))
    if m.monitor and data.get("monitor"):
        m.monitor.load_state_dict(data["monitor"])
    if m.surrogate and data.get("surrogate"):
        m.surrogate.load_state_dict(data["surrogate"])
    s.suspects = set(data.get("suspects", []))
    m.validations.clear()
    m.validations.update(
        {
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
            for pid, r in data["validation_memo"].items()
        }
    )
    m.raced_out.clear()
    m.raced_out.update(data.get("validation_raced_out", ()))


def _memos(s: RunState) -> Memos:
    if s.memos is None:
        raise ValueError("a RunState made without its components' memos (engine.state.new_state)")
    return s.memos


def checkpoint_index(s: RunState) -> dict[str, Any]:
    """The checkpoint's readable index (checkpoints/index.json)."""
    best = s.inner.best()
    return {
        "generation": s.inner.generation,
        "outer_step": s.outer_step,
        "outer_due": s.outer_due,
        "distill": {
            "rounds": s.distill_rounds,
            "due": s.distill_due,
            "records": s.distillations,
        },
        "best_policy": best.id,
        "best_fitness": finite(s.inner.fitness[best.id].fitness),
        "last_s_val": s.hopt.s_val_history[-1] if s.hopt.s_val_history else None,
        "harness": s.harness.to_json(),
    }
