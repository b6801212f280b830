"""Racing, the one strategy training and validation share: a candidate first meets the first
``first`` instances, its score there is compared *paired* with a reference's on the same
instances, and it meets the rest only when its estimate is within ``margin`` of the bar it has
to reach; otherwise it stops with that estimate.

- Training (evaluation/fitness.py): the reference is the best incumbent that met the whole
  batch, the estimate its full-batch fitness plus the paired difference, the bar the fitness of
  the last survivor (``inner.race_first``, ``inner.race_margin``).
- Validation (evaluation/validation.py): the reference is the best validated policy, the
  estimate the paired difference of s_val to it, the bar the reference itself (0 difference;
  ``validation.race_first``, ``validation.race_margin``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Racing:
    first: int  # instances every candidate meets; 0: no racing
    margin: float  # how far below the bar a candidate may be and still go on

    def applies(self, n: int) -> bool:
        """Whether racing can save anything on ``n`` instances."""
        return 0 < self.first < n

    def head(self, instances: Sequence[T]) -> Sequence[T]:
        """The instances every candidate meets."""
        return instances[: self.first]

    def goes_on(self, estimate: float, bar: float) -> bool:
        """Whether a candidate with ``estimate`` (from the head) meets the rest."""
        return estimate >= bar - self.margin
