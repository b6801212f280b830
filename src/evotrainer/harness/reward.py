"""The weighted reward: R = sum_i w_i * R_i over the harness's active components.

Every registered component is scored for every rollout (they are cheap), so any harness variant
can re-weight stored score vectors without another LLM call: this is how the outer loop reuses
what the inner loop already evaluated. A component that does not apply to an instance (e.g. a
reference-based one on a synthetic meeting) is left out and the other weights renormalised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evotrainer.errors import MetricError
from evotrainer.tasks.base import RewardComponent
from evotrainer.types import ComponentScore, Instance, Rollout, ScoreVector


def score_rollout(
    components: Mapping[str, RewardComponent],
    instance: Instance,
    rollout: Rollout,
    parsed: Any,
) -> ScoreVector:
    """All component scores for one rollout. A failed rollout scores 0 on every component that
    applies to its instance, with the error as feedback; a component that raises (a bug) scores
    0 with the exception as feedback (but a user's metric that returns no score stops the run:
    MetricError)."""
    scores = []
    for name, comp in components.items():
        try:
            if rollout.error is not None:
                # ask with an empty answer only to learn whether the component applies
                applies = comp.score(instance, "", None).applicable
                scores.append(ComponentScore(name, 0.0, f"no output: {rollout.error}", applies))
                continue
            cs = comp.score(instance, rollout.output, parsed)
            value = min(1.0, max(0.0, float(cs.score)))
            scores.append(ComponentScore(name, value, cs.feedback, cs.applicable))
        except MetricError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plug-in bug must not end the run
            scores.append(
                ComponentScore(name, 0.0, f"component error: {type(exc).__name__}: {exc}")
            )
    return ScoreVector(tuple(scores))


def weighted_reward(
    vector: ScoreVector | Mapping[str, float], weights: Mapping[str, float]
) -> float:
    """Weighted mean of the applicable components (a mapping holds only applicable ones)."""
    values = vector.applicable() if isinstance(vector, ScoreVector) else vector
    used = {k: w for k, w in weights.items() if w > 0 and k in values}
    total = sum(used.values())
    if total <= 0:
        return 0.0
    return sum(w * values[k] for k, w in used.items()) / total
