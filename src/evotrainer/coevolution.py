"""The driver: wires the inner loop (policy GA) and the outer loop (harness evolution).

One generation: the current harness draws a batch (real training instances and synthetic ones,
harness/training_set.py); the inner optimiser asks for candidates; the evaluator runs them
(instance-major, racing: a child meets a few instances first) and scores every reward
component; the harness weights turn score vectors into fitness; the optimiser is told. Every
``outer.every`` generations: validate the best policy (s_val, on the selection part of the
validation data, racing against the best so far), maybe roll back, ask the harness optimiser for
variants, trial each by a short inner run from a copy of the current population, validate the
trials' best policies, tell the harness optimiser, continue from the winning trial. At the end
the selection winner and the best seed meet the held-out confirmation part (paired, with an
interval), and the return rule picks one. A checkpoint is written after every generation and
every outer step.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotrainer.config import RunConfig
from evotrainer.defences.constitution import Constitution
from evotrainer.defences.learned import LearnedDefences, batch_outputs
from evotrainer.defences.monitor import ProxyGapMonitor
from evotrainer.defences.robustness import RobustnessProbe
from evotrainer.errors import BudgetExceeded, ConfigError, EvoTrainerError
from evotrainer.evaluation.confirmation import Confirmation, confirm
from evotrainer.evaluation.error_rate import ErrorRateGuard
from evotrainer.evaluation.evaluator import Evaluator, PolicyFitness
from evotrainer.evaluation.fitness import FitnessJudge, input_text
from evotrainer.evaluation.meta_judge import MetaJudge
from evotrainer.evaluation.runner import Runner, ThreadRunner, runner_for
from evotrainer.evaluation.surrogate import FitnessSurrogate
from evotrainer.evaluation.validation import Validator
from evotrainer.harness.genome import HarnessBounds, HarnessGenome
from evotrainer.harness.reference import reference_components
from evotrainer.harness.reward import weighted_reward
from evotrainer.harness.training_set import BatchSource, load_real_pool
from evotrainer.llm.base import LLMClient, SamplingParams, parallel_requests_of
from evotrainer.llm.budget import Budget
from evotrainer.llm.spec import LLMStack, build_backend, build_stack
from evotrainer.loops.inner import OperatorResources, PolicyOptimizer
from evotrainer.loops.outer import HarnessOptimizer
from evotrainer.loops.rng import stream
from evotrainer.loops.weakness import DISAGREE, WeaknessReport
from evotrainer.policy.archive import ArchiveEntry
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.run.validation_set import resolve_validation
from evotrainer.tasks.base import Task
from evotrainer.tasks.registry import build_task
from evotrainer.types import Instance, ValidationResult

Observer = Callable[[ev.Event], None]
BEST_OUTPUT_EXAMPLES = 3  # best training outputs offered as few-shot candidates


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass
class RunResult:
    best: PolicyGenome
    best_s_val: float
    summary: dict[str, Any]


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
    ) -> None:
        self.cfg = config
        self._notes: list[tuple[str, dict[str, Any]]] = []  # events to emit once run() starts
        self._suspects: set[str] = set()  # components the monitor flagged since the last step
        self._emit_lock = threading.RLock()
        self.task = task or build_task(config.task)
        budget = Budget(max_calls=config.budget.max_calls, max_tokens=config.budget.max_tokens)
        ray = config.ray if config.runner == "ray" else None
        backend = llm or build_backend(config.model, seed=config.seed, ray=ray)
        self.stack: LLMStack = build_stack(backend, config.cache, budget)
        self.observers: list[Observer] = list(observers)
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
            vset = resolve_validation(self.task, config.validation, config.seed)
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
        seeds = (
            [
                PolicyGenome.from_text(t, name=f"S{i}")
                for i, t in enumerate(config.inner.seed_prompts)
            ]
            if config.inner.seed_prompts
            else self.task.seed_policies()
        )
        self.reference_examples = self._reference_examples()
        self.inner = self._new_inner(seeds)
        self.policies: dict[str, PolicyGenome] = {}  # every policy ever made, for lineage
        self.epoch = 0
        self.outer_step = 0
        self.trial_generations = 0
        self.initial: tuple[str, float] | None = None  # (policy id, s_val)
        self.elapsed_before = 0.0
        self.run_dir: Path | None = None
        self._t0 = time.perf_counter()
        self._seq = 0

    # -- construction helpers -----------------------------------------------------------
    def _new_inner(self, seeds: list[PolicyGenome]) -> PolicyOptimizer:
        op_sampling = SamplingParams(
            temperature=self.cfg.model.operator_temperature,
            max_tokens=self.cfg.model.operator_max_tokens,
            seed=self.cfg.seed,
        )
        opt = PolicyOptimizer(
            self.cfg.inner, seeds, stream(self.cfg.seed, "inner"), self.stack.client, op_sampling
        )
        opt.parallel = parallel_requests_of(self.stack.client)  # children made concurrently
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

    def _refresh_resources(
        self, opt: PolicyOptimizer, harness: HarnessGenome, batch: Sequence[Instance]
    ) -> None:
        """Keep the operators' view current: the harness weights, and few-shot candidates from
        the references and the best training outputs so far: the elites' best outputs on the
        current batch (what a checkpoint can restore; never a validation instance)."""
        from evotrainer.operators.fewshot import cut_to_tokens

        store = self.evaluator.store
        scored = sorted(
            (
                (weighted_reward(rec.vector, harness.weights), rec.rollout.output)
                for p in opt.population
                for inst in batch
                if (rec := store.get((p.id, inst.id))) is not None
                and rec.rollout.error is None
                and rec.rollout.output
            ),
            reverse=True,
        )
        best: list[str] = []
        for _, text in scored:
            cut = cut_to_tokens(text, self.cfg.inner.example_tokens)
            if cut and cut not in best:
                best.append(cut)
            if len(best) >= BEST_OUTPUT_EXAMPLES:
                break
        opt.resources.weights = dict(harness.weights)
        opt.resources.examples = (*self.reference_examples, *best)

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

    def emit(self, type_: str, **data: Any) -> None:
        with self._emit_lock:  # concurrent trials emit from threads
            ev.notify(self.observers, ev.Event(type_, data))  # a raising observer is detached

    @property
    def budget(self) -> Budget:
        return self.stack.budget

    @property
    def harness(self) -> HarnessGenome:
        return self.hopt.current

    # -- batches and fitness ------------------------------------------------------------
    def batch(self, epoch: int, harness: HarnessGenome) -> list[Instance]:
        rng = stream(self.cfg.seed, "batch", epoch)
        batch = self.batches.sample(self.cfg.inner.tasks_per_generation, harness, rng)
        leaked = [i.id for i in batch if i.id in self.held_out]
        if leaked:  # cannot happen (the pool is filtered); a generator bug must not leak
            raise ConfigError(f"training batch holds validation instances {leaked}")
        self.train_ids.update(i.id for i in batch)
        return batch

    def fitness_of(
        self,
        policies: Sequence[PolicyGenome],
        batch: Sequence[Instance],
        harness: HarnessGenome,
        epoch: int | None = None,
        race: PolicyOptimizer | None = None,
    ) -> dict[str, PolicyFitness]:
        """Fitness on ``batch``; with ``race``, new policies race against its population."""
        for p in policies:
            self.policies.setdefault(p.id, p)
        return self.judge(
            policies,
            batch,
            harness,
            self.epoch if epoch is None else epoch,
            incumbents=race.population if race is not None else (),
            survivors=self.cfg.inner.elites,
        )

    def _generation(
        self, opt: PolicyOptimizer, batch: list[Instance], h: HarnessGenome, epoch: int
    ) -> int:
        """One inner generation; returns the epoch (it advances with per-generation batches)."""
        if self.cfg.inner.batch == "per_generation" and opt.population:
            epoch += 1
            batch[:] = self.batch(epoch, h)
            opt.shrink_to_elites()
            opt.refit(self.fitness_of(opt.population, batch, h, epoch))
        self._refresh_resources(opt, h, batch)
        candidates = opt.ask()
        evaluate = lambda cs: self.fitness_of(cs, batch, h, epoch, race=opt)  # noqa: E731
        if self.surrogate is not None and opt.population:  # children: screened first
            k = self.cfg.inner.race_first
            cost = k if 0 < k < len(batch) else len(batch)
            learn = opt is self.inner  # not from trials (they may run concurrently)
            opt.tell(self.surrogate.fitness(opt, candidates, evaluate, cost, learn))
        else:
            opt.tell(evaluate(candidates))
        return epoch

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
        path = self.cfg.defences.terminal_data
        if path and Path(path).is_file():
            return [i for i in self.task.load(path) if i.id not in self.held_out]
        self._notes.append(
            (
                ev.WARNING,
                {
                    "message": (
                        f"terminal reward pool {path!r} not found"
                        if path
                        else "no terminal reward pool (defences.terminal_data)"
                    )
                    + ": using synthetic "
                    "instances (held out from training) instead"
                },
            )
        )
        return self.task.synthetic_validation(8, self.cfg.seed + 7919)

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

    # -- validation ------------------------------------------------------------------------
    def validate(
        self, policies: Sequence[PolicyGenome], role: str, race: bool = False
    ) -> dict[str, ValidationResult]:
        """Validate policies on the selection part; ``role`` (initial | seed | incumbent |
        trial | final) labels the events. ``race``: race against the best archived policy."""
        todo = {p.id for p in policies if p.id not in self.validator.memo}
        if todo:
            self.emit(
                ev.VALIDATION_STARTED,
                role=role,
                policies=len(todo),
                instances=len(self.validator.instances),
                race=race and self.cfg.validation.race_first > 0,
            )
        if race:
            best = self.hopt.archive.best()
            v = self.cfg.validation
            results = self.validator.race(
                policies, best.policy if best else None, v.race_first, v.race_margin
            )
        else:
            results = self.validator.validate(policies)
        for p in policies:
            r = results[p.id]
            self.emit(
                ev.VALIDATION,
                role=role,
                policy_id=p.id,
                s_val=r.s_val,
                aggregates=dict(r.aggregates),
                generation=self.inner.generation,
                outer_step=self.outer_step,
                partial=r.partial,
                n=r.n,
                llm_calls=self.budget.snapshot()["llm_calls"],  # spent when this s_val was known
            )
        return results

    def _archive(
        self,
        policy: PolicyGenome,
        harness: HarnessGenome,
        result: ValidationResult,
        diversity: float | None = None,
    ) -> None:
        """Archive a fully validated pair: not a raced-out estimate, and never a policy that
        broke the constitution (it can never be returned). ``diversity``: of the population
        it came from (the pair's meta-objective vector keeps it)."""
        if result.partial or policy.id in self.judge.rejected:
            return
        objectives = self.meta.objective.vector(result, diversity)  # human: read when ranked
        self.hopt.archive.add(
            ArchiveEntry(
                policy, harness, result.s_val, self.inner.generation, self.outer_step, objectives
            )
        )

    def _read_ratings(self) -> None:
        """New ratings from people (evotrainer review): refit the human objective."""
        news = self.meta.read_ratings()
        if news and "warning" in news:
            self.emit(ev.WARNING, message=news["warning"])
        elif news:
            self.emit(ev.HUMAN_FEEDBACK, outer_step=self.outer_step, **news)

    def _warm_start(self, source: str) -> None:
        """Seed the population and the harness from an earlier run (run/warm_start.py)."""
        from evotrainer.run.warm_start import load_warm_start

        hand = len(self.inner.seeds)
        w = load_warm_start(
            source,
            self.task.name,
            set(self.evaluator.components),
            max(1, self.cfg.inner.population - hand),
            bool(self.real_pool.instances),
            self.cfg.harness.real_share,
        )
        self.inner = self._new_inner([*w.policies, *self.inner.seeds])
        if w.harness is not None:
            h = w.harness.bounded(self.bounds)
            self.hopt.base = self.hopt.current = h
            self.hopt.space = tuple(sorted(set(self.hopt.space) | set(h.active())))
        self.emit(ev.WARM_START, **w.to_json())

    # -- the run -------------------------------------------------------------------------
    def run(self, run_dir: str | Path | None = None) -> RunResult:
        from evotrainer.run.rundir import RunDirectory

        rd = None
        if run_dir is not None:
            rd = RunDirectory.open_or_create(Path(run_dir), self.cfg, self.initial is not None)
            self.run_dir = rd.path
            self.observers.append(rd.log)
            self.meta.attach(rd.path)
        for type_, data in self._notes:
            self.emit(type_, **data)
        self._notes = []
        stopped = "completed"
        try:
            if self.initial is None:
                self._start()
            batch = self.batch(self.epoch, self.harness)
            g, every = self.inner.generation, self.cfg.outer.every
            if (
                0 < g < self.cfg.inner.generations
                and g % every == 0
                and self.outer_step < g // every
            ):
                # resumed from the checkpoint written before this generation's outer step
                if self.cfg.outer.enabled:
                    batch = self._outer_step(batch)
                else:
                    self._monitor_step()
                self.checkpoint()
            while self.inner.generation < self.cfg.inner.generations:
                self.epoch = self._generation(self.inner, batch, self.harness, self.epoch)
                self._emit_generation(self.inner, batch)
                self._watch_generation()
                self.checkpoint()
                g = self.inner.generation
                if g % self.cfg.outer.every == 0 and g < self.cfg.inner.generations:
                    if self.cfg.outer.enabled:
                        batch = self._outer_step(batch)
                    else:
                        self._monitor_step()
                    self.checkpoint()
        except BudgetExceeded as exc:
            stopped = "budget"
            self.emit(ev.BUDGET_EXHAUSTED, message=str(exc), budget=self.budget.snapshot())
        except BaseException as exc:
            if isinstance(exc, EvoTrainerError):
                self.emit(ev.RUN_FAILED, message=str(exc), budget=self.budget.snapshot())
            if rd is not None:
                rd.close()
            raise
        try:
            return self._finish(stopped)
        finally:
            if rd is not None:
                rd.close()

    def _start(self) -> None:
        self.emit(
            ev.RUN_STARTED,
            config=self.cfg.model_dump(mode="json"),
            model=self.stack.backend.describe(),
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
        if self.cfg.init_from:
            self._warm_start(self.cfg.init_from)
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
        self.checkpoint()

    def _outer_step(self, batch: list[Instance]) -> list[Instance]:
        self.outer_step += 1
        self._read_ratings()
        best = self.inner.best()
        current = self.validate([best], "incumbent", race=True)[best.id]
        div = self.meta.population_diversity(self.inner, batch)
        self._archive(best, self.harness, current, div)
        rollback = self.hopt.observe(self.meta.score(self.meta.vector(best.id, current, div)))
        if rollback is not None:
            fit = self.fitness_of([rollback.policy], batch, self.harness)
            self.inner.inject(rollback.policy, fit[rollback.policy.id])
            self.inner.refit(self.fitness_of(self.inner.population, batch, self.harness))
            self.emit(
                ev.ROLLBACK,
                to_policy=rollback.policy.id,
                to_harness=rollback.harness.to_json(),
                s_val=rollback.s_val,
                from_s_val=current.s_val,
                outer_step=self.outer_step,
                generation=self.inner.generation,
            )
        else:
            self._reinject_best(batch, current.s_val)
        if self.learned.active:
            pop_ids = [p.id for p in self.inner.population]
            refit = self.learned.refit(
                batch_outputs(self.evaluator, pop_ids, batch),
                self.learned.training_rows(self.inner.population, self.outer_step),
                self.outer_step,
            )
            self.emit(ev.DEFENCE_REFIT, outer_step=self.outer_step, **refit)
            self.inner.refit(self.fitness_of(self.inner.population, batch, self.harness))
        report = self._weakness(self.inner, batch, current)
        self._suspects.clear()
        variants = self.hopt.ask(report)
        Trial = tuple[PolicyOptimizer, list[Instance], int]

        def trial(i: int, h: HarnessGenome) -> Trial:  # independent of the others
            self.emit(
                ev.TRIAL_STARTED,
                outer_step=self.outer_step,
                trial=i + 1,
                trials=len(variants),
                harness=h.to_json(),
            )
            opt = self.inner.clone(stream(self.cfg.seed, "trial", self.outer_step, i))
            epoch = self.epoch + 1
            tb = self.batch(epoch, h)
            opt.shrink_to_elites()
            opt.refit(self.fitness_of(opt.population, tb, h, epoch))
            for _ in range(self.cfg.outer.trial_generations):
                epoch = self._generation(opt, tb, h, epoch)
            tbest = opt.best()
            self.emit(
                ev.TRIAL_FINISHED,
                outer_step=self.outer_step,
                trial=i + 1,
                trials=len(variants),
                best_policy=tbest.id,
                best_fitness=_finite(opt.fitness[tbest.id].fitness),
                budget=self.budget.snapshot(),
            )
            return opt, tb, epoch

        # concurrently when the backend serves parallel requests (same results either way)
        width = len(variants) if parallel_requests_of(self.stack.client) > 1 else 1
        trials = ThreadRunner(width).map(lambda x: trial(*x), list(enumerate(variants)))
        bests = [opt.best() for opt, _, _ in trials]
        results = self.validate(bests, "trial", race=True)
        s_vals = [results[b.id].s_val for b in bests]
        divs = [self.meta.population_diversity(opt, tb) for opt, tb, _ in trials]
        vectors = [
            self.meta.vector(b.id, results[b.id], d) for b, d in zip(bests, divs, strict=True)
        ]
        for b, h, d in zip(bests, variants, divs, strict=True):
            self._archive(b, h, results[b.id], d)
        choice, why, front = self.meta.objective.choose(vectors)
        scores = [self.meta.score(v) for v in vectors]
        decision = self.hopt.tell(scores, choice, why)
        self.trial_generations += self.cfg.outer.trial_generations * len(variants)
        self.inner, batch, self.epoch = trials[decision.index]
        if self.monitor:
            train = self.inner.fitness[self.inner.best().id].fitness
            self._alerts(self.monitor.observe_validation(self.outer_step, current.s_val, train))
            self._alerts(self.monitor.observe_weights(self.outer_step, self.harness.weights))
        self.emit(
            ev.OUTER_STEP,
            outer_step=self.outer_step,
            generation=self.inner.generation,
            weakness=report.to_json(),
            variants=[v.to_json() for v in variants],
            s_vals=s_vals,
            objectives=vectors,
            meta_scores=scores,
            selection=self.cfg.meta.selection,
            front=front,
            trial_best=[b.id for b in bests],
            chosen=decision.chosen.to_json(),
            changed=decision.changed,
            reason=decision.reason,
            rollback=rollback is not None,
        )
        self._emit_generation(self.inner, batch)
        return batch

    def _reinject_best(self, batch: list[Instance], s_val: float) -> None:
        """When the inner loop's best validates clearly below the best validated policy, put
        that policy back into the population as an elite: the GA then also explores around
        what the validation data prefers, and a harness variant that ranks it first can win."""
        best = self.hopt.archive.best()
        if (
            not self.cfg.outer.reinject_best
            or best is None
            or best.s_val <= s_val + DISAGREE
            or best.policy.id == self.inner.protected
        ):
            return
        fit = self.fitness_of([best.policy], batch, self.harness)
        self.inner.inject(best.policy, fit[best.policy.id], protect=True)
        self.emit(
            ev.REINJECT,
            policy=best.policy.id,
            s_val=best.s_val,
            from_s_val=s_val,
            outer_step=self.outer_step,
        )

    def _monitor_step(self) -> None:
        """Harness fixed (outer loop off): still validate the best policy every ``outer.every``
        generations, so s_val is tracked and the proxy-gap monitor can compare it to the
        training reward."""
        self.outer_step += 1
        self._read_ratings()
        best = self.inner.best()
        v = self.validate([best], "incumbent", race=True)[best.id]
        div = self.meta.population_diversity(self.inner, self.batch(self.epoch, self.harness))
        self._archive(best, self.harness, v, div)
        self.hopt.s_val_history.append(self.meta.score(self.meta.vector(best.id, v, div)))
        if self.monitor:
            train = self.inner.fitness[best.id].fitness
            self._alerts(self.monitor.observe_validation(self.outer_step, v.s_val, train))

    def _weakness(
        self, opt: PolicyOptimizer, batch: Sequence[Instance], v: ValidationResult
    ) -> WeaknessReport:
        best = opt.best()
        fit = opt.fitness[best.id]
        records = self.evaluator.evaluate([best], batch)  # memoised; after a resume, cached
        by_kind: dict[str, list[float]] = {}
        for inst in batch:  # the mix is over the generator's kinds: synthetic instances only
            if inst.real:
                continue
            rec = records[(best.id, inst.id)]
            by_kind.setdefault(inst.kind, []).append(
                weighted_reward(rec.vector, self.harness.weights)
            )
        return WeaknessReport(
            s_val=v.s_val,
            s_val_by_length=self.validator.s_val_by_bucket(v),
            train_reward=fit.fitness,
            train_components=dict(fit.components),
            validation=dict(v.aggregates),
            reward_by_kind={k: sum(x) / len(x) for k, x in by_kind.items()},
            suspects=tuple(sorted(self._suspects)),
            best_s_val=archived.s_val if (archived := self.hopt.archive.best()) else None,
            hints=self.task.harness_hints(),
        )

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

    # -- end of run ----------------------------------------------------------------------
    def _finish(self, stopped: str) -> RunResult:
        from evotrainer.run.rundir import fail_run

        if not self.inner.population:  # stopped before the first generation was scored
            fail_run(self, stopped)  # writes summary.json, raises a clear error
        final_best = self.inner.best()
        last = None
        held_back = self.budget.reserve > 0  # calls kept for this validation (budget.reserve_final)
        self.budget.release_reserve()
        self._read_ratings()
        if stopped == "completed" or held_back:
            try:
                last = self.validate([final_best], "final", race=True)[final_best.id]
                batch = self.batch(self.epoch, self.harness)
                div = self.meta.population_diversity(self.inner, batch)
                self._archive(final_best, self.harness, last, div)
            except BudgetExceeded as exc:
                if stopped != "budget":
                    stopped = "budget"
                    self.emit(ev.BUDGET_EXHAUSTED, message=str(exc), budget=self.budget.snapshot())
        entry = self.hopt.archive.best()
        if entry is None and final_best.id in self.judge.rejected:
            fail_run(self, stopped, rejected=sorted(self.judge.rejected))  # no acceptable policy
        best = entry.policy if entry else final_best
        best_s = entry.s_val if entry else float("nan")
        confirmed = self._confirm(best)
        if confirmed is not None and confirmed.returned != best.id:
            best = self.policies[confirmed.returned]
            best_s = self.validator.memo[best.id].s_val
        summary = self.summary(stopped, best, best_s, last)
        if self.run_dir is not None:
            from evotrainer.run.rundir import write_results

            write_results(self, summary, best)
        self.emit(ev.RUN_FINISHED, summary=summary)
        return RunResult(best, best_s, summary)

    def _confirm(self, winner: PolicyGenome) -> Confirmation | None:
        """The selection winner against the best seed on the confirmation part."""
        if self.confirmer is None or self.initial is None:
            return None
        seed = self.policies.get(self.initial[0])
        if seed is None:
            return None
        todo = {winner.id, seed.id} - set(self.confirmer.memo)
        if todo:
            self.emit(
                ev.VALIDATION_STARTED,
                role="confirmation",
                policies=len(todo),
                instances=len(self.confirmer.instances),
                race=False,
            )
        try:
            rows, measure = self.meta.per_meeting(self.confirmer)  # what selection used
            c = confirm(
                self.confirmer,
                winner,
                seed,
                self.cfg.validation.return_rule,
                self.cfg.seed,
                rows,
                measure,
            )
        except BudgetExceeded as exc:
            self.emit(ev.WARNING, message=f"no confirmation (budget exhausted: {exc})")
            return None
        self.confirmation = c
        self.emit(ev.CONFIRMATION, **c.to_json())
        return c

    def summary(
        self,
        stopped: str,
        best: PolicyGenome,
        best_s: float,
        last: ValidationResult | None,
    ) -> dict[str, Any]:
        b = self.budget.snapshot()
        init_id, init_s = self.initial or ("", float("nan"))
        vs = self.validation_set
        best_v = self.validator.memo.get(best.id)
        return {
            "stopped": stopped,
            "initial_s_val": init_s,
            "final_s_val": best_s,
            "last_best_s_val": last.s_val if last else None,
            "initial_policy": init_id,
            "best_policy": best.id,
            "final_aggregates": dict(best_v.aggregates) if best_v else {},
            "initial_aggregates": dict(self.validator.memo[init_id].aggregates)
            if init_id in self.validator.memo
            else {},
            "generations": self.inner.generation,
            "outer_steps": self.outer_step,
            "trial_generations": self.trial_generations,
            "harness": self.harness.to_json(),
            "validation": {
                "source": vs.source,
                "n": len(vs.selection),
                "confirmation_n": len(vs.confirmation),
                "synthetic": vs.synthetic,
                "truncation": self.validator.truncation,
            },
            "confirmation": self.confirmation.to_json() if self.confirmation else None,
            "meta": self.meta.summary(self.hopt.archive, best),
            "training": {
                "real_pool": len(self.real_pool.instances),
                "real_source": self.real_pool.source or None,
                "real_share": self.harness.real_share,
                "instances_seen": len(self.train_ids),
            },
            "racing": {
                "raced_out": self.judge.raced_out,
                "evaluations_saved": self.judge.race_saved,
            },
            "surrogate": self.surrogate.summary() if self.surrogate else None,
            "operators": {k: v.as_dict() for k, v in sorted(self.inner.op_stats.items())},
            "seed": self.cfg.seed,
            "model": self.stack.backend.model_id,
            "llm_calls": b["llm_calls"],
            "prompt_tokens": b["prompt_tokens"],
            "completion_tokens": b["completion_tokens"],
            # what varies between an identical cold and warm run: the backend-level counters
            "runtime": {k: b[k] for k in Budget.COUNTERS if k not in Budget.REQUEST_COUNTERS},
            "wall_s": round(self.elapsed(), 2),
        }

    # -- checkpoints ---------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "inner": self.inner.state_dict(),
            "outer": self.hopt.state_dict(),
            "epoch": self.epoch,
            "outer_step": self.outer_step,
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
        }

    def load_state_dict(self, s: dict[str, Any]) -> None:
        self.inner.load_state_dict(s["inner"])
        self.hopt.load_state_dict(s["outer"])
        self.epoch = int(s["epoch"])
        self.outer_step = int(s["outer_step"])
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

    def checkpoint(self) -> None:
        if self.run_dir is None:
            return
        from evotrainer.run.checkpoint import save_checkpoint

        self._seq += 1
        best = self.inner.best()
        index = {
            "generation": self.inner.generation,
            "outer_step": self.outer_step,
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
    ) -> tuple[CoEvolution, Path]:
        from evotrainer.run.checkpoint import load_latest, load_state_into
        from evotrainer.run.rundir import RunDirectory
        from evotrainer.run.validation_set import check_same_validation

        rd = RunDirectory.open(Path(run_dir))
        co = cls(
            rd.config, task=task, llm=llm, observers=observers, validation=validation, runner=runner
        )
        state, path, warnings = load_latest(rd.path)
        check_same_validation(co.validation_set, state)
        load_state_into(co, state, path)  # a malformed state is a CheckpointError
        # what an uninterrupted run holds in memory: the population's rollouts on the current
        # batch (answered by the cache; the budget is restored so they are not counted twice)
        co.fitness_of(co.inner.population, co.batch(co.epoch, co.harness), co.harness)
        co.budget.restore(state["budget"])
        co._seq = int(path.stem.split("-")[1])
        co._notes += [(ev.WARNING, {"message": w}) for w in warnings]
        co._notes.append(
            (ev.RUN_RESUMED, {"checkpoint": path.name, "generation": co.inner.generation})
        )
        return co, rd.path
