"""The inner loop: a genetic algorithm over PolicyGenomes, as an ask/tell optimiser.

    opt = PolicyOptimizer(cfg.inner, seeds, rng, llm=llm)
    while ...:
        candidates = opt.ask()                   # first: the initial population; then children
        opt.tell({p.id: fitness(p) for p in candidates})

Selection: the ``elites`` best survive unchanged; parents of the ``population - elites`` children
are drawn by tournament (preference for high fitness). Children come from the operators
(crossover and mutation, lexical, structural and LLM-driven), chosen by a bandit on each
operator's observed success (``inner.operator_choice``), are repaired, deduplicated against the
population and everything seen before, and never evaluated when empty or unreadable. The
structural operators draw on ``resources`` (the task's templates and edits, few-shot example
candidates, the harness weights), which the driver keeps current. The optimiser does not
evaluate anything itself; it also never prints (the driver emits events).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import zip_longest
from typing import Any

from evotrainer.config import InnerConfig
from evotrainer.evaluation.evaluator import PolicyFitness
from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.loops.rng import rng_from_state, rng_state
from evotrainer.operators.bandit import choose_bandit
from evotrainer.operators.base import FeedbackEdit, OperatorContext, make_child, quote
from evotrainer.operators.keywords import insert_phrase, insertable
from evotrainer.operators.registry import choose_operator, default_operator_weights
from evotrainer.operators.repair import repair_child
from evotrainer.operators.variations import seed_variations
from evotrainer.operators.vocabulary import GENERAL, InstructionVocabulary
from evotrainer.plain import typed
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import Instance

MAX_ATTEMPTS_PER_CHILD = 6  # operator attempts a child slot makes before it gives up


@dataclass
class OperatorResources:
    """What the structural operators draw on besides their parents (see OperatorContext)."""

    templates: Sequence[str] = ()
    examples: Sequence[str] = ()
    edits: Mapping[str, Sequence[FeedbackEdit]] = field(default_factory=dict)
    weights: Mapping[str, float] = field(default_factory=dict)
    vocabulary: InstructionVocabulary = GENERAL  # the task's style phrases and synonyms
    max_tokens: int = 320  # model.max_tokens: the answer cap a policy's max_tokens gene moves


@dataclass
class OperatorStats:
    tried: int = 0
    produced: int = 0
    rejected: int = 0
    improved: int = 0  # child fitness > best parent fitness

    def as_dict(self) -> dict[str, int]:
        return {
            "tried": self.tried,
            "produced": self.produced,
            "rejected": self.rejected,
            "improved": self.improved,
        }


@dataclass
class PolicyOptimizer:
    cfg: InnerConfig
    seeds: list[PolicyGenome]
    rng: random.Random
    llm: LLMClient | None = None
    sampling: SamplingParams = field(default_factory=lambda: SamplingParams(temperature=0.8))
    population: list[PolicyGenome] = field(default_factory=list)
    fitness: dict[str, PolicyFitness] = field(default_factory=dict)
    generation: int = 0
    seen: set[str] = field(default_factory=set)
    op_stats: dict[str, OperatorStats] = field(default_factory=dict)
    pending: list[PolicyGenome] = field(default_factory=list)
    resources: OperatorResources = field(default_factory=OperatorResources)
    protected: str | None = None  # a re-injected policy that survives like an elite
    moves: list[tuple[str, str]] = field(default_factory=list)  # the anchor's untried neighbours
    parallel: int = 1  # > 1: the children of a generation are made concurrently (see below)

    @property
    def elites(self) -> int:
        """How many of the population survive unchanged each generation (``inner.elites``)."""
        return self.cfg.elites

    @property
    def operator_weights(self) -> dict[str, float]:
        return dict(self.cfg.operators or default_operator_weights())

    # -- ask / tell -----------------------------------------------------------------------
    def ask(self) -> list[PolicyGenome]:
        if not self.population:
            initial = list(self.seeds)[: self.cfg.population]
            if len(initial) < self.cfg.population:
                initial += seed_variations(
                    initial,
                    self.cfg.population - len(initial),
                    self.rng,
                    vocab=self.resources.vocabulary,
                )
            self.pending = initial
        else:
            self.pending = self._children(self.cfg.population - self.cfg.elites)
        self.seen.update(p.id for p in self.pending)
        return list(self.pending)

    def tell(self, results: Mapping[str, PolicyFitness]) -> None:
        missing = [p.id for p in self.pending if p.id not in results]
        if missing:
            raise ValueError(f"tell() lacks fitness for asked policies: {missing}")
        self.fitness.update({p.id: results[p.id] for p in self.pending})
        if not self.population:
            self.population = self.ranked(self.pending)
        else:
            for child in self.pending:
                self._credit(child)
            self.population = self.ranked(self._survivors() + self.pending)
            self.generation += 1
        self.pending = []

    def refit(self, results: Mapping[str, PolicyFitness]) -> None:
        """Replace the fitness of current members (new batch or new reward weights)."""
        self.fitness.update(results)
        self.population = self.ranked(self.population)

    # -- queries --------------------------------------------------------------------------
    def ranked(self, policies: Sequence[PolicyGenome]) -> list[PolicyGenome]:
        # ties broken by id so the order never depends on insertion order
        return sorted(policies, key=lambda p: (-self.fitness[p.id].fitness, p.id))

    def best(self) -> PolicyGenome:
        return self.ranked(self.population)[0]

    def anchor(self) -> PolicyGenome | None:
        """The protected policy (the best validated one) when it is in the population."""
        if self.protected is None or self.cfg.anchor_share <= 0:
            return None
        return next((p for p in self.population if p.id == self.protected), None)

    # What this optimiser knows comes from its own fitness records, never from the evaluator's
    # shared rollout store alone: sibling harness trials run concurrently and fill that store
    # with rollouts of the same policies, so reading it would make a trial depend on how far its
    # siblings had got (and a resumed run, which re-reads every member, would measure otherwise).
    def scored_on(self, policy: PolicyGenome, batch: Sequence[Instance]) -> Sequence[Instance]:
        """The part of ``batch`` this optimiser scored ``policy`` on (racing stops a child after
        the first ``race_first`` instances)."""
        fit = self.fitness.get(policy.id)
        return batch[: fit.n] if fit is not None else ()

    def complete(self, batch: Sequence[Instance]) -> list[PolicyGenome]:
        """The population members this optimiser scored on the whole ``batch``."""
        return [p for p in self.population if len(self.scored_on(p, batch)) >= len(batch)]

    def shrink_to_elites(self) -> None:
        """Keep only the elites (before a new batch: only they would survive anyway)."""
        self.population = self.ranked(self._survivors())

    def _survivors(self) -> list[PolicyGenome]:
        """The elites, and the protected policy when it is not one of them."""
        ranked = self.ranked(self.population)
        elites = ranked[: self.cfg.elites]
        kept = [p for p in ranked if p.id == self.protected and p not in elites]
        return elites + kept

    def inject(self, policy: PolicyGenome, fitness: PolicyFitness, protect: bool = False) -> None:
        """Put an (archived) policy back into the population, replacing the worst member;
        ``protect``: it survives every selection like an elite until another is protected."""
        if protect:
            self.protected = policy.id
        if policy.id in {p.id for p in self.population}:
            return
        self.fitness[policy.id] = fitness
        self.population = self.ranked(self.ranked(self.population)[:-1] + [policy])

    def rebase(
        self,
        policies: Sequence[PolicyGenome],
        results: Mapping[str, PolicyFitness],
        protect: str | None = None,
    ) -> None:
        """Replace the whole population with ``policies`` (e.g. the same texts on new weights
        after a distillation), with their fitness; ``protect``: the new protected policy."""
        self.fitness.update({p.id: results[p.id] for p in policies})
        self.seen.update(p.id for p in policies)
        self.population = self.ranked(list(policies))
        if protect is not None:
            self.protected = protect

    def clone(self, rng: random.Random) -> PolicyOptimizer:
        """An independent copy (for a harness trial) that shares only the LLM client."""
        twin = copy.copy(self)
        twin.rng = rng
        twin.population = list(self.population)
        twin.fitness = dict(self.fitness)
        twin.seen = set(self.seen)
        twin.op_stats = {k: copy.copy(v) for k, v in self.op_stats.items()}
        twin.resources = copy.copy(self.resources)
        twin.moves = []  # the neighbour queue is the main line's (see engine/outer_step.py)
        twin.pending = []
        return twin

    # -- variation ------------------------------------------------------------------------
    def _tournament(self, rng: random.Random | None = None, first: bool = True) -> PolicyGenome:
        """A parent: the anchor with probability ``anchor_share`` (first parent only, so a
        crossover never pairs the anchor with itself by it), else a tournament's winner."""
        rng = rng or self.rng
        anchor = self.anchor() if first else None
        if anchor is not None and rng.random() < self.cfg.anchor_share:
            return anchor
        k = min(self.cfg.tournament_size, len(self.population))
        contenders = rng.sample(self.population, k)
        return self.ranked(contenders)[0]

    def _stats(self, name: str) -> OperatorStats:
        return self.op_stats.setdefault(name, OperatorStats())

    def explore_neighbours(self, anchor: PolicyGenome) -> None:
        """Queue ``anchor``'s one-step structural neighbours (``inner.neighbours``): each library
        template swapped in and each of the task's seed phrases added, alternating, each kind in
        a random order. ``_children`` makes them first, as the anchor's share of the children."""
        if not self.cfg.neighbours:
            return
        current = anchor.components.get("template", "").strip()
        templates = [t for t in self.resources.templates if t.strip() != current]
        vocab = self.resources.vocabulary
        phrases = insertable(anchor.system, vocab.seed_phrases or None, vocab)
        self.rng.shuffle(templates)
        self.rng.shuffle(phrases)
        kinds = [[("template", t) for t in templates], [("keyword", p) for p in phrases]]
        self.moves = [m for pair in zip_longest(*kinds) for m in pair if m is not None]

    def _neighbours(self, n: int, taken: set[str]) -> list[PolicyGenome]:
        """Up to ``n`` new children from the queued moves, applied to the anchor."""
        anchor = self.anchor()
        if anchor is None:
            return []
        out: list[PolicyGenome] = []
        while self.moves and len(out) < n:
            kind, value = self.moves.pop(0)
            comps = dict(anchor.components)
            if kind == "template":
                comps["template"] = value
                note = f"neighbour: template {quote(value, 30)}"
            else:
                comps["system"], _ = insert_phrase(anchor.system, value, 1.0)
                note = f"neighbour: +{quote(value, 60)}"
            child = make_child(
                [anchor], comps, self.generation + 1, kind, note, self.cfg.max_prompt_chars
            )
            if (child := self._admit(kind, child, taken)) is not None:
                out.append(child)
        return out

    def _admit(
        self, operator: str, child: PolicyGenome | None, taken: set[str]
    ) -> PolicyGenome | None:
        """A made child, repaired, if it is new (not in ``taken``, never seen; it joins
        ``taken``), else None; either way counted in ``operator``'s statistics."""
        child = repair_child(child, self.cfg.max_prompt_chars) if child else None
        stats = self._stats(operator)
        stats.tried += 1
        if child is None or child.id in taken or child.id in self.seen:
            stats.rejected += 1
            return None
        stats.produced += 1
        taken.add(child.id)
        return child

    def _children(self, n: int) -> list[PolicyGenome]:
        taken = {p.id for p in self.population}
        first = self._neighbours(round(n * self.cfg.anchor_share), taken) if self.moves else []
        return first + self._operator_children(n - len(first), taken)

    def _operator_children(self, n: int, taken: set[str]) -> list[PolicyGenome]:
        ctx = OperatorContext(
            rng=self.rng,
            generation=self.generation + 1,
            llm=self.llm,
            sampling=self.sampling,
            feedback={pid: f.feedback for pid, f in self.fitness.items() if f.feedback},
            max_chars=self.cfg.max_prompt_chars,
            templates=self.resources.templates,
            examples=self.resources.examples,
            edits=self.resources.edits,
            scores={p.id: self.fitness[p.id].components for p in self.population},
            weights=self.resources.weights,
            vocabulary=self.resources.vocabulary,
            component_choice=self.cfg.component_choice,
            tunable_genes=tuple(self.cfg.tunable_genes),
            max_tokens=self.resources.max_tokens,
        )
        if self.parallel > 1:  # a backend that serves parallel requests: overlap the LLM calls
            return children_in_parallel(self, n, ctx, taken)
        children: list[PolicyGenome] = []
        for _ in range(n):
            for _attempt in range(MAX_ATTEMPTS_PER_CHILD):
                op = self._choose()
                parents = [self._tournament(first=i == 0) for i in range(op.arity)]
                if (child := self._admit(op.name, op.apply(parents, ctx), taken)) is not None:
                    children.append(child)
                    break
        return children

    def _choose(self, rng: random.Random | None = None, stats: Mapping[str, Any] | None = None):
        rng = rng or self.rng
        if self.cfg.operator_choice == "bandit":
            return choose_bandit(
                rng,
                self.operator_weights,
                self.op_stats if stats is None else stats,
                self.llm is not None,
            )
        return choose_operator(rng, self.operator_weights, self.llm is not None)

    def _credit(self, child: PolicyGenome) -> None:
        parents = [self.fitness[p] for p in child.lineage.parents if p in self.fitness]
        if parents and self.fitness[child.id].fitness > max(p.fitness for p in parents):
            self._stats(child.lineage.operator).improved += 1

    # -- checkpoint -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "population": [p.to_json() for p in self.population],
            "fitness": {pid: _fit_json(f) for pid, f in self.fitness.items()},
            "seen": sorted(self.seen),
            "op_stats": {k: v.as_dict() for k, v in self.op_stats.items()},
            "rng": rng_state(self.rng),
            "protected": self.protected,
            "moves": [list(m) for m in self.moves],
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.generation = int(state["generation"])
        self.population = [PolicyGenome.from_json(p) for p in state["population"]]
        self.fitness = {pid: typed(PolicyFitness, f) for pid, f in state["fitness"].items()}
        self.seen = set(state["seen"])
        self.op_stats = {k: typed(OperatorStats, v) for k, v in state["op_stats"].items()}
        self.rng = rng_from_state(state["rng"])
        self.protected = state.get("protected")
        self.moves = [(str(k), str(v)) for k, v in state.get("moves", [])]
        self.pending = []


