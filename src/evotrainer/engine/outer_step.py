"""The outer step, every ``outer.every`` generations: validate the inner loop's best, maybe roll
back or re-inject the best validated policy, refit the learned defences, analyse the weakness,
ask the harness optimiser for variants, trial them (``outer.trials``: ``rerank``, one short
inner run whose population each variant ranks by its own weights; ``rerun``, a short inner run
per variant from a copy of the population, concurrently when the backend serves parallel
requests), validate the trials' best policies, tell the harness optimiser and continue from the
winning trial. With the outer loop
off, the monitor step only validates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from evotrainer.defences.learned import NAMES as LEARNED_NAMES
from evotrainer.defences.learned import batch_outputs
from evotrainer.engine.telemetry import _finite
from evotrainer.evaluation.rank_judge import evidence, judge
from evotrainer.evaluation.runner import ThreadRunner
from evotrainer.harness.genome import HarnessGenome
from evotrainer.harness.reward import score_rollout, weighted_reward
from evotrainer.llm.base import parallel_requests_of
from evotrainer.loops.inner import PolicyOptimizer
from evotrainer.loops.rng import stream
from evotrainer.loops.weakness import DISAGREE, WeaknessReport
from evotrainer.run import events as ev
from evotrainer.tasks.base import Unlabels
from evotrainer.types import Instance, Rollout, ValidationResult

# a trial's population, batch, epoch and the harness that drew the batch
Trial = tuple[PolicyOptimizer, list[Instance], int, HarnessGenome]
Move = tuple[str, str]  # a queued neighbour move (kind, value)


class OuterStep:
    """The part of CoEvolution that runs the harness optimiser's steps (a mixin)."""

    def _outer_step(self, batch: list[Instance]) -> list[Instance]:
        self.outer_step += 1
        self._read_ratings()
        best = self.inner.best()
        current = self.validate([best], "incumbent", race=True)[best.id]
        div = self.meta.population_diversity(self.inner, batch)
        self._archive(best, self.harness, current, div)
        rollback = self.hopt.observe(self.meta.score(self.meta.vector(best.id, current, div)))
        if rollback is not None:
            fit = self.fitness_of([rollback.policy], batch, self.harness, drawn=self.drawn)
            self.inner.inject(rollback.policy, fit[rollback.policy.id])
            self.inner.refit(
                self.fitness_of(self.inner.population, batch, self.harness, drawn=self.drawn)
            )
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
            if self.cfg.defences.learned_reward_data == "selection":
                rows = self._selection_rows()
            else:
                rows = self.learned.training_rows(self.inner.population, self.outer_step)
            refit = self.learned.refit(
                batch_outputs(self.evaluator, pop_ids, batch), rows, self.outer_step
            )
            self.emit(ev.DEFENCE_REFIT, outer_step=self.outer_step, **refit)
            self.inner.refit(
                self.fitness_of(self.inner.population, batch, self.harness, drawn=self.drawn)
            )
        report = self._weakness(self.inner, batch, current)
        self._suspects.clear()
        variants = self.hopt.ask(report)
        if self.cfg.outer.trials == "rank":
            ranked = self._rank_step(variants, batch, report, current, rollback is not None)
            if ranked is not None:
                return ranked
            # too few policies validated to rank: the variants are trialled as under rerank
        if self.cfg.outer.trials in ("rerank", "rank"):
            trials, moves = self._rerank_trials(variants)
        else:
            trials, moves = self._rerun_trials(variants)
        bests = [opt.best() for opt, *_ in trials]
        results = self.validate(bests, "trial", race=True)
        s_vals = [results[b.id].s_val for b in bests]
        divs = [self.meta.population_diversity(opt, tb) for opt, tb, *_ in trials]
        vectors = [
            self.meta.vector(b.id, results[b.id], d) for b, d in zip(bests, divs, strict=True)
        ]
        for b, h, d in zip(bests, variants, divs, strict=True):
            self._archive(b, h, results[b.id], d)
        choice, why, front = self.meta.objective.choose(vectors)
        scores = [self.meta.score(v) for v in vectors]
        decision = self.hopt.tell(scores, choice, why)
        self.trial_generations += self.cfg.outer.trial_generations * self._trial_runs(len(variants))
        self.inner, batch, self.epoch, self.drawn = trials[decision.index]
        self.inner.moves = moves
        for opt, *_ in trials:  # never propose again what a sibling trial already tried
            self.inner.seen |= opt.seen  # (and a resumed run, whose memory lacks their
            # rollouts, proposes exactly what the uninterrupted run proposes)
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

    def _rank_step(
        self,
        variants: list[HarnessGenome],
        batch: list[Instance],
        report: WeaknessReport,
        current: ValidationResult,
        rolled_back: bool,
    ) -> list[Instance] | None:
        """``outer.trials: rank``: each variant is judged by how its reward ranks the policies
        validated so far (Spearman with their s_val, evaluation/rank_judge.py); no trial run,
        no LLM call. The population goes on under the chosen harness, its fitness re-weighted.
        None when too few policies are validated to rank."""
        found = evidence(self.validator.memo, self._rank_scores)
        if found is None:
            return None
        scores = judge(found, [v.weights for v in variants])
        best = max(scores)
        why = (
            f"its reward ranks the {len(found.policies)} validated policies best (rho {best:+.2f})"
        )
        decision = self.hopt.tell(scores, None, why)
        # the policies validated so far: what the decision saw (the rank picture, summary.json)
        self.hopt.decisions[-1]["validated_before"] = len(self.validator.memo)
        self.inner.refit(
            self.fitness_of(self.inner.population, batch, self.harness, drawn=self.drawn)
        )
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
            s_vals=[None] * len(variants),
            rank_scores=scores,
            ranked_policies=len(found.policies),
            objectives=[],
            meta_scores=scores,
            selection="rank",
            front=[],
            trial_best=[],
            chosen=decision.chosen.to_json(),
            changed=decision.changed,
            reason=decision.reason,
            rollback=rolled_back,
        )
        self._emit_generation(self.inner, batch)
        return batch

    def _rescore(self, row: Mapping[str, Any]) -> Mapping[str, float]:
        """The base component scores of one validation answer as training would score it: on
        the meeting without its references when the training pool is unlabelled (memoised; the
        learned defences are left out: they change at every refit)."""
        key = (str(row.get("instance_id")), str(row.get("output")))
        hit = self._rescored.get(key)
        if hit is not None:
            return hit
        inst = self._validation_by_id[key[0]]
        if self._pool_unlabelled and isinstance(self.task, Unlabels):
            inst = self.task.unlabelled(inst)
        error = row.get("error")
        rollout = Rollout("", inst.id, key[1], error=str(error) if error else None)
        parsed = self.task.parse(rollout.output) if rollout.error is None else None
        base = {k: c for k, c in self.evaluator.components.items() if k not in LEARNED_NAMES}
        scores = score_rollout(base, inst, rollout, parsed).applicable()
        self._rescored[key] = scores
        return scores

    def _rank_scores(self, policy_id: str, row: Mapping[str, Any]) -> Mapping[str, float]:
        """A validated answer's scores for the rank judgement: the base components, plus the
        learned reward's score from a model fitted without this policy's answers."""
        scores = dict(self._rescore(row))
        model = self.learned.model
        if model is not None and model.is_fitted and not row.get("error"):
            held_out = model.without(policy_id, rng_seed=self.cfg.seed)
            if held_out is not None:
                scores["learned"] = held_out.predict(scores, str(row.get("output", "")))
        return scores

    def _selection_rows(self) -> dict[str, ValidationResult]:
        """The fully validated policies' selection rows, their answers' component scores as
        training would score them (``defences.learned_reward_data: selection``)."""
        out = {}
        for pid, res in self.validator.memo.items():
            if res.partial:
                continue
            rows = tuple({**r, "rewards": dict(self._rescore(r))} for r in res.per_instance)
            out[pid] = replace(res, per_instance=rows)
        return out

    @property
    def _validation_by_id(self) -> dict[str, Instance]:
        return {i.id: i for i in self.validator.instances}

    @property
    def _pool_unlabelled(self) -> bool:
        """The real training pool holds no human reference (the scarce-labels setting)."""
        pool = self.real_pool.instances
        return bool(pool) and not any(self.task.reference_text(i) for i in pool)

    def _trial_started(self, i: int, n: int, h: HarnessGenome) -> None:
        self.emit(
            ev.TRIAL_STARTED,
            outer_step=self.outer_step,
            trial=i + 1,
            trials=n,
            harness=h.to_json(),
            mode=self.cfg.outer.trials,
        )

    def _trial_finished(self, i: int, n: int, opt: PolicyOptimizer) -> None:
        tbest = opt.best()
        self.emit(
            ev.TRIAL_FINISHED,
            outer_step=self.outer_step,
            trial=i + 1,
            trials=n,
            best_policy=tbest.id,
            best_fitness=_finite(opt.fitness[tbest.id].fitness),
            budget=self.budget.snapshot(),
        )

    def _trial_run(self, opt: PolicyOptimizer, h: HarnessGenome) -> tuple[list[Instance], int]:
        """Run ``opt`` (a copy) under ``h`` on the next epoch's fresh batch: the elites re-scored
        there, then ``outer.trial_generations`` generations; returns the batch and the epoch."""
        epoch = self.epoch + 1
        tb = self.batch(epoch, h)
        opt.shrink_to_elites()
        opt.refit(self.fitness_of(opt.population, tb, h, epoch))
        for _ in range(self.cfg.outer.trial_generations):
            epoch = self._generation(opt, tb, h, epoch)
        return tb, epoch

    def _trial_runs(self, variants: int) -> int:
        """How many trial runs an outer step with ``variants`` variants makes."""
        return 1 if self.cfg.outer.trials == "rerank" else variants

    def _rerun_trials(self, variants: list[HarnessGenome]) -> tuple[list[Trial], list[Move]]:
        """``outer.trials: rerun``: each variant runs its own trial from a copy of the
        population, on its own batch; returns the trials and the main line's neighbour queue."""

        def trial(i: int, h: HarnessGenome) -> Trial:  # independent of the others
            self._trial_started(i, len(variants), h)
            opt = self.inner.clone(stream(self.cfg.seed, "trial", self.outer_step, i))
            tb, epoch = self._trial_run(opt, h)
            self._trial_finished(i, len(variants), opt)
            return opt, tb, epoch, h

        # Trials make children by the operators only: with one neighbour queue they would all
        # make the same children, and sibling trials would read each other's rollouts of them
        # (a race under concurrency). The queue goes on with the winning trial.
        moves = list(self.inner.moves)
        # concurrently when the backend serves parallel requests (same results either way)
        width = len(variants) if parallel_requests_of(self.stack.client) > 1 else 1
        return ThreadRunner(width).map(lambda x: trial(*x), list(enumerate(variants))), moves

    def _rerank_trials(self, variants: list[HarnessGenome]) -> tuple[list[Trial], list[Move]]:
        """``outer.trials: rerank``: one trial run under the current harness on a fresh batch
        (the main line's next generation, its neighbour queue included), then each variant
        ranks that population by its own weights, and by its own real share: the batch's real
        and synthetic instances weighted to it (``share_weights``). Ranking needs no new
        rollouts except for a child that racing stopped early and a variant would promote: it
        meets the rest of the batch. Every variant's trial shares the batch and the children,
        so the validation that follows compares what the variants choose, not which trial was
        luckier with its children. A winner's L and task mix apply from the next batch."""
        n = len(variants)
        drawer = self.harness
        self._trial_started(0, n, drawer)
        opt = self.inner.clone(stream(self.cfg.seed, "trial", self.outer_step, 0))
        opt.moves = list(self.inner.moves)  # one trial run: no sibling shares the queue
        tb, epoch = self._trial_run(opt, drawer)
        trials: list[Trial] = []
        for i, h in enumerate(variants):
            if i or h.id != drawer.id:
                self._trial_started(i, n, h)
            twin = opt.clone(stream(self.cfg.seed, "trial", self.outer_step, i))
            twin.refit(self.fitness_of(twin.population, tb, h, epoch, race=opt, drawn=drawer))
            self._trial_finished(i, n, twin)
            trials.append((twin, tb, epoch, drawer))
        return trials, list(opt.moves)

    def _outer_affordable(self) -> bool:
        """Whether the calls left (``budget.max_calls``, less the reserve) pay for an outer
        step (``outer.skip_unaffordable``); when not, say so (``outer_step_skipped``). An outer
        step that runs out of budget mid-way decides nothing and leaves no calls for the inner
        loop: skipped, the best policy is validated and the inner loop goes on."""
        left = self.budget.calls_left()
        cost = self._outer_cost()
        if not self.cfg.outer.skip_unaffordable or left is None or cost <= left:
            return True
        self.emit(
            ev.OUTER_STEP_SKIPPED,
            generation=self.inner.generation,
            calls_left=left,
            estimate=cost,
            message=f"outer step skipped at generation {self.inner.generation}: it may cost "
            f"{cost} LLM calls (trials and their validation), {left} are left before the final "
            "validation; the inner loop goes on",
        )
        return False

    def _outer_cost(self) -> int:
        """An upper estimate of one outer step's calls: each trial run (one under ``rerank``,
        one per variant under ``rerun``) re-scores the elites on its batch and runs
        ``trial_generations`` generations of children (no racing cut, no operator calls), then
        each trial's best and the incumbent meet the selection part. The variants counted are
        the most the optimizer can propose (steered ones may outnumber ``outer.variants``)."""
        inner, outer = self.cfg.inner, self.cfg.outer
        trials = self.hopt.max_variants() + int(outer.include_incumbent)
        children = outer.trial_generations * (inner.population - inner.elites)
        per_trial = (inner.elites + children) * inner.tasks_per_generation
        n_val = len(self.validator.instances)
        return self._trial_runs(trials) * per_trial + trials * n_val + n_val

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
        self._protect(best, batch, from_s_val=s_val)

    def _monitor_step(self) -> None:
        """Harness fixed (outer loop off): still validate the best policy every ``outer.every``
        generations, so s_val is tracked and the proxy-gap monitor can compare it to the
        training reward."""
        self.outer_step += 1
        self._read_ratings()
        best = self.inner.best()
        v = self.validate([best], "incumbent", race=True)[best.id]
        div = self.meta.population_diversity(self.inner, self.batch(self.epoch, self.drawn))
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
