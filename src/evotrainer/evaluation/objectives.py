"""The meta-objective as a vector, and the choice of a harness variant on it.

s_val alone (a weighted mean of ROUGE and action-item F1) is one view of "good minutes". The
meta-objective is a vector of objectives, each in [0, 1], higher is better:

- ``quality``: s_val on the selection part of the validation data (``outer.s_val_weights``);
- ``robustness``: the share of hostile meetings handled correctly (``defences.robustness_probe``;
  absent when the probe is off);
- ``diversity``: how different the population's outputs are on the same training meetings
  (mean pairwise word-set distance, averaged over the batch): a harness whose population has
  collapsed onto one answer scores low;
- ``conciseness``: the reward component ``meta.concise_component`` names (the task's; the
  meeting task's ``conciseness``: length in a target band, no copying, no loops) averaged over
  the validation answers;
- ``readability``: the task metric's ``readability`` aggregate (the meeting task: minutes free
  of repetition loops, policy/repetition.py; absent for a task whose metric has none);
- ``human``: the predicted probability that a person prefers this policy's minutes to the best
  seed's on a validation meeting, from the ratings given in ``evotrainer review``
  (review/human_model.py; absent until ``meta.human_min_ratings`` ratings exist).

The **meta score** is the weighted mean of the measured objectives (``meta.objectives``; weights of
objectives that are not measured are renormalised away). With ``meta.selection: weighted`` the
outer loop keeps the variant with the highest meta score; with ``pareto`` it keeps a member of
the Pareto front (evaluation/pareto.py). The archive ranks its entries by meta score (what the
run returns and rolls back to); the highest weighted mean with positive weights always lies on
the front.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evotrainer.config import CONCISENESS, OBJECTIVES, MetaConfig
from evotrainer.errors import ConfigError
from evotrainer.evaluation.diversity import mean_pairwise_distance
from evotrainer.evaluation.pareto import pareto_choice, require_pymoo
from evotrainer.types import ValidationResult

Vector = dict[str, float]
HumanScore = Callable[[str, Sequence[Mapping[str, Any]]], float | None]


def output_diversity(outputs_by_instance: Sequence[Sequence[str]]) -> float | None:
    """Mean over instances of the mean pairwise distance (1 - Jaccard of word sets) between the
    population's outputs on that instance; None without an instance with two outputs."""
    per = [mean_pairwise_distance(outs) for outs in outputs_by_instance if len(outs) >= 2]
    return sum(per) / len(per) if per else None


def conciseness(result: ValidationResult, component: str | None) -> float | None:
    """Mean of the reward component ``component`` over the validation rows (None when there is
    none, or no row has it). A failed answer counts 0."""
    if component is None:
        return None
    vals = []
    for row in result.per_instance:
        rewards = row.get("rewards") or {}
        if component in rewards:
            vals.append(0.0 if row.get("error") else float(rewards[component]))
    return sum(vals) / len(vals) if vals else None


class MetaObjective:
    """Builds vectors, scalarises them with ``meta.objectives`` and picks a harness variant."""

    def __init__(self, cfg: MetaConfig) -> None:
        self.cfg = cfg
        self.weights = {k: float(cfg.objectives.get(k, 0.0)) for k in OBJECTIVES}
        if cfg.selection == "pareto":
            require_pymoo()

    def vector(
        self,
        result: ValidationResult,
        diversity: float | None = None,
        human: float | None = None,
    ) -> Vector:
        """The measured objectives of one validated policy (unmeasured ones are left out)."""
        out: dict[str, float | None] = {
            "quality": result.s_val,
            "robustness": _float(result.aggregates.get("robustness")),
            "diversity": diversity,
            CONCISENESS: conciseness(result, self.cfg.concise_component),
            "readability": _float(result.aggregates.get("readability")),
            "human": human,
        }
        return {k: float(v) for k, v in out.items() if v is not None}

    def score(self, vector: Mapping[str, float]) -> float:
        """Weighted mean of the measured objectives (quality alone if no weighted one is)."""
        present = {k: w for k, w in self.weights.items() if w > 0 and k in vector}
        total = sum(present.values())
        if total <= 0:
            return float(vector.get("quality", 0.0))
        return sum(w * vector[k] for k, w in present.items()) / total

    def axes(self, vectors: Sequence[Mapping[str, float]]) -> list[str]:
        """Objectives with weight > 0 measured for every vector (the Pareto axes)."""
        return [k for k in OBJECTIVES if self.weights[k] > 0 and all(k in v for v in vectors)] or [
            "quality"
        ]

    def choose(self, vectors: Sequence[Mapping[str, float]]) -> tuple[int, str, list[int]]:
        """(index of the chosen variant, why, indices on the Pareto front or [] when weighted)."""
        if not vectors:
            raise ConfigError("no harness variant to choose from")
        scores = [self.score(v) for v in vectors]
        if self.cfg.selection == "weighted":
            idx = max(range(len(scores)), key=lambda i: (scores[i], -i))  # ties: earliest
            return idx, f"highest meta score {scores[idx]:.4f}", []

        axes = self.axes(vectors)
        rows = [[v[k] for k in axes] for v in vectors]
        idx, front, why = pareto_choice(rows, scores)
        return idx, f"Pareto front over {', '.join(axes)}: {why}", front


def _float(x: Any) -> float | None:
    try:
        return None if x is None else float(x)
    except (TypeError, ValueError):
        return None
