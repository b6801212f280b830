"""HarnessGenome: what the outer loop evolves. The task generator's difficulty L (for real
instances: the length preference) and mix of task kinds, the share of real training instances
in a batch, and the reward's weight per component (0 = switched off). Hard bounds
(HarnessBounds) are enforced on construction of every variant, so no variant can leave them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HarnessBounds:
    difficulty_min: float = 0.0
    difficulty_max: float = 1.0
    weight_max: float = 1.0  # cap on one normalised weight
    real_share_min: float = 0.0
    real_share_max: float = 1.0

    def clamp_difficulty(self, value: float) -> float:
        return min(self.difficulty_max, max(self.difficulty_min, value))

    def clamp_real_share(self, value: float) -> float:
        return min(self.real_share_max, max(self.real_share_min, value))


def normalise(weights: Mapping[str, float], weight_max: float = 1.0) -> dict[str, float]:
    """Non-negative weights summing to 1, no single weight above ``weight_max`` (when feasible)."""
    w = {k: max(0.0, float(v)) for k, v in weights.items()}
    total = sum(w.values())
    if total <= 0:
        raise ValueError("at least one reward weight must be > 0")
    w = {k: v / total for k, v in w.items()}
    active = [k for k, v in w.items() if v > 0]
    if weight_max < 1.0 and len(active) * weight_max >= 1.0:
        for _ in range(20):  # water-filling: cap, then spread the excess over the rest
            over = {k: v for k, v in w.items() if v > weight_max + 1e-12}
            if not over:
                break
            excess = sum(v - weight_max for v in over.values())
            for k in over:
                w[k] = weight_max
            free = [k for k in active if w[k] < weight_max - 1e-12]
            if not free:
                break
            share = sum(w[k] for k in free)
            for k in free:
                w[k] += excess * (w[k] / share if share > 0 else 1 / len(free))
    return {k: round(v, 6) for k, v in w.items()}


@dataclass(frozen=True)
class HarnessGenome:
    difficulty: float
    weights: Mapping[str, float]
    task_mix: Mapping[str, float] | None = None
    real_share: float = 0.0  # share of real training instances in a batch
    operator: str = "initial"  # how this variant was made
    parent: str | None = None
    note: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        # a zero weight means "off": drop it, so equal harnesses have equal ids
        kept = {k: v for k, v in self.weights.items() if v > 0} or dict(self.weights)
        object.__setattr__(self, "weights", dict(sorted(kept.items())))
        if self.task_mix is not None:
            object.__setattr__(self, "task_mix", dict(sorted(self.task_mix.items())))

    @property
    def id(self) -> str:
        canon = json.dumps(
            {"L": round(self.difficulty, 4), "w": self.weights, "mix": self.task_mix}
            | ({"real": round(self.real_share, 4)} if self.real_share else {}),
            sort_keys=True,
        )
        return "h" + hashlib.sha1(canon.encode()).hexdigest()[:8]

    def active(self) -> list[str]:
        return [k for k, v in self.weights.items() if v > 0]

    def bounded(self, bounds: HarnessBounds) -> HarnessGenome:
        """The same genome pushed inside the hard bounds (weights renormalised)."""
        return HarnessGenome(
            difficulty=round(bounds.clamp_difficulty(self.difficulty), 4),
            weights=normalise(self.weights, bounds.weight_max),
            task_mix=self.task_mix,
            real_share=round(bounds.clamp_real_share(self.real_share), 4),
            operator=self.operator,
            parent=self.parent,
            note=self.note,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "difficulty": self.difficulty,
            "weights": dict(self.weights),
            "task_mix": dict(self.task_mix) if self.task_mix else None,
            "real_share": self.real_share,
            "operator": self.operator,
            "parent": self.parent,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> HarnessGenome:
        return cls(
            difficulty=float(d["difficulty"]),
            weights=dict(d["weights"]),
            task_mix=dict(d["task_mix"]) if d.get("task_mix") else None,
            real_share=float(d.get("real_share", 0.0)),
            operator=d.get("operator", "initial"),
            parent=d.get("parent"),
            note=d.get("note", ""),
        )