def _fit_json(f: PolicyFitness) -> dict[str, Any]:
    return {
        "policy_id": f.policy_id,
        "fitness": f.fitness,
        "components": dict(f.components),
        "n": f.n,
        "errors": f.errors,
        "feedback": f.feedback,
    }


__all__ = ["PolicyOptimizer", "OperatorStats"]


# -- the children of one generation, made concurrently ------------------------------------------
# The children of one generation, made concurrently (backends that serve parallel requests).
#
# ``PolicyOptimizer._children`` draws every choice from the optimiser's one random stream, so one
# child's LLM operator call (paraphrase, merge, reflection) cannot start before the previous
# child is finished. Here each of the ``n`` children ("slots") gets a stream of its own, seeded
# from the optimiser's stream in slot order, and the slots run on threads, so their LLM calls
# overlap. A slot depends only on its stream, the population, and the operator statistics as they
# were when the generation began (the bandit's choices within one generation use that snapshot),
# so the children are the same however many threads run them and in whatever order the answers
# arrive. The slots are then merged in order: a child an earlier slot made already counts as
# rejected, and that slot goes on (its own stream, one attempt after another) until it has a new
# child or has used its attempts.
#
# Runs on a backend with ``parallel_requests`` > 1 use this scheme, others the sequential loop:
# the two draw differently, so for one seed they make different (equally valid) children, and a
# run's result does not depend on *how* parallel its backend is beyond that.


