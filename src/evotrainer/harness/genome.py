"""HarnessGenome: what the outer loop evolves. The reward's weight per component (0 = switched
off), the mix of task kinds, and the harness's numeric genes by name: the task generator's
difficulty L (for real instances: the length preference), the share of real training instances
in a batch, and every gene a task or feature declares (harness/genes.py: the gene table). Hard
bounds (HarnessBounds) are enforced on every variant, so no variant can leave them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evotrainer.types import GeneSpec

BUILT_IN = ("difficulty", "real_share")  # the engine's own genes (top-level in JSON)
_KEEP = object()  # evolve(): the mix as it is


@dataclass(frozen=True)
class HarnessBounds:
    """The hard bounds no harness variant may leave: the cap on one normalised reward weight and
    the gene table (each gene's bounds, its step, which trial measures it; harness/genes.py
    builds it from the config, the task's and the features' declarations)."""

    weight_max: float = 1.0  # cap on one normalised weight
    genes: Mapping[str, GeneSpec] = field(default_factory=dict)

    def clamp(self, name: str, value: float) -> float:
        """``value`` inside the bounds of gene ``name`` (unchanged for an undeclared gene)."""
        spec = self.genes.get(name)
        return spec.clamp(value) if spec is not None else float(value)


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
    """One harness: the reward's weight per component (0 = off), the mix of task kinds, and its
    numeric genes by name (``genes``: difficulty L, the real share and whatever a task or
    feature declares). ``evolve`` makes a variant: every gene it does not name is kept, so a
    gene added to the table survives every step of the outer loop without being named there."""

    weights: Mapping[str, float]
    genes: Mapping[str, float] = field(default_factory=dict)
    task_mix: Mapping[str, float] | None = None
    operator: str = "initial"  # how this variant was made
    parent: str | None = None
    note: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        # a zero weight means "off": drop it, so equal harnesses have equal ids
        kept = {k: v for k, v in self.weights.items() if v > 0} or dict(self.weights)
        object.__setattr__(self, "weights", dict(sorted(kept.items())))
        object.__setattr__(self, "genes", {k: float(v) for k, v in sorted(self.genes.items())})
        if self.task_mix is not None:
            object.__setattr__(self, "task_mix", dict(sorted(self.task_mix.items())))

    @property
    def difficulty(self) -> float:
        """The task generator's difficulty L (for real instances: the length preference)."""
        return self.genes.get("difficulty", 0.0)

    @property
    def real_share(self) -> float:
        """The share of real training instances in a batch."""
        return self.genes.get("real_share", 0.0)

    @property
    def id(self) -> str:
        others = {k: round(v, 4) for k, v in self.genes.items() if k not in BUILT_IN}
        canon = json.dumps(
            {"L": round(self.difficulty, 4), "w": self.weights, "mix": self.task_mix}
            | ({"real": round(self.real_share, 4)} if self.real_share else {})
            | ({"genes": others} if others else {}),
            sort_keys=True,
        )
        return "h" + hashlib.sha1(canon.encode()).hexdigest()[:8]

    def active(self) -> list[str]:
        return [k for k, v in self.weights.items() if v > 0]

    def evolve(
        self,
        operator: str,
        parent: str | None = None,
        note: str = "",
        weights: Mapping[str, float] | None = None,
        task_mix: Mapping[str, float] | None | object = _KEEP,
        genes: Mapping[str, float] | None = None,
    ) -> HarnessGenome:
        """A variant of this harness: the weights, mix and genes given (by name), everything
        else kept."""
        return HarnessGenome(
            weights=dict(self.weights if weights is None else weights),
            genes={**self.genes, **(genes or {})},
            task_mix=self.task_mix if task_mix is _KEEP else task_mix,  # type: ignore[arg-type]
            operator=operator,
            parent=parent,
            note=note,
        )

    def bounded(self, bounds: HarnessBounds) -> HarnessGenome:
        """The same genome pushed inside the hard bounds (weights renormalised)."""
        return HarnessGenome(
            weights=normalise(self.weights, bounds.weight_max),
            genes={k: round(bounds.clamp(k, v), 4) for k, v in self.genes.items()},
            task_mix=self.task_mix,
            operator=self.operator,
            parent=self.parent,
            note=self.note,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "difficulty": self.difficulty,
            "weights": dict(self.weights),
            "task_mix": dict(self.task_mix) if self.task_mix else None,
            "real_share": self.real_share,
            "operator": self.operator,
            "parent": self.parent,
            "note": self.note,
        }
        others = {k: v for k, v in self.genes.items() if k not in BUILT_IN}
        if others:
            out["genes"] = others
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> HarnessGenome:
        genes = {k: float(v) for k, v in (d.get("genes") or {}).items()}
        genes["difficulty"] = float(d["difficulty"])
        genes["real_share"] = float(d.get("real_share", 0.0))
        return cls(
            weights=dict(d["weights"]),
            genes=genes,
            task_mix=dict(d["task_mix"]) if d.get("task_mix") else None,
            operator=d.get("operator", "initial"),
            parent=d.get("parent"),
            note=d.get("note", ""),
        )
