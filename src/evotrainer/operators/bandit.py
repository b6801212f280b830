"""Operator choice that adapts to each operator's observed success: Thompson sampling.

Each operator's success rate (a child fitter than its best parent, out of the children it was
tried for: rejected attempts count as failures) has a Beta(1 + successes, 1 + failures)
posterior; a draw from it, times the operator's configured weight (the prior preference),
scores the operator and the best score is chosen. Operators that keep producing better
children are chosen more; ones that fail (e.g. an LLM operator whose answers are junk, or a
template that never helps) fade but are never ruled out.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping
from typing import Any

from evotrainer.operators.base import Operator
from evotrainer.operators.registry import OPERATORS, eligible


def choose_bandit(
    rng: random.Random,
    weights: Mapping[str, float] | None,
    stats: Mapping[str, Any],
    llm_available: bool = False,
    *,
    exclude: Collection[str] = (),
    operators: Mapping[str, Operator] | None = None,
) -> Operator:
    """``stats[name]`` has ``tried`` and ``improved`` (loops.inner.OperatorStats)."""
    ops = OPERATORS if operators is None else operators
    pool = eligible(weights, llm_available, exclude=exclude, operators=ops)
    top = max(w for _, w in pool)
    best, best_score = pool[0][0], -1.0
    for name, w in pool:
        s = stats.get(name)
        wins = s.improved if s else 0
        losses = max(0, s.tried - s.improved) if s else 0
        score = rng.betavariate(1 + wins, 1 + losses) * (w / top)
        if score > best_score:
            best, best_score = name, score
    return ops[best]


def posterior_means(stats: Mapping[str, Any]) -> dict[str, float]:
    """Each operator's posterior mean success rate (for the report)."""
    return {k: (1 + v.improved) / (2 + v.tried) for k, v in stats.items()}
