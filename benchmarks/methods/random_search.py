"""``random_search``: random prompt variations (1-2 of the engine's operators applied to a
random seed), scored in batches on the selection meetings until the budget is spent; the best
kept."""

from __future__ import annotations

import random
import time

from benchmarks import common as C
from benchmarks.bench import Bench, RunOut
from evotrainer.errors import BudgetExceeded
from evotrainer.operators.base import OperatorContext
from evotrainer.operators.registry import choose_operator, default_operator_weights
from evotrainer.operators.repair import repair_child
from evotrainer.policy.genome import PolicyGenome


def run(bench: Bench, seed: int) -> RunOut:
    t0 = time.perf_counter()
    stack = bench.stack("random_search", seed, max_calls="budget")
    validator = bench.validator(stack, seed)
    rng = C.rng_for("random-search", seed)
    seeds = bench.seeds()
    # the engine's operators, with the task's template library; the few-shot operator has
    # no examples and the feedback-directed edit no scores here, so they make no children
    ctx = OperatorContext(
        rng=rng,
        generation=1,
        llm=stack.client,
        sampling=bench.operator_sampling(seed),
        templates=tuple(bench.task.output_templates()),
        vocabulary=bench.task.vocabulary(),
    )
    weights = default_operator_weights()
    n_sel = len(bench.selection.instances)
    seen = {p.id for p in seeds}
    pending: list[PolicyGenome] = list(seeds)
    scored: dict[str, tuple[PolicyGenome, float]] = {}
    proposed = failed = 0
    budget = stack.budget

    def left() -> int:
        return bench.budget - budget.backend_calls

    try:
        while left() >= n_sel:
            k = min(bench.prof["random_batch"], left() // n_sel)
            tries = 0
            while len(pending) < k and left() // n_sel > len(pending) and tries < 20 * k:
                tries += 1
                child = variation(rng, seeds, ctx, weights)
                proposed += 1
                if child is None or child.id in seen:
                    failed += 1
                    continue
                seen.add(child.id)
                pending.append(child)
            k = min(len(pending), left() // n_sel)
            if k <= 0:
                break
            batch, pending = pending[:k], pending[k:]
            res = validator.validate(batch)
            for p in batch:
                scored[p.id] = (p, res[p.id].s_val)
    except BudgetExceeded:
        pass
    best, s = max(scored.values(), key=lambda t: t[1])
    details = {"candidates_scored": len(scored), "proposed": proposed, "rejected": failed}
    return RunOut(best, s, budget, time.perf_counter() - t0, details)


def variation(
    rng: random.Random,
    seeds: list[PolicyGenome],
    ctx: OperatorContext,
    weights: dict[str, float],
) -> PolicyGenome | None:
    """1-2 random operators applied to random seeds (no reflective mutation: random search
    has no feedback to reflect on)."""
    current: PolicyGenome | None = None
    for _ in range(1 if rng.random() < 0.6 else 2):
        op = choose_operator(rng, weights, llm_available=True, exclude=("reflective",))
        if op.arity == 2:
            parents = [current or rng.choice(seeds), rng.choice(seeds)]
        else:
            parents = [current or rng.choice(seeds)]
        child = op.apply(parents, ctx)
        child = repair_child(child, ctx.max_chars) if child else None
        if child is not None:
            current = child
    return current
