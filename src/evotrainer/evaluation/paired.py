"""Paired comparison of two policies on the same instances, with a bootstrap interval.

On a small model the per-instance difference between two prompts varies a lot (a standard
deviation of 0.05-0.11 in ROUGE-L from meeting to meeting), far more than the mean difference
one hopes to find; comparing the two on the *same* instances removes the variation the instances
themselves bring, and the interval says how much is left. The interval is the percentile
bootstrap over instances (resampled with replacement, a fixed seed: the same data give the same
interval).

``bootstrap_interval`` is the one bootstrap over instances of the project: the run's
confirmation, ``evotrainer eval``'s comparison to the first policy and the benchmarks' paired
differences (benchmarks/stats.py) all call it, each with its own seed. Where one side is several
runs (a benchmark's seeds), ``runs_difference`` averages them per instance first, and
``runs_and_instances_difference`` resamples the runs as well as the instances.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
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
    return difference_of([a[i] - b[i] for i in shared], resamples, seed)


def difference_of(
    diffs: Sequence[float], resamples: int = RESAMPLES, seed: int = 0, level: float = 0.95
) -> PairedDifference:
    """The paired difference from its per-instance differences, in their order (the bootstrap
    draws positions)."""
    d = np.asarray(diffs, dtype=float)
    mean, lo, hi = bootstrap_interval(d, resamples, seed, level)
    return PairedDifference(mean, lo, hi, len(d))


Scores = Sequence[float | None]  # one score per instance (positional), None where none


def runs_difference(
    runs: Sequence[Scores],
    baseline: Scores,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> PairedDifference:
    """Several runs of one side (``runs[s][i]``: run ``s`` on instance ``i``) against one
    score per instance: per instance the mean over the runs with a score there minus the
    baseline's, the interval from resampling instances. Instances where the baseline or every
    run lacks a score are left out. Each difference is rounded to 12 digits: identical runs
    minus the baseline are exactly 0, not 1e-17. Non-finite differences are left out."""
    diffs: list[float] = []
    for i, base in enumerate(baseline):
        vals = [v for run in runs if (v := run[i]) is not None]
        if base is None or not vals:
            continue
        diff = round(math.fsum(vals) / len(vals) - base, 12)
        if math.isfinite(diff):
            diffs.append(diff)
    return difference_of(diffs, resamples, seed, level)


def runs_and_instances_difference(
    a: Sequence[Scores],
    b: Sequence[Scores],
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> PairedDifference:
    """Like ``runs_difference`` (the same mean), but every resample draws each side's runs with
    replacement, then the instances, and takes the mean over instances of (a's run average -
    b's run average). ``runs_difference`` takes each run's result as given; which result a run
    ends with is random too, and this interval says so (coarse with 2-3 runs a side). ``b`` is
    a list of runs as well (one run: a fixed baseline). Instances where either side has no
    score are left out; NaN without any."""
    ma, mb = _matrix(a), _matrix(b)
    if ma.size == 0 or mb.size == 0 or ma.shape[1] != mb.shape[1]:
        return PairedDifference(float("nan"), float("nan"), float("nan"), 0)
    keep = ~np.isnan(ma).all(axis=0) & ~np.isnan(mb).all(axis=0)
    ma, mb = ma[:, keep], mb[:, keep]
    n = int(ma.shape[1])
    if n == 0:
        return PairedDifference(float("nan"), float("nan"), float("nan"), 0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample whose runs miss an instance
        point = np.round(np.nanmean(ma, axis=0) - np.nanmean(mb, axis=0), 12)
        mean = float(point.mean())
        rng = np.random.default_rng(seed)
        means = np.empty(resamples)
        chunk = 1_000
        for start in range(0, resamples, chunk):
            r = min(chunk, resamples - start)
            sa = rng.integers(0, ma.shape[0], size=(r, ma.shape[0]))
            sb = rng.integers(0, mb.shape[0], size=(r, mb.shape[0]))
            mi = rng.integers(0, n, size=(r, n))
            am = np.nanmean(ma[sa], axis=1)  # (r, n): run-averaged, per instance
            bm = np.nanmean(mb[sb], axis=1)
            d = np.take_along_axis(am, mi, axis=1) - np.take_along_axis(bm, mi, axis=1)
            means[start : start + r] = np.nanmean(d, axis=1)
        means = np.round(means[~np.isnan(means)], 12)  # identical runs: exactly 0
    alpha = (1.0 - level) / 2.0
    lo, hi = (float(x) for x in np.quantile(means, [alpha, 1.0 - alpha]))
    return PairedDifference(mean, lo, hi, n)


def _matrix(runs: Sequence[Scores]) -> np.ndarray:
    """runs x instances, None and non-finite values as NaN."""
    rows = [
        [float("nan") if x is None or not math.isfinite(float(x)) else float(x) for x in run]
        for run in runs
    ]
    if not rows:
        return np.empty((0, 0))
    return np.asarray(rows, dtype=float)
