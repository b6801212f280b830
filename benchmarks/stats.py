"""Paired comparisons over meetings: the mean of per-meeting differences with a 95% bootstrap
confidence interval (percentile method, meetings resampled with replacement).

Two policies scored on the same meetings are compared meeting by meeting: the spread of the
scores *between* meetings (some meetings are easy for every prompt) cancels out, and what is
left is the spread of the differences, which is what decides whether an improvement is real.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

N_RESAMPLES = 10_000
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
    mean = float(d.mean())
    if np.ptp(d) == 0.0:  # degenerate: every resample has the same mean
        lo = hi = float(d[0])
        mean = float(d[0])
    else:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, d.size, size=(n_resamples, d.size))
        means = d[idx].mean(axis=1)
        alpha = (1.0 - level) / 2.0
        lo, hi = (float(x) for x in np.quantile(means, [alpha, 1.0 - alpha]))
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
