"""The archive of (policy, harness, s_val) pairs: every validated best, kept for rollback and for
the report. Rollback returns to the best entry when s_val keeps falling or oscillates.

Each entry also keeps its meta-objective vector (``objectives``: quality, diversity, ...; the
human objective is not stored: it changes as people rate). ``rank`` (set by the driver) orders
entries by meta score; without it, by s_val."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evotrainer.harness.genome import HarnessGenome
from evotrainer.policy.genome import PolicyGenome


@dataclass(frozen=True)
class ArchiveEntry:
    policy: PolicyGenome
    harness: HarnessGenome
    s_val: float
    generation: int
    outer_step: int
    objectives: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy.to_json(),
            "harness": self.harness.to_json(),
            "s_val": self.s_val,
            "generation": self.generation,
            "outer_step": self.outer_step,
            "objectives": dict(self.objectives),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ArchiveEntry:
        return cls(
            PolicyGenome.from_json(d["policy"]),
            HarnessGenome.from_json(d["harness"]),
            float(d["s_val"]),
            int(d["generation"]),
            int(d["outer_step"]),
            {str(k): float(v) for k, v in (d.get("objectives") or {}).items()},
        )


@dataclass
class Archive:
    entries: list[ArchiveEntry] = field(default_factory=list)
    rank: Callable[[ArchiveEntry], float] | None = field(default=None, repr=False, compare=False)

    def add(self, entry: ArchiveEntry) -> None:
        key = (entry.policy.id, entry.harness.id)
        if any((e.policy.id, e.harness.id) == key for e in self.entries):
            return
        self.entries.append(entry)

    def score(self, entry: ArchiveEntry) -> float:
        """The entry's meta score (``rank``), or its s_val when no rank is set."""
        return self.rank(entry) if self.rank is not None else entry.s_val

    def best(self) -> ArchiveEntry | None:
        # earliest wins ties: prefer the entry that has been stable longest
        return max(self.entries, key=self.score, default=None)

    def to_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.entries]

    @classmethod
    def from_json(cls, data: list[dict[str, Any]]) -> Archive:
        return cls([ArchiveEntry.from_json(d) for d in data])