@dataclass
class _Slot:
    rng: random.Random
    ctx: OperatorContext
    attempts: list[tuple[str, PolicyGenome | None]] = field(default_factory=list)
    child: PolicyGenome | None = None

    def run(
        self, opt: PolicyOptimizer, stats: dict[str, OperatorStats], taken: set[str], limit: int
    ) -> None:
        """Attempts until a child not in ``taken`` (or ``limit`` attempts in all)."""
        self.child = None
        while len(self.attempts) < limit:
            op = opt._choose(self.rng, stats)
            parents = [opt._tournament(self.rng, first=i == 0) for i in range(op.arity)]
            child = op.apply(parents, self.ctx)
            child = repair_child(child, opt.cfg.max_prompt_chars) if child else None
            ok = child is not None and child.id not in taken and child.id not in opt.seen
            self.attempts.append((op.name, child if ok else None))
            if ok:
                self.child = child
                return


def children_in_parallel(
    opt: PolicyOptimizer, n: int, ctx: OperatorContext, taken: set[str]
) -> list[PolicyGenome]:
    """``n`` new children, none in ``taken`` (the population and the generation's neighbour
    children; the ids of the new ones are added to it)."""
    seeds = [opt.rng.randrange(2**63) for _ in range(n)]
    snapshot = {k: copy.copy(v) for k, v in opt.op_stats.items()}
    population = set(taken)
    slots = []
    for seed in seeds:
        rng = random.Random(seed)
        slots.append(_Slot(rng, replace(ctx, rng=rng)))
    with ThreadPoolExecutor(max_workers=max(1, min(n, opt.parallel))) as pool:
        list(pool.map(lambda s: s.run(opt, snapshot, population, MAX_ATTEMPTS_PER_CHILD), slots))
    children: list[PolicyGenome] = []
    for slot in slots:  # merge in slot order; a duplicate of an earlier slot's child retries
        while slot.child is not None and slot.child.id in taken:
            name, _ = slot.attempts[-1]
            slot.attempts[-1] = (name, None)
            slot.run(opt, snapshot, taken, MAX_ATTEMPTS_PER_CHILD)
        for name, child in slot.attempts:
            stats = opt._stats(name)
            stats.tried += 1
            if child is None:
                stats.rejected += 1
            else:
                stats.produced += 1
        if slot.child is not None:
            taken.add(slot.child.id)
            children.append(slot.child)
    return children
