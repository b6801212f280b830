"""The outer step, every ``outer.every`` generations: validate the inner loop's best, maybe roll
back or re-inject the best validated policy, refit the learned defences, analyse the weakness,
ask the harness optimiser for variants, trial them (engine/trials.py), validate the trials'
best policies, tell the harness optimiser and continue from the winning trial; or, under
``outer.trials: rank``, judge the variants by how their rewards rank the policies validated so
far (no trial run). With the outer loop off, the monitor step only validates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evotrainer.defences.learned import batch_outputs
from evotrainer.engine.components import Components
from evotrainer.engine.distill_step import distill_cost
from evotrainer.engine.generation import draw_batch, fitness_of
from evotrainer.engine.state import RunState
from evotrainer.engine.telemetry import alerts, emit_generation
from evotrainer.engine.trials import Trial, rerank_trials, rerun_trials, trial_runs
from evotrainer.engine.validate import archive, protect, read_ratings, validate
from evotrainer.evaluation.rank_judge import evidence, judge, rankable
from evotrainer.harness.genome import HarnessGenome
from evotrainer.harness.reward import weighted_reward
from evotrainer.loops.inner import PolicyOptimizer
from evotrainer.loops.outer import HarnessDecision
from evotrainer.loops.weakness import DISAGREE, WeaknessReport
from evotrainer.policy.archive import ArchiveEntry
from evotrainer.run import events as ev
from evotrainer.types import Instance, ValidationResult


def outer_step(c: Components, s: RunState, batch: list[Instance]) -> list[Instance]:
    """One harness step; returns the main line's batch (the winning trial's)."""
    s.outer_step += 1
    read_ratings(c, s)
    best = s.inner.best()
    current = validate(c, s, [best], "incumbent", race=True)[best.id]
    div = c.meta.population_diversity(s.inner, batch)
    archive(c, s, best, s.harness, current, div)
    rollback = s.hopt.observe(c.meta.score(c.meta.vector(best.id, current, div)))
    if rollback is not None:
        _roll_back(c, s, batch, rollback, current.s_val)
    else:
        reinject_best(c, s, batch, current.s_val)
    if c.learned.active:
        _refit_learned(c, s, batch)
    report = weakness(c, s, s.inner, batch, current)
    s.suspects.clear()
    variants = s.hopt.ask(report)
    if c.cfg.outer.trials == "rank":
        ranked = rank_step(c, s, variants, batch, report, current, rollback is not None)
        if ranked is not None:
            return ranked
        # too few policies validated to rank: the variants are trialled as under rerank
    if c.cfg.outer.trials in ("rerank", "rank"):
        trials, moves = rerank_trials(c, s, variants)
    else:
        trials, moves = rerun_trials(c, s, variants)
    decision, found = _choose_trial(c, s, variants, trials)
    s.trial_generations += c.cfg.outer.trial_generations * trial_runs(c, len(variants))
    s.inner, batch, s.epoch, s.drawn = trials[decision.index]
    s.inner.moves = moves
    for opt, *_ in trials:  # never propose again what a sibling trial already tried
        s.inner.seen |= opt.seen  # (and a resumed run, whose memory lacks their
        # rollouts, proposes exactly what the uninterrupted run proposes)
    _watch_validation(c, s, current)
    c.emit(
        ev.OUTER_STEP,
        outer_step=s.outer_step,
        generation=s.inner.generation,
        weakness=report.to_json(),
        variants=[v.to_json() for v in variants],
        s_vals=found["s_vals"],
        objectives=found["objectives"],
        meta_scores=found["meta_scores"],
        selection=c.cfg.meta.selection,
        front=found["front"],
        trial_best=found["trial_best"],
        chosen=decision.chosen.to_json(),
        changed=decision.changed,
        reason=decision.reason,
        rollback=rollback is not None,
    )
    emit_generation(c, s, s.inner, batch)
    return batch


def _roll_back(
    c: Components, s: RunState, batch: list[Instance], to: ArchiveEntry, from_s_val: float
) -> None:
    """The harness optimiser rolled back to an archived pair: its policy joins the
    population, which is re-scored under the restored harness."""
    fit = fitness_of(c, s, [to.policy], batch, s.harness, drawn=s.drawn)
    s.inner.inject(to.policy, fit[to.policy.id])
    s.inner.refit(fitness_of(c, s, s.inner.population, batch, s.harness, drawn=s.drawn))
    c.emit(
        ev.ROLLBACK,
        to_policy=to.policy.id,
        to_harness=to.harness.to_json(),
        s_val=to.s_val,
        from_s_val=from_s_val,
        outer_step=s.outer_step,
        generation=s.inner.generation,
    )


def _refit_learned(c: Components, s: RunState, batch: list[Instance]) -> None:
    """Refit the learned defences (discriminator, learned reward) and re-score the
    population with them."""
    pop_ids = [p.id for p in s.inner.population]
    if c.cfg.defences.learned_reward_data == "selection":
        rows = c.rank_scores.selection_rows()
    else:
        rows = c.learned.training_rows(s.inner.population, s.outer_step)
    refit = c.learned.refit(batch_outputs(c.evaluator, pop_ids, batch), rows, s.outer_step)
    c.emit(ev.DEFENCE_REFIT, outer_step=s.outer_step, **refit)
    s.inner.refit(fitness_of(c, s, s.inner.population, batch, s.harness, drawn=s.drawn))


def _choose_trial(
    c: Components, s: RunState, variants: list[HarnessGenome], trials: list[Trial]
) -> tuple[HarnessDecision, dict[str, Any]]:
    """Validate the trials' best policies, archive them, tell the harness optimiser; returns
    its decision and what the outer_step event reports of the trials."""
    bests = [opt.best() for opt, *_ in trials]
    results = validate(c, s, bests, "trial", race=True)
    s_vals = [results[b.id].s_val for b in bests]
    divs = [c.meta.population_diversity(opt, tb) for opt, tb, *_ in trials]
    vectors = [c.meta.vector(b.id, results[b.id], d) for b, d in zip(bests, divs, strict=True)]
    for b, h, d in zip(bests, variants, divs, strict=True):
        archive(c, s, b, h, results[b.id], d)
    choice, why, front = c.meta.objective.choose(vectors)
    scores = [c.meta.score(v) for v in vectors]
    decision = s.hopt.tell(scores, choice, why)
    found = {
        "s_vals": s_vals,
        "objectives": vectors,
        "meta_scores": scores,
        "front": front,
        "trial_best": [b.id for b in bests],
    }
    return decision, found


def _watch_validation(c: Components, s: RunState, current: ValidationResult) -> None:
    """The proxy-gap monitor's look at the step (the validation and the new weights)."""
    if c.monitor:
        train = s.inner.fitness[s.inner.best().id].fitness
        alerts(c, s, c.monitor.observe_validation(s.outer_step, current.s_val, train))
        alerts(c, s, c.monitor.observe_weights(s.outer_step, s.harness.weights))


