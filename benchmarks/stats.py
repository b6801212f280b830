"""Paired comparisons over meetings: the mean of per-meeting differences with a 95% bootstrap
confidence interval (percentile method, meetings resampled with replacement).

Two policies scored on the same meetings are compared meeting by meeting: the spread of the
scores *between* meetings (some meetings are easy for every prompt) cancels out, and what is
left is the spread of the differences, which is what decides whether an improvement is real.
The interval is the engine's (``evotrainer.evaluation.paired.bootstrap_interval``), from this
file's fixed seed; what is added here is the benchmarks' view (several runs per method, the
seeds resampled too).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from evotrainer.evaluation.paired import RESAMPLES, bootstrap_interval

N_RESAMPLES = RESAMPLES
SEED = 20_251_130  # fixed: the same intervals on every rerun
LEVEL = 0.95


def paired_bootstrap(
    diffs: Sequence[float],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, Any]:
    """Mean of ``diffs`` (one value per meeting) and its ``level`` percentile bootstrap interval.

    ``{"mean", "lo", "hi", "n", "level", "resamples"}``; ``mean``/``lo``/``hi`` are None without
    data. When every difference is the same (e.g. a method that returned seed_best in every
    seed: all zeros) the interval is that value exactly.
    """
    d = np.asarray([float(x) for x in diffs if x is not None and math.isfinite(float(x))])
    out: dict[str, Any] = {
        "mean": None,
        "lo": None,
        "hi": None,
        "n": int(d.size),
        "level": level,
        "resamples": n_resamples,
    }
    if d.size == 0:
        return out
    mean, lo, hi = bootstrap_interval(d, n_resamples, seed, level)
    out.update(mean=mean, lo=lo, hi=hi)
    return out


def paired_difference(
    method: Sequence[Sequence[float | None]],
    baseline: Sequence[float | None],
    **kw: Any,
) -> dict[str, Any]:
    """A method with one or several runs (seeds) against a baseline, on the same meetings.

    ``method[s][m]`` is run ``s``'s score on meeting ``m``; ``baseline[m]`` the baseline's. Per
    meeting the method's score is first averaged over its runs (those with a score there), then
    the baseline's is subtracted; the interval comes from resampling meetings. Meetings where
    the baseline or every run lacks a score are left out.
    """
    diffs: list[float] = []
    for m, base in enumerate(baseline):
        vals = [run[m] for run in method if run[m] is not None]
        if base is None or not vals:
            continue
        # rounded: three identical runs minus the baseline are exactly 0, not 1e-17
        diffs.append(round(math.fsum(vals) / len(vals) - base, 12))
    return paired_bootstrap(diffs, **kw)


def significant(ci: dict[str, Any]) -> str:
    """'+' when the interval lies above 0, '-' when below, '' when it contains 0 or is empty."""
    if ci.get("lo") is None:
        return ""
    if ci["lo"] > 0:
        return "+"
    if ci["hi"] < 0:
        return "-"
    return ""


def fmt_ci(ci: dict[str, Any] | None, digits: int = 3) -> str:
    """``+0.012 [-0.004, +0.027]`` (a trailing * when the interval excludes 0)."""
    if not ci or ci.get("mean") is None:
        return "n/a"
    star = "*" if significant(ci) else ""
    return f"{ci['mean']:+.{digits}f} [{ci['lo']:+.{digits}f}, {ci['hi']:+.{digits}f}]{star}"


def seeds_and_meetings_difference(
    method: Sequence[Sequence[float | None]],
    baseline: Sequence[Sequence[float | None]],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, Any]:
    """Like :func:`paired_difference`, but the interval also resamples the runs (seeds).

    ``paired_difference`` takes each seed's returned policy as given: its interval says how sure
    we are about *those policies* on new meetings. Which policy a run returns is itself random
    (a method that returns a good policy in one seed and the seed prompt in another), so here
    every resample draws each side's seeds with replacement, then the meetings, and takes the
    mean over meetings of (method's seed-average - baseline's seed-average). ``baseline`` is a
    list of runs too (one run for seed_best; another method's seeds for method - method). With
    2-3 seeds per side the interval is coarse; it is the honest one to quote for "method X beats
    method Y", the meeting-only one for "this returned policy beats seed_best". Meetings where
    either side has no score are left out; the mean equals ``paired_difference``'s.
    """
    a = _matrix(method)
    b = _matrix(baseline)
    out: dict[str, Any] = {
        "mean": None,
        "lo": None,
        "hi": None,
        "n": 0,
        "runs": [int(a.shape[0]), int(b.shape[0])],
        "level": level,
        "resamples": n_resamples,
        "resampled": "seeds and meetings",
    }
    if a.size == 0 or b.size == 0 or a.shape[1] != b.shape[1]:
        return out
    keep = ~np.isnan(a).all(axis=0) & ~np.isnan(b).all(axis=0)
    a, b = a[:, keep], b[:, keep]
    n = int(a.shape[1])
    out["n"] = n
    if n == 0:
        return out
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample whose seeds miss a meeting
        point = np.round(np.nanmean(a, axis=0) - np.nanmean(b, axis=0), 12)
        mean = float(point.mean())
        rng = np.random.default_rng(seed)
        stats_ = np.empty(n_resamples)
        chunk = 1_000
        for start in range(0, n_resamples, chunk):
            r = min(chunk, n_resamples - start)
            sa = rng.integers(0, a.shape[0], size=(r, a.shape[0]))
            sb = rng.integers(0, b.shape[0], size=(r, b.shape[0]))
            mi = rng.integers(0, n, size=(r, n))
            am = np.nanmean(a[sa], axis=1)  # (r, n): seed-averaged, per meeting
            bm = np.nanmean(b[sb], axis=1)
            d = np.take_along_axis(am, mi, axis=1) - np.take_along_axis(bm, mi, axis=1)
            stats_[start : start + r] = np.nanmean(d, axis=1)
        stats_ = np.round(stats_[~np.isnan(stats_)], 12)  # identical runs: exactly 0
    alpha = (1.0 - level) / 2.0
    lo, hi = (float(x) for x in np.quantile(stats_, [alpha, 1.0 - alpha]))
    out.update(mean=mean, lo=lo, hi=hi)
    return out


def _matrix(runs: Sequence[Sequence[float | None]]) -> np.ndarray:
    """runs x meetings, None and non-finite values as NaN."""
    rows = [
        [float("nan") if x is None or not math.isfinite(float(x)) else float(x) for x in run]
        for run in runs
    ]
    if not rows:
        return np.empty((0, 0))
    return np.asarray(rows, dtype=float)
