"""The weighted reward: R = sum_i w_i * R_i over the harness's active components.

Every registered component is scored for every rollout (they are cheap), so any harness variant
can re-weight stored score vectors without another LLM call: this is how the outer loop reuses
what the inner loop already evaluated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evotrainer.tasks.base import RewardComponent
from evotrainer.types import ComponentScore, Instance, Rollout, ScoreVector


def score_rollout(
    components: Mapping[str, RewardComponent],
    instance: Instance,
    rollout: Rollout,
    parsed: Any,
) -> ScoreVector:
    """All component scores for one rollout. A failed rollout scores 0 everywhere, with the
    error as feedback; a component that raises (a bug) scores 0 with the exception as feedback."""
    scores = []
    for name, comp in components.items():
        if rollout.error is not None:
            scores.append(ComponentScore(name, 0.0, f"no output: {rollout.error}"))
            continue
        try:
            cs = comp.score(instance, rollout.output, parsed)
            value = min(1.0, max(0.0, float(cs.score)))
            scores.append(ComponentScore(name, value, cs.feedback))
        except Exception as exc:  # noqa: BLE001 - a plug-in bug must not end the run
            scores.append(
                ComponentScore(name, 0.0, f"component error: {type(exc).__name__}: {exc}")
            )
    return ScoreVector(tuple(scores))


def weighted_reward(
    vector: ScoreVector | Mapping[str, float], weights: Mapping[str, float]
) -> float:
    values = vector.as_dict() if isinstance(vector, ScoreVector) else vector
    total = sum(w for w in weights.values() if w > 0)
    if total <= 0:
        return 0.0
    return sum(w * values.get(k, 0.0) for k, w in weights.items() if w > 0) / total
