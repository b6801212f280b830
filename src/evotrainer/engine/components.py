"""The run's components, built once from its RunConfig: the task, the LLM stacks, the
evaluator, the validation set and the training pool, the defences, the validators, the
meta-judge, the event sink and the clock. ``Components`` is frozen: a step may use a component
(some keep memos: the evaluator's rollouts, the validator's results), never swap one. What the
run changes step by step is the RunState (engine/state.py).

``build_components`` also checks that the config names only what exists. The order of
construction is the order of the random streams' first use; keep it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from evotrainer.config import RunConfig
from evotrainer.defences.constitution import Constitution
from evotrainer.defences.learned import LearnedDefences
from evotrainer.defences.monitor import ProxyGapMonitor
from evotrainer.defences.robustness import RobustnessProbe
from evotrainer.engine.adapters import AdapterServer
from evotrainer.engine.rank_scores import RankScores
from evotrainer.engine.session import Events, Observer
from evotrainer.errors import ConfigError, DataError
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.fitness import FitnessJudge, input_text
from evotrainer.evaluation.from_config import bind_environment, evaluator_from_config
from evotrainer.evaluation.meta_judge import MetaJudge
from evotrainer.evaluation.runner import Runner
from evotrainer.evaluation.surrogate import FitnessSurrogate
from evotrainer.evaluation.validation import Validator
from evotrainer.harness.distill_mix import mix_genes
from evotrainer.harness.genes import gene_table, initial_genes
from evotrainer.harness.genome import HarnessBounds, HarnessGenome
from evotrainer.harness.training_set import (
    BatchSource,
    RealPool,
    given_pool,
    load_real_pool,
    load_training_data,
)
from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.llm.budget import Budget
from evotrainer.llm.spec import LLMStack, build_backend, build_stack
from evotrainer.llm.teacher import build_operator_stack
from evotrainer.notices import announce
from evotrainer.operators.fewshot import cut_to_tokens
from evotrainer.operators.registry import OPERATORS
from evotrainer.review.feedback import HumanFeedback
from evotrainer.run import events as ev
from evotrainer.run.data_identity import instances_sha256
from evotrainer.run.tracking import Tracker, build_tracker
from evotrainer.run.validation_set import (
    ValidationSet,
    check_given,
    check_s_val_weights,
    resolve_validation,
)
from evotrainer.tasks.base import Task, TaskGenerator
from evotrainer.tasks.registry import build_task, task_default
from evotrainer.tasks.tabular import is_data
from evotrainer.types import Instance

TERMINAL = ("defences", "terminal_data")
Note = tuple[str, dict[str, Any]]  # an event to emit once run() starts


@dataclass(frozen=True)
class Components:
    """What a run is made of (built from its config by ``build_components``)."""

    cfg: RunConfig
    events: Events
    task: Task
    stack: LLMStack
    operator_stack: LLMStack  # the operators' model (a teacher); ``stack`` unless set
    tracker: Tracker | None
    sampling: SamplingParams
    evaluator: Evaluator
    generator: TaskGenerator
    validation_set: ValidationSet
    held_out: frozenset[str]  # every validation instance id: never in a training signal
    real_pool: RealPool
    batches: BatchSource
    constitution: Constitution
    terminal_pool: list[Instance]
    judge: FitnessJudge
    monitor: ProxyGapMonitor | None
    surrogate: FitnessSurrogate | None
    learned: LearnedDefences
    validator: Validator  # the selection part
    confirmer: Validator | None  # the confirmation part
    base_harness: HarnessGenome  # the config's harness
    bounds: HarnessBounds
    harness_space: tuple[str, ...]  # the reward components the outer loop may weigh
    meta: MetaJudge
    reference_examples: list[str]  # few-shot candidates from the training pool's references
    rank_scores: RankScores
    adapters: AdapterServer

    @property
    def budget(self) -> Budget:
        return self.stack.budget

    def emit(self, type_: str, **data: Any) -> None:
        self.events.emit(type_, **data)

    @cached_property
    def data_sha256(self) -> dict[str, str]:
        """The sha256 of each part of the data (validation selection and confirmation, real
        training pool, terminal-reward pool), computed once."""
        vs = self.validation_set
        return {
            "selection": instances_sha256(vs.selection),
            "confirmation": instances_sha256(vs.confirmation),
            "training": instances_sha256(self.real_pool.instances),
            "terminal": instances_sha256(self.terminal_pool),
        }

    def data_sources(self) -> dict[str, str]:
        vs = self.validation_set
        terminal = self.cfg.defences.terminal_data
        return {
            "selection": vs.source,
            "confirmation": vs.source,
            "training": self.real_pool.source,
            "terminal": terminal or "synthetic",
        }


def build_components(
    config: RunConfig,
    task: Task | None = None,
    llm: LLMClient | None = None,
    observers: Sequence[Observer] = (),
    validation: Sequence[Instance] | None = None,
    runner: Runner | None = None,
    operator_llm: LLMClient | None = None,
    training: Sequence[Instance] | None = None,
) -> tuple[Components, list[Note]]:
    """The components of a run of ``config`` and the notes (warnings) to emit when it starts.
    ``task``, ``llm``, ``validation``, ``runner``, ``operator_llm`` and ``training`` (the real
    training instances: the pool and the terminal reward's, as ``run --data``'s file) replace
    what the config would build (CoEvolution's arguments)."""
    notes: list[Note] = []
    events = Events(observers)
    task = task or build_task(config.task)
    budget = Budget(max_calls=config.budget.max_calls, max_tokens=config.budget.max_tokens)
    ray = config.ray if config.runner == "ray" else None
    backend = llm or build_backend(config.model, seed=config.seed, ray=ray)
    stack = build_stack(backend, config.cache, budget)
    operator_stack = build_operator_stack(config, stack, operator_llm)  # same budget and cache
    tracker = build_tracker(config.tracking)  # its extra imported now (or an error)
    bind_environment(config, task, stack)  # an LLM-played user: on the same budget and cache
    evaluator = evaluator_from_config(config, task, stack.client, runner, references=True)
    generator = task.generator()
    vset = _validation_set(config, task, validation, notes)
    if training is not None:
        check_given(training, "training")
    # no validation instance (selection or confirmation) may reach a training signal
    held_out = frozenset(i.id for i in vset.instances)
    real_pool, pool = _pools(config, task, held_out, training, notes)
    d = config.defences
    constitution = _constitution(config, task)
    judge = _fitness_judge(config, task, evaluator, constitution, pool, events)
    learned = _learned(config, evaluator, held_out, pool)
    validator, confirmer = _validators(config, task, evaluator, vset)
    _reserve_final(config, task, budget, vset, validator)
    base, bounds = _harness(config, task, real_pool)
    check_components(config, set(evaluator.components), base, task, vset)
    learned_names = [n for n in ("discriminator", "learned") if n in evaluator.components]
    space = tuple(sorted(set(base.weights) | set(config.harness.switchable) | set(learned_names)))
    # the meta-objective vector; the archive ranks by its meta score (people's ratings too)
    feedback = HumanFeedback(config.meta, dict(config.outer.s_val_weights))  # people's ratings
    meta = MetaJudge(config.meta, validator, evaluator, feedback)
    adapters = AdapterServer(config, budget)
    evaluator.adapters = adapters  # a policy carrying a LoRA adapter is answered by its client
    c = Components(
        cfg=config,
        events=events,
        task=task,
        stack=stack,
        operator_stack=operator_stack,
        tracker=tracker,
        sampling=evaluator.sampling,
        evaluator=evaluator,
        generator=generator,
        validation_set=vset,
        held_out=held_out,
        real_pool=real_pool,
        batches=BatchSource(generator, real_pool.instances),
        constitution=constitution,
        terminal_pool=pool,
        judge=judge,
        monitor=ProxyGapMonitor(window=d.monitor_window) if d.monitor else None,
        surrogate=_surrogate(config),
        learned=learned,
        validator=validator,
        confirmer=confirmer,
        base_harness=base,
        bounds=bounds,
        harness_space=space,
        meta=meta,
        reference_examples=reference_examples(config, task, real_pool.instances),
        rank_scores=RankScores(task, evaluator, validator, real_pool, learned, config.seed),
        adapters=adapters,
    )
    return c, notes


def _validation_set(
    config: RunConfig, task: Task, validation: Sequence[Instance] | None, notes: list[Note]
) -> ValidationSet:
    """The validation set (the given instances, or the config's), its warnings noted."""
    if validation is None:
        vset = resolve_validation(task, config.validation, config.seed, columns=config.data_columns)
    else:
        vset = resolve_validation(task, config.validation, config.seed, list(validation))
    notes += [(ev.WARNING, {"message": w}) for w in vset.warnings]
    return vset


def _pools(
    config: RunConfig,
    task: Task,
    held_out: frozenset[str],
    training: Sequence[Instance] | None,
    notes: list[Note],
) -> tuple[RealPool, list[Instance]]:
    """The real training pool and the terminal reward's pool (real instances for
    training-side signals), never a validation instance: the given ``training`` instances for
    both, as ``run --data`` reads one file for both, or what the config names."""
    if training is not None:
        real_pool = given_pool(training, held_out, lambda inst: input_text(task, inst))
    else:
        real_pool = _real_pool(config, task, held_out)
    d = config.defences
    if not (d.terminal_share > 0 or d.learned_reward):
        return real_pool, []
    if training is not None and real_pool.instances:
        return real_pool, list(real_pool.instances)
    return real_pool, terminal_pool(config, task, held_out, notes)


def _real_pool(config: RunConfig, task: Task, held_out: frozenset[str]) -> RealPool:
    """The real training pool (``harness.real_data``), without the held-out instances."""
    return load_real_pool(
        task,
        config.harness.real_data,
        held_out,
        lambda inst: input_text(task, inst),
        config.data_columns,
    )


def _constitution(config: RunConfig, task: Task) -> Constitution:
    d = config.defences
    return Constitution(
        enabled=d.constitution,
        allow_private_data=d.allow_private_data,
        extra_patterns=tuple(d.extra_patterns),
        output_rules=task.constitution_rules(),
    )


def _fitness_judge(
    config: RunConfig,
    task: Task,
    evaluator: Evaluator,
    constitution: Constitution,
    pool: list[Instance],
    events: Events,
) -> FitnessJudge:
    d = config.defences
    return FitnessJudge(
        task,
        evaluator,
        constitution,
        config.inner.reflect_examples,
        terminal_share=d.terminal_share,
        terminal_pool=pool if d.terminal_share > 0 else (),
        terminal_sample=d.terminal_sample,
        s_val_weights=config.outer.s_val_weights,
        seed=config.seed,
        on_violation=events.on_violation,
        race_first=config.inner.race_first,
        race_margin=config.inner.race_margin,
    )


def _learned(
    config: RunConfig, evaluator: Evaluator, held_out: frozenset[str], pool: list[Instance]
) -> LearnedDefences:
    d = config.defences
    return LearnedDefences(
        evaluator,
        d.discriminator,
        d.learned_reward,
        dict(config.outer.s_val_weights),
        config.seed,
        exclude_ids=sorted(held_out),
        pool=pool,
    )


def _reserve_final(
    config: RunConfig, task: Task, budget: Budget, vset: ValidationSet, validator: Validator
) -> None:
    """With ``budget.reserve_final``, keeps back what the final validation costs (at most half
    of ``max_calls``)."""
    if config.budget.max_calls is not None and config.budget.reserve_final:
        cost = (
            len(vset.selection)
            + len(getattr(validator.probe, "instances", ()))
            + 2 * len(vset.confirmation)
        ) * task.max_calls_per_rollout()
        budget.reserve = min(cost, config.budget.max_calls // 2)


def _harness(
    config: RunConfig, task: Task, real_pool: RealPool
) -> tuple[HarnessGenome, HarnessBounds]:
    """The configured harness (its genes at their initial values: no real share without real
    data) and its hard bounds (the weight cap and the gene table, harness/genes.py)."""
    h = config.harness
    table = gene_table(
        h, config.outer, task, bool(real_pool.instances), extra=mix_genes(config.distill)
    )
    base = HarnessGenome(h.weights, initial_genes(table), h.task_mix)
    return base, HarnessBounds(h.weight_max, table)


def _surrogate(config: RunConfig) -> FitnessSurrogate | None:
    sg = config.surrogate
    if not sg.enabled:
        return None
    return FitnessSurrogate(
        config.seed, sg.min_train, sg.min_spearman, sg.margin, sg.explore, sg.window
    )


def _validators(
    config: RunConfig, task: Task, evaluator: Evaluator, vset: ValidationSet
) -> tuple[Validator, Validator | None]:
    """The selection part's validator (with the robustness probe) and the confirmation
    part's (None without one)."""
    truncation = config.task.truncation_note()
    validator = Validator(
        task,
        evaluator,
        vset.selection,
        config.outer.s_val_weights,
        vset.source,
        truncation=truncation,
        probe=robustness_probe(config, task, evaluator),
    )
    confirmer = (
        Validator(
            task,
            evaluator,
            vset.confirmation,
            config.outer.s_val_weights,
            vset.source + " (confirmation)",
            truncation=truncation,
        )
        if vset.confirmation
        else None
    )
    return validator, confirmer


def reference_examples(config: RunConfig, task: Task, pool: Sequence[Instance]) -> list[str]:
    """Few-shot candidates from the human references of the real training pool (cut)."""
    out = []
    for inst in pool:
        text = task.reference_example(inst)
        cut = cut_to_tokens(text, config.inner.example_tokens) if text else None
        if cut:
            out.append(cut)
    return out


def check_components(
    cfg: RunConfig, known: set[str], base: HarnessGenome, task: Task, vset: ValidationSet
) -> None:
    """The config names only reward components, s_val keys and operators that exist."""
    for key, names in (
        ("harness.weights", list(base.weights)),
        ("harness.switchable", cfg.harness.switchable),
    ):
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ConfigError(
                f"{key}: unknown reward component(s) {unknown}; known: {sorted(known)}"
            )
    if not any(w > 0 for w in base.weights.values()):
        raise ConfigError(
            f"harness.weights: no reward component has a weight above 0 ({dict(base.weights)}); "
            f"give at least one of {sorted(known)} a weight (a task plug-in gives them in its "
            "defaults: docs/write-your-own-task.md)"
        )
    probe_keys = ["robustness"] if cfg.defences.robustness_probe else []
    check_s_val_weights(cfg.outer.s_val_weights, task, vset.instances, probe_keys)
    unknown_ops = sorted(set(cfg.inner.operators or {}) - set(OPERATORS))
    if unknown_ops:
        raise ConfigError(
            f"inner.operators: unknown operator(s) {unknown_ops}; known: {sorted(OPERATORS)}"
        )


def robustness_probe(cfg: RunConfig, task: Task, evaluator: Evaluator) -> RobustnessProbe | None:
    n = cfg.defences.robustness_probe
    if n == 0:
        return None
    hostile = task.hostile_instances(n, cfg.seed)
    if not hostile:
        raise ConfigError(
            f"defences.robustness_probe: task {task.name!r} cannot make hostile inputs"
        )
    return RobustnessProbe(task, evaluator, hostile)


def terminal_pool(
    cfg: RunConfig, task: Task, held_out: frozenset[str], notes: list[Note]
) -> list[Instance]:
    """Real instances for training-side signals (the terminal reward, the learned reward;
    never a validation instance), or synthetic ones when the task's default file is absent
    (a note says so)."""
    path = cfg.defences.terminal_data
    if path and is_data(path):
        return load_training_data(task, path, cfg.data_columns, held_out).instances
    if path and (Path(path).exists() or path != task_default(task.name, *TERMINAL)):
        raise DataError(
            f"defences.terminal_data {path}: not found or not a file. A file you name must "
            "exist (only the task's default falls back to synthetic instances); set it to "
            "null for synthetic ones."
        )
    message = (
        f"the task's default terminal reward pool {path!r} not found (no data named)"
        if path
        else "no terminal reward pool (defences.terminal_data)"
    ) + ": using synthetic instances (held out from training) instead"
    if path:
        announce(message)
    notes.append((ev.WARNING, {"message": message}))
    return task.synthetic_validation(8, cfg.seed + 7919)
