"""Spearman's rank correlation, the one definition the surrogate (its screening), the rank
judge (``outer.trials: rank``) and the learned reward model (its held-out calibration) use."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def ranks(values: Sequence[float]) -> np.ndarray:
    """The ranks of ``values`` from 0; ties share their average rank."""
    a = np.asarray(values, dtype=float)
    order = a.argsort(kind="mergesort")
    r = np.empty(len(a))
    r[order] = np.arange(len(a), dtype=float)
    for value in np.unique(a):  # ties share their average rank
        tie = a == value
        r[tie] = r[tie].mean()
    return r


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None when undefined: fewer than
    3 pairs, sequences of different lengths, or one side constant."""
    if len(x) < 3 or len(x) != len(y):
        return None
    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])