def rank_step(
    c: Components,
    s: RunState,
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
    found = evidence(c.validator.memo, c.rank_scores)
    if found is None:
        return None
    scores = judge(found, [v.weights for v in variants])
    best = max(scores)
    why = f"its reward ranks the {len(found.policies)} validated policies best (rho {best:+.2f})"
    decision = s.hopt.tell(scores, None, why)
    # the policies validated so far: what the decision saw (the rank picture, summary.json)
    s.hopt.decisions[-1]["validated_before"] = len(c.validator.memo)
    s.inner.refit(fitness_of(c, s, s.inner.population, batch, s.harness, drawn=s.drawn))
    _watch_validation(c, s, current)
    c.emit(
        ev.OUTER_STEP,
        outer_step=s.outer_step,
        generation=s.inner.generation,
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
    emit_generation(c, s, s.inner, batch)
    return batch


def outer_affordable(c: Components, s: RunState) -> bool:
    """Whether the calls left (``budget.max_calls``, less the reserve) pay for an outer
    step (``outer.skip_unaffordable``); when not, say so (``outer_step_skipped``). An outer
    step that runs out of budget mid-way decides nothing and leaves no calls for the inner
    loop: skipped, the best policy is validated and the inner loop goes on. A distillation
    due after the same generation keeps the calls it may cost (``distill_cost``)."""
    left = c.budget.calls_left()
    if left is not None and s.distill_due:  # the distillation due next keeps its calls
        left = max(0, left - distill_cost(c, s))
    cost = outer_cost(c, s)
    if not c.cfg.outer.skip_unaffordable or left is None or cost <= left:
        return True
    c.emit(
        ev.OUTER_STEP_SKIPPED,
        generation=s.inner.generation,
        calls_left=left,
        estimate=cost,
        message=f"outer step skipped at generation {s.inner.generation}: it may cost "
        f"{cost} LLM calls (trials and their validation), {left} are left before the final "
        "validation; the inner loop goes on",
    )
    return False


def outer_cost(c: Components, s: RunState) -> int:
    """An upper estimate of one outer step's calls: each trial run (one under ``rerank``,
    one per variant under ``rerun``) re-scores the elites on its batch and runs
    ``trial_generations`` generations of children (no racing cut, no operator calls), then
    each trial's best and the incumbent meet the selection part. The variants counted are
    the most the optimizer can propose (steered ones may outnumber ``outer.variants``).
    Under ``outer.trials: rank`` with enough validated policies to rank, the variants cost no
    call: the step is the incumbent's validation alone."""
    inner, outer = c.cfg.inner, c.cfg.outer
    n_val = len(c.validator.instances)
    if outer.trials == "rank" and rankable(c.validator.memo):
        return n_val
    trials = s.hopt.max_variants() + int(outer.include_incumbent)
    children = outer.trial_generations * (inner.population - inner.elites)
    per_trial = (inner.elites + children) * inner.tasks_per_generation
    return trial_runs(c, trials) * per_trial + trials * n_val + n_val


def reinject_best(c: Components, s: RunState, batch: list[Instance], s_val: float) -> None:
    """When the inner loop's best validates clearly below the best validated policy, put
    that policy back into the population as an elite: the GA then also explores around
    what the validation data prefers, and a harness variant that ranks it first can win."""
    best = s.hopt.archive.best()
    if (
        not c.cfg.outer.reinject_best
        or best is None
        or best.s_val <= s_val + DISAGREE
        or best.policy.id == s.inner.protected
    ):
        return
    protect(c, s, best, batch, from_s_val=s_val)


def monitor_step(c: Components, s: RunState) -> None:
    """Harness fixed (outer loop off): still validate the best policy every ``outer.every``
    generations, so s_val is tracked and the proxy-gap monitor can compare it to the
    training reward."""
    s.outer_step += 1
    read_ratings(c, s)
    best = s.inner.best()
    v = validate(c, s, [best], "incumbent", race=True)[best.id]
    div = c.meta.population_diversity(s.inner, draw_batch(c, s, s.epoch, s.drawn))
    archive(c, s, best, s.harness, v, div)
    s.hopt.s_val_history.append(c.meta.score(c.meta.vector(best.id, v, div)))
    if c.monitor:
        train = s.inner.fitness[best.id].fitness
        alerts(c, s, c.monitor.observe_validation(s.outer_step, v.s_val, train))


def weakness(
    c: Components,
    s: RunState,
    opt: PolicyOptimizer,
    batch: Sequence[Instance],
    v: ValidationResult,
) -> WeaknessReport:
    """What the harness optimiser steers by: the best policy's training components against
    its validation, its reward by kind of synthetic instance, the monitor's suspects."""
    best = opt.best()
    fit = opt.fitness[best.id]
    records = c.evaluator.evaluate([best], batch)  # memoised; after a resume, cached
    by_kind: dict[str, list[float]] = {}
    for inst in batch:  # the mix is over the generator's kinds: synthetic instances only
        if inst.real:
            continue
        rec = records[(best.id, inst.id)]
        by_kind.setdefault(inst.kind, []).append(weighted_reward(rec.vector, s.harness.weights))
    return WeaknessReport(
        s_val=v.s_val,
        s_val_by_length=c.validator.s_val_by_bucket(v),
        train_reward=fit.fitness,
        train_components=dict(fit.components),
        validation=dict(v.aggregates),
        reward_by_kind={k: sum(x) / len(x) for k, x in by_kind.items()},
        suspects=tuple(sorted(s.suspects)),
        best_s_val=archived.s_val if (archived := s.hopt.archive.best()) else None,
        hints=c.task.harness_hints(),
    )
