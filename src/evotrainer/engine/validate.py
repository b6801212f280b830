"""Validation during the run: s_val on the selection part (racing against the best archived
policy), the archive of fully validated (policy, harness) pairs, and people's ratings."""

from __future__ import annotations

from collections.abc import Sequence

from evotrainer.harness.genome import HarnessGenome
from evotrainer.policy.archive import ArchiveEntry
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.types import Instance, ValidationResult


class Validation:
    """The part of CoEvolution that validates and archives (a mixin)."""

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
        spent = self.budget.snapshot()
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
                llm_calls=spent["llm_calls"],  # spent when this s_val was known
                backend_calls=spent["backend_calls"],  # of them, those the backend answered
            )
        return results

    def _validate_generation(self, batch: list[Instance]) -> None:
        """After an inner generation: race the ``validation.each_generation`` most promising
        population members not validated yet against the best so far, archive the ones that
        ran the whole selection part, and make the best validated policy the GA's anchor."""
        k = self.cfg.validation.each_generation
        done = self.judge.rejected.keys() | self.validator.raced_out  # judged already
        todo = [
            p for p in self.inner.population if p.id not in self.validator.memo and p.id not in done
        ]
        todo = sorted(todo, key=self._promise, reverse=True)[:k]
        if todo:
            results = self.validate(todo, "generation", race=True)
            div = self.meta.population_diversity(self.inner, batch)
            for p in todo:
                self._archive(p, self.harness, results[p.id], div)
        self._anchor_best(batch)

    def _promise(self, policy: PolicyGenome) -> tuple[int, float]:
        """How promising an unvalidated member is: with a validated ancestor in the population
        (the anchor, a validated parent), that ancestor's s_val plus the member's paired
        training gain over it on the same batch, i.e. a paired estimate of its s_val (training
        fitness compares families poorly on a weak model, a child with its parent better);
        without one, its training fitness, ranked after every estimate."""
        fit = self.inner.fitness
        here = {p.id for p in self.inner.population}
        memo = self.validator.memo
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
            elif (anc := self.policies.get(pid)) is not None:
                frontier += anc.lineage.parents
        if estimates:
            return 1, max(estimates)
        return 0, fit[policy.id].fitness

    def _anchor_best(self, batch: list[Instance]) -> None:
        """Protect the best validated policy in the population (it survives like an elite and
        is the parent of ``inner.anchor_share`` of the children): the GA explores around what
        the real validation data prefers, not only around what the training reward prefers."""
        best = self.hopt.archive.best()
        if (
            self.cfg.inner.anchor_share <= 0
            or best is None
            or best.policy.id == self.inner.protected
        ):
            return
        self._protect(best, batch, from_s_val=None, reason="anchor")

    def _protect(self, entry: ArchiveEntry, batch: list[Instance], **event: object) -> None:
        """Put an archived policy into the population as the protected elite (scored on
        ``batch``, memoised when it was scored there) and say so (a ``reinject`` event)."""
        fit = self.fitness_of([entry.policy], batch, self.harness, drawn=self.drawn)
        self.inner.inject(entry.policy, fit[entry.policy.id], protect=True)
        if self.cfg.inner.anchor_share > 0:  # the new anchor: try its structural neighbours
            self.inner.explore_neighbours(entry.policy)
        self.emit(
            ev.REINJECT,
            policy=entry.policy.id,
            s_val=entry.s_val,
            outer_step=self.outer_step,
            **event,
        )

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
