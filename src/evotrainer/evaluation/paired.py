"""Paired comparison of two policies on the same instances, with a bootstrap interval.

On a small model the per-instance difference between two prompts varies a lot (a standard
deviation of 0.05-0.11 in ROUGE-L from meeting to meeting), far more than the mean difference
one hopes to find; comparing the two on the *same* instances removes the variation the instances
themselves bring, and the interval says how much is left. The interval is the percentile
bootstrap over instances (resampled with replacement, a fixed seed: the same data give the same
interval).

``bootstrap_interval`` is the one bootstrap of the project: the run's confirmation, ``evotrainer
eval``'s comparison to the first policy and the benchmarks' paired differences
(benchmarks/stats.py) all call it, each with its own seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

RESAMPLES = 10_000


@dataclass(frozen=True)
class PairedDifference:
    """Mean of (a - b) over shared instances and its 95% bootstrap interval."""

    mean: float
    lo: float
    hi: float
    n: int

    @property
    def above_zero(self) -> bool:
        return self.n > 1 and self.lo > 0

    def to_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "ci95": [self.lo, self.hi], "n": self.n}

    def __str__(self) -> str:
        return f"{difference_text(self.mean, self.lo, self.hi, self.n)} over {self.n}"


def difference_text(mean: float, lo: float, hi: float, n: int, digits: int = 3) -> str:
    """A paired difference and its interval as printed; one instance has no interval to give
    (the bootstrap of a single value is that value: a zero-width "95% CI" would claim a
    certainty one meeting cannot)."""
    if n < 2:
        return f"{mean:+.{digits}f} (no interval from {n} instance{'s' if n != 1 else ''})"
    return f"{mean:+.{digits}f} [95% CI {lo:+.{digits}f}, {hi:+.{digits}f}]"


def bootstrap_interval(
    values: np.ndarray, resamples: int = RESAMPLES, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """The mean of ``values`` and the ``level`` percentile-bootstrap interval of it (values
    resampled with replacement, ``resamples`` times, from ``seed``). NaN without values; when
    every value is the same, the mean and both ends are that value exactly."""
    n = len(values)
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    if np.ptp(values) == 0.0:  # degenerate: every resample has the same mean
        v = float(values[0])
        return v, v, v
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return float(values.mean()), float(lo), float(hi)


def bootstrap_mean(
    values: np.ndarray, resamples: int = RESAMPLES, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean of ``values`` (``bootstrap_interval``)."""
    _, lo, hi = bootstrap_interval(values, resamples, seed, level)
    return lo, hi


def paired_difference(
    a: Mapping[str, float], b: Mapping[str, float], resamples: int = RESAMPLES, seed: int = 0
) -> PairedDifference:
    """a - b on the instances both have a score for (instance id -> score)."""
    shared = sorted(set(a) & set(b))
    d = np.array([a[i] - b[i] for i in shared], dtype=float)
    mean, lo, hi = bootstrap_interval(d, resamples, seed)
    return PairedDifference(mean, lo, hi, len(d))
