"""The children of one generation, made concurrently (backends that serve parallel requests).

``PolicyOptimizer._children`` draws every choice from the optimiser's one random stream, so one
child's LLM operator call (paraphrase, merge, reflection) cannot start before the previous
child is finished. Here each of the ``n`` children ("slots") gets a stream of its own, seeded
from the optimiser's stream in slot order, and the slots run on threads, so their LLM calls
overlap. A slot depends only on its stream, the population, and the operator statistics as they
were when the generation began (the bandit's choices within one generation use that snapshot),
so the children are the same however many threads run them and in whatever order the answers
arrive. The slots are then merged in order: a child an earlier slot made already counts as
rejected, and that slot goes on (its own stream, one attempt after another) until it has a new
child or has used its attempts.

Runs on a backend with ``parallel_requests`` > 1 use this scheme, others the sequential loop:
the two draw differently, so for one seed they make different (equally valid) children, and a
run's result does not depend on *how* parallel its backend is beyond that.
"""

from __future__ import annotations

import copy
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from evotrainer.operators.base import OperatorContext
from evotrainer.operators.repair import repair_child
from evotrainer.policy.genome import PolicyGenome

MAX_ATTEMPTS_PER_CHILD = 6  # operator attempts a child slot makes before it gives up

if TYPE_CHECKING:
    from evotrainer.loops.inner import OperatorStats, PolicyOptimizer


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
