"""The benchmarks' view of a paired comparison over meetings: the library's statistics
(``evotrainer.evaluation.paired``: ``runs_difference``, ``runs_and_instances_difference``, the
one bootstrap ``bootstrap_interval``) from this file's fixed seed, as the plain records
summary.json stores, and how the tables print them.

Two policies scored on the same meetings are compared meeting by meeting: the spread of the
scores *between* meetings (some meetings are easy for every prompt) cancels out, and what is
left is the spread of the differences, which is what decides whether an improvement is real.
A method has several runs (seeds): ``paired_difference`` averages them per meeting first and
takes each run's returned policy as given (its interval says how sure we are about *those
policies* on new meetings: quote it for "this returned policy beats seed_best");
``seeds_and_meetings_difference`` resamples the seeds too (which policy a run returns is random
as well: quote it for "method X beats method Y").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from evotrainer.evaluation.paired import (
    RESAMPLES,
    PairedDifference,
    difference_of,
    runs_and_instances_difference,
    runs_difference,
)

N_RESAMPLES = RESAMPLES
SEED = 20_251_130  # fixed: the same intervals on every rerun
LEVEL = 0.95


def _record(d: PairedDifference, n_resamples: int, level: float) -> dict[str, Any]:
    """``{"mean", "lo", "hi", "n", "level", "resamples"}``; mean, lo, hi None without data."""
    empty = d.n == 0
    return {
        "mean": None if empty else d.mean,
        "lo": None if empty else d.lo,
        "hi": None if empty else d.hi,
        "n": d.n,
        "level": level,
        "resamples": n_resamples,
    }


def paired_bootstrap(
    diffs: Sequence[float | None],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, Any]:
    """Mean of ``diffs`` (one per meeting; None and non-finite ones left out) and its ``level``
    percentile bootstrap interval. When every difference is the same (a method that returned
    seed_best in every seed: all zeros) the interval is that value exactly."""
    d = [float(x) for x in diffs if x is not None and math.isfinite(float(x))]
    return _record(difference_of(d, n_resamples, seed, level), n_resamples, level)


def paired_difference(
    method: Sequence[Sequence[float | None]],
    baseline: Sequence[float | None],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, Any]:
    """A method with one or several runs (seeds) against a baseline on the same meetings
    (``method[s][m]``: run ``s`` on meeting ``m``): ``runs_difference``, meetings resampled."""
    d = runs_difference(method, baseline, n_resamples, seed, level)
    return _record(d, n_resamples, level)


def seeds_and_meetings_difference(
    method: Sequence[Sequence[float | None]],
    baseline: Sequence[Sequence[float | None]],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, Any]:
    """Like :func:`paired_difference` (the same mean), the seeds of each side resampled too
    (``runs_and_instances_difference``); ``baseline`` is a list of runs (one for seed_best)."""
    d = runs_and_instances_difference(method, baseline, n_resamples, seed, level)
    return {
        **_record(d, n_resamples, level),
        "runs": [len(method), len(baseline)],
        "resampled": "seeds and meetings",
    }


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
