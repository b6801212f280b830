"""Validation during the run: s_val on the selection part (racing against the best archived
policy), the archive of fully validated (policy, harness) pairs, the anchor (the best validated
policy, protected in the population), and people's ratings."""

from __future__ import annotations

from collections.abc import Sequence

from evotrainer.engine.components import Components
from evotrainer.engine.generation import fitness_of
from evotrainer.engine.state import RunState
from evotrainer.engine.telemetry import phase
from evotrainer.evaluation.eval_report import answers_degeneracy
from evotrainer.harness.genome import HarnessGenome
from evotrainer.policy.archive import ArchiveEntry
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.run.estimate import VALIDATION
from evotrainer.types import Instance, ValidationResult


def validate(
    c: Components,
    s: RunState,
    policies: Sequence[PolicyGenome],
    role: str,
    race: bool = False,
) -> dict[str, ValidationResult]:
    """Validate policies on the selection part; ``role`` (initial | seed | incumbent |
    trial | final) labels the events. ``race``: race against the best archived policy."""
    todo = {p.id for p in policies if p.id not in c.validator.memo}
    if todo:
        n = len(c.validator.instances) * c.task.max_calls_per_rollout()
        phase(c, s, f"validating {role} policies", VALIDATION, len(todo) * n)
        c.emit(
            ev.VALIDATION_STARTED,
            role=role,
            policies=len(todo),
            instances=len(c.validator.instances),
            race=race and c.cfg.validation.race_first > 0,
        )
    if race:
        best = s.hopt.archive.best()
        v = c.cfg.validation
        results = c.validator.race(
            policies, best.policy if best else None, v.race_first, v.race_margin
        )
    else:
        results = c.validator.validate(policies)
    spent = c.budget.snapshot()
    for p in policies:
        r = results[p.id]
        c.emit(
            ev.VALIDATION,
            role=role,
            policy_id=p.id,
            s_val=r.s_val,
            aggregates=dict(r.aggregates),
            generation=s.inner.generation,
            outer_step=s.outer_step,
            partial=r.partial,
            n=r.n,
            answers=answers_degeneracy(r).to_json(),  # minutes or loops?
            llm_calls=spent["llm_calls"],  # spent when this s_val was known
            backend_calls=spent["backend_calls"],  # of them, those the backend answered
        )
    return results


def validate_generation(c: Components, s: RunState, batch: list[Instance]) -> None:
    """After an inner generation: race the ``validation.each_generation`` most promising
    population members not validated yet against the best so far, archive the ones that
    ran the whole selection part, and make the best validated policy the GA's anchor."""
    k = c.cfg.validation.each_generation
    done = c.judge.rejected.keys() | c.validator.raced_out  # judged already
    todo = [p for p in s.inner.population if p.id not in c.validator.memo and p.id not in done]
    todo = sorted(todo, key=lambda p: promise(c, s, p), reverse=True)[:k]
    if todo:
        results = validate(c, s, todo, "generation", race=True)
        div = c.meta.population_diversity(s.inner, batch)
        for p in todo:
            archive(c, s, p, s.harness, results[p.id], div)
    anchor_best(c, s, batch)


def promise(c: Components, s: RunState, policy: PolicyGenome) -> tuple[int, float]:
    """How promising an unvalidated member is: with a validated ancestor in the population
    (the anchor, a validated parent), that ancestor's s_val plus the member's paired
    training gain over it on the same batch, i.e. a paired estimate of its s_val (training
    fitness compares families poorly on a weak model, a child with its parent better);
    without one, its training fitness, ranked after every estimate."""
    fit = s.inner.fitness
    here = {p.id for p in s.inner.population}
    memo = c.validator.memo
    estimates = []
    seen: set[str] = set()
    frontier = list(policy.lineage.parents)
    while frontier:  # nearest validated ancestors present in the population
        pid = frontier.pop()
        if pid in seen:
            continue
        seen.add(pid)
        if pid in memo and pid in here:
            estimates.append(memo[pid].s_val + fit[policy.id].fitness - fit[pid].fitness)
        elif (anc := s.policies.get(pid)) is not None:
            frontier += anc.lineage.parents
    if estimates:
        return 1, max(estimates)
    return 0, fit[policy.id].fitness


def anchor_best(c: Components, s: RunState, batch: list[Instance]) -> None:
    """Protect the best validated policy in the population (it survives like an elite and
    is the parent of ``inner.anchor_share`` of the children): the GA explores around what
    the real validation data prefers, not only around what the training reward prefers."""
    best = s.hopt.archive.best()
    if c.cfg.inner.anchor_share <= 0 or best is None or best.policy.id == s.inner.protected:
        return
    protect(c, s, best, batch, from_s_val=None, reason="anchor")


def protect(
    c: Components, s: RunState, entry: ArchiveEntry, batch: list[Instance], **event: object
) -> None:
    """Put an archived policy into the population as the protected elite (scored on
    ``batch``, memoised when it was scored there) and say so (a ``reinject`` event)."""
    fit = fitness_of(c, s, [entry.policy], batch, s.harness, drawn=s.drawn)
    s.inner.inject(entry.policy, fit[entry.policy.id], protect=True)
    if c.cfg.inner.anchor_share > 0:  # the new anchor: try its structural neighbours
        s.inner.explore_neighbours(entry.policy)
    c.emit(
        ev.REINJECT,
        policy=entry.policy.id,
        s_val=entry.s_val,
        outer_step=s.outer_step,
        **event,
    )


def archive(
    c: Components,
    s: RunState,
    policy: PolicyGenome,
    harness: HarnessGenome,
    result: ValidationResult,
    diversity: float | None = None,
) -> None:
    """Archive a fully validated pair: not a raced-out estimate, and never a policy that
    broke the constitution (it can never be returned). ``diversity``: of the population
    it came from (the pair's meta-objective vector keeps it)."""
    if result.partial or policy.id in c.judge.rejected:
        return
    objectives = c.meta.objective.vector(result, diversity)  # human: read when ranked
    s.hopt.archive.add(
        ArchiveEntry(policy, harness, result.s_val, s.inner.generation, s.outer_step, objectives)
    )


def read_ratings(c: Components, s: RunState) -> None:
    """New ratings from people (evotrainer review): refit the human objective."""
    news = c.meta.read_ratings()
    if news and "warning" in news:
        c.emit(ev.WARNING, message=news["warning"])
    elif news:
        c.emit(ev.HUMAN_FEEDBACK, outer_step=s.outer_step, **news)
