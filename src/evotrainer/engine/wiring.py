"""Wiring: build a run's components from its RunConfig (task, LLM stack, evaluator, validation
set, training pool, defences, validators, harness and policy optimisers, meta-judge) and check
that the config names only what exists. The order of construction is the order of the random
streams' first use; keep it."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evotrainer.config import RunConfig
from evotrainer.defences.constitution import Constitution
from evotrainer.defences.learned import LearnedDefences
from evotrainer.defences.monitor import ProxyGapMonitor
from evotrainer.defences.robustness import RobustnessProbe
from evotrainer.engine.telemetry import Observer
from evotrainer.errors import BudgetExceeded, ConfigError, DataError
from evotrainer.evaluation.confirmation import Confirmation
from evotrainer.evaluation.error_rate import ErrorRateGuard
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.fitness import FitnessJudge, input_text
from evotrainer.evaluation.meta_judge import MetaJudge
from evotrainer.evaluation.runner import Runner, runner_for
from evotrainer.evaluation.surrogate import FitnessSurrogate
from evotrainer.evaluation.validation import Validator
from evotrainer.harness.genome import HarnessBounds, HarnessGenome
from evotrainer.harness.reference import reference_components
from evotrainer.harness.training_set import BatchSource, load_real_pool
from evotrainer.llm.base import LLMClient, SamplingParams, parallel_requests_of
from evotrainer.llm.budget import Budget
from evotrainer.llm.spec import LLMStack, build_backend, build_stack
from evotrainer.llm.teacher import build_operator_stack
from evotrainer.loops.inner import OperatorResources, PolicyOptimizer
from evotrainer.loops.outer import HarnessOptimizer
from evotrainer.loops.rng import stream
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.seeds import seed_policies
from evotrainer.run import events as ev
from evotrainer.run.tracking import build_tracker
from evotrainer.run.validation_set import resolve_validation
from evotrainer.tasks.base import Task
from evotrainer.tasks.registry import build_task
from evotrainer.types import Instance

TERMINAL = ("defences", "terminal_data")


class Wiring:
    """The part of CoEvolution that builds its components (a mixin)."""

    def _wire(
        self,
        config: RunConfig,
        task: Task | None,
        llm: LLMClient | None,
        observers: Sequence[Observer],
        validation: Sequence[Instance] | None,
        runner: Runner | None,
        operator_llm: LLMClient | None = None,
    ) -> None:
        self.cfg = config
        self._notes: list[tuple[str, dict[str, Any]]] = []  # events to emit once run() starts
        self._suspects: set[str] = set()  # components the monitor flagged since the last step
        self._rescored: dict[tuple[str, str], Mapping[str, float]] = {}  # rank judgement memo
        self._data_sha256: dict[str, str] | None = None  # the data's content (State)
        self._stopped_at_resume: BudgetExceeded | None = None  # the cap, reached by a resume
        self._start_over = False  # resumed before its first checkpoint: run() starts it
        self._rewrite_config = False  # resumed with new settings: config.yaml records them
        self._reopen = False  # a finished run continued (resume --more-generations)
        self._emit_lock = threading.RLock()
        self.task = task or build_task(config.task)
        budget = Budget(max_calls=config.budget.max_calls, max_tokens=config.budget.max_tokens)
        ray = config.ray if config.runner == "ray" else None
        backend = llm or build_backend(config.model, seed=config.seed, ray=ray)
        self.stack: LLMStack = build_stack(backend, config.cache, budget)
        # the operators' model (operator_model, a teacher): the same budget and cache
        self.operator_stack: LLMStack = build_operator_stack(config, self.stack, operator_llm)
        self.observers: list[Observer] = list(observers)
        self.tracker = build_tracker(config.tracking)  # its extra imported now (or an error)
        self.sampling = SamplingParams(
            temperature=config.model.temperature,
            max_tokens=config.model.max_tokens,
            seed=config.seed,
        )
        self.evaluator = Evaluator(
            self.task,
            self.stack.client,
            self.sampling,
            runner or runner_for(self.stack.client, config.runner),
            guard=ErrorRateGuard.from_config(config.budget),
        )
        self.evaluator.components.update(
            reference_components(self.task.validation_metric(), config.harness.reference_components)
        )
        self.generator = self.task.generator()
        if validation is None:
            vset = resolve_validation(
                self.task, config.validation, config.seed, columns=config.data_columns
            )
        else:
            vset = resolve_validation(self.task, config.validation, config.seed, list(validation))
        self.validation_set = vset
        self._notes += [(ev.WARNING, {"message": w}) for w in vset.warnings]
        # no validation instance (selection or confirmation) may reach a training signal
        self.held_out = frozenset(i.id for i in vset.instances)
        self.train_ids: set[str] = set()  # every instance a training batch held
        self.real_pool = load_real_pool(
            self.task,
            config.harness.real_data,
            self.held_out,
            lambda inst: input_text(self.task, inst),
            config.data_columns,
        )
        self.batches = BatchSource(self.generator, self.real_pool.instances)
        d = config.defences
        self.constitution = Constitution(
            enabled=d.constitution,
            allow_private_data=d.allow_private_data,
            extra_patterns=tuple(d.extra_patterns),
            output_rules=self.task.constitution_rules(),
        )
        # real meetings for training-side signals (never the validation set)
        pool = self._terminal_pool() if d.terminal_share > 0 or d.learned_reward else []
        self.terminal_pool: list[Instance] = pool
        self.judge = FitnessJudge(
            self.task,
            self.evaluator,
            self.constitution,
            config.inner.reflect_examples,
            terminal_share=d.terminal_share,
            terminal_pool=pool if d.terminal_share > 0 else (),
            terminal_sample=d.terminal_sample,
            s_val_weights=config.outer.s_val_weights,
            seed=config.seed,
            on_violation=self._on_violation,
            race_first=config.inner.race_first,
            race_margin=config.inner.race_margin,
        )
        self.monitor = ProxyGapMonitor(window=d.monitor_window) if d.monitor else None
        sg = config.surrogate
        self.surrogate = (
            FitnessSurrogate(
                config.seed, sg.min_train, sg.min_spearman, sg.margin, sg.explore, sg.window
            )
            if sg.enabled
            else None
        )
        self.learned = LearnedDefences(
            self.evaluator,
            d.discriminator,
            d.learned_reward,
            dict(config.outer.s_val_weights),
            config.seed,
            exclude_ids=sorted(self.held_out),
            pool=pool,
        )
        truncation = config.task.truncation_note()
        self.validator = Validator(
            self.task,
            self.evaluator,
            vset.selection,
            config.outer.s_val_weights,
            vset.source,
            truncation=truncation,
            probe=self._robustness_probe(),
        )
        self.confirmer = (
            Validator(
                self.task,
                self.evaluator,
                vset.confirmation,
                config.outer.s_val_weights,
                vset.source + " (confirmation)",
                truncation=truncation,
            )
            if vset.confirmation
            else None
        )
        self.confirmation: Confirmation | None = None
        if config.budget.max_calls is not None and config.budget.reserve_final:
            probe = self.validator.probe
            cost = (
                len(vset.selection)
                + len(getattr(probe, "instances", ()))
                + 2 * len(vset.confirmation)
            ) * self.task.max_calls_per_rollout()
            budget.reserve = min(cost, config.budget.max_calls // 2)
        base = HarnessGenome(
            config.harness.difficulty,
            config.harness.weights,
            config.harness.task_mix,
            config.harness.real_share if self.real_pool.instances else 0.0,
        )
        self.bounds = HarnessBounds(
            config.harness.difficulty_bounds[0],
            config.harness.difficulty_bounds[1],
            config.harness.weight_max,
            config.harness.real_share_bounds[0],
            config.harness.real_share_bounds[1],
        )
        self._check_components(base)
        learned = [n for n in ("discriminator", "learned") if n in self.evaluator.components]
        space = tuple(sorted(set(base.weights) | set(config.harness.switchable) | set(learned)))
        self.hopt = HarnessOptimizer(
            config.outer,
            base,
            self.bounds,
            stream(config.seed, "outer"),
            space,
            real_pool=bool(self.real_pool.instances),
            hints=self.task.harness_hints(),
        )
        # the meta-objective vector; the archive ranks by its meta score (people's ratings too)
        self.meta = MetaJudge(
            config.meta, self.validator, self.evaluator, config.outer.s_val_weights
        )
        self.hopt.archive.rank = self.meta.rank
        seeds = seed_policies(config.inner, self.task)
        self.reference_examples = self._reference_examples()
        self.inner = self._new_inner(seeds)
        self.policies: dict[str, PolicyGenome] = {}  # every policy ever made, for lineage
        self.epoch = 0
        # the harness that drew the main line's batch: the current one, except after an outer
        # step whose rerank winner (or a rollback) changed the harness, until the next draw
        self.drawn: HarnessGenome = self.harness
        self.outer_step = 0
        self.outer_due = False  # a generation is done and its outer (or monitor) step is not
        self.trial_generations = 0
        self.initial: tuple[str, float] | None = None  # (policy id, s_val)
        self.elapsed_before = 0.0
        self.run_dir: Path | None = None
        self._t0 = time.perf_counter()
        self._seq = 0
        # distillation (engine/distill_step.py): rounds done, their records, adapter clients
        self.distill_rounds = 0
        self.distill_due = False  # a generation is done and its distillation is not
        self.distillations: list[dict[str, Any]] = []
        self.adapter_root: Path | None = None  # the run directory a resume reads adapters from
        self._adapter_clients: dict[str, LLMClient] = {}
        self._adapter_lock = threading.Lock()
        self._check_distill()
        self.evaluator.adapters = self._adapter_client

    # -- construction helpers -----------------------------------------------------------
    def _new_inner(self, seeds: list[PolicyGenome]) -> PolicyOptimizer:
        op_sampling = SamplingParams(
            temperature=self.cfg.model.operator_temperature,
            max_tokens=self.cfg.model.operator_max_tokens,
            seed=self.cfg.seed,
        )
        client = self.operator_stack.client  # the agent's own client unless operator_model
        opt = PolicyOptimizer(
            self.cfg.inner, seeds, stream(self.cfg.seed, "inner"), client, op_sampling
        )
        opt.parallel = parallel_requests_of(client)  # children made concurrently
        opt.resources = OperatorResources(
            templates=tuple(self.task.output_templates()),
            edits=dict(self.task.feedback_edits()),
            vocabulary=self.task.vocabulary(),
        )
        return opt

    def _reference_examples(self) -> list[str]:
        """Few-shot candidates from the human references of the real training pool (cut)."""
        from evotrainer.operators.fewshot import cut_to_tokens

        out = []
        for inst in self.real_pool.instances:
            text = self.task.reference_example(inst)
            cut = cut_to_tokens(text, self.cfg.inner.example_tokens) if text else None
            if cut:
                out.append(cut)
        return out

    def _check_components(self, base: HarnessGenome) -> None:
        known = set(self.evaluator.components)
        for key, names in (
            ("harness.weights", list(base.weights)),
            ("harness.switchable", self.cfg.harness.switchable),
        ):
            unknown = [n for n in names if n not in known]
            if unknown:
                raise ConfigError(
                    f"{key}: unknown reward component(s) {unknown}; known: {sorted(known)}"
                )
        from evotrainer.operators.registry import OPERATORS
        from evotrainer.run.validation_set import check_s_val_weights

        probe_keys = ["robustness"] if self.cfg.defences.robustness_probe else []
        check_s_val_weights(
            self.cfg.outer.s_val_weights, self.task, self.validation_set.instances, probe_keys
        )
        unknown_ops = sorted(set(self.cfg.inner.operators or {}) - set(OPERATORS))
        if unknown_ops:
            raise ConfigError(
                f"inner.operators: unknown operator(s) {unknown_ops}; known: {sorted(OPERATORS)}"
            )

    @property
    def budget(self) -> Budget:
        return self.stack.budget

    @property
    def harness(self) -> HarnessGenome:
        return self.hopt.current

    def _robustness_probe(self) -> RobustnessProbe | None:
        n = self.cfg.defences.robustness_probe
        if n == 0:
            return None
        hostile = self.task.hostile_instances(n, self.cfg.seed)
        if not hostile:
            raise ConfigError(
                f"defences.robustness_probe: task {self.task.name!r} cannot make hostile inputs"
            )
        return RobustnessProbe(self.task, self.evaluator, hostile)

    def _terminal_pool(self) -> list[Instance]:
        from evotrainer.run.validation_set import announce
        from evotrainer.tasks.registry import task_default
        from evotrainer.tasks.tabular import is_data, load_data

        path = self.cfg.defences.terminal_data
        if path and is_data(path):
            loaded = load_data(self.task, path, self.cfg.data_columns)
            return [i for i in loaded if i.id not in self.held_out]
        if path and (Path(path).exists() or path != task_default(self.task.name, *TERMINAL)):
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
        self._notes.append((ev.WARNING, {"message": message}))
        return self.task.synthetic_validation(8, self.cfg.seed + 7919)
