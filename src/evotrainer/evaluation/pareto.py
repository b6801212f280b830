"""Pareto selection on meta-objective vectors, with pymoo (an optional dependency: ``pip install
'evotrainer[moo]'``, imported only when ``meta.selection: pareto`` or a front is drawn).

The rule (``pareto_choice``), for vectors where every objective is in [0, 1] and higher is
better:

1. non-dominated sorting (pymoo's ``NonDominatedSorting``) keeps the first front: the variants
   no other variant beats on every objective at once;
2. one member left: it is chosen;
3. otherwise the member with the largest **exclusive hypervolume contribution** wins (pymoo's
   ``HV``: the volume of objective space that only this member dominates, measured from the
   reference point ``REFERENCE`` = just below 0 on every axis, the worst possible value), i.e.
   the member whose trade-off the others cover least;
4. ties (e.g. two identical vectors): the higher meta score, then the earlier variant (the
   incumbent comes first, so a change must earn its place).

Objectives are not rescaled between variants: every one is already in [0, 1], and rescaling by
the variants' range would turn a noise-sized difference into a full axis.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evotrainer.errors import ConfigError

REFERENCE = -0.01  # every objective's reference value (maximisation): just below the worst, 0
PYMOO_HINT = "pip install 'evotrainer[moo]' (pymoo)"


def require_pymoo() -> None:
    try:
        # lazy: optional dependency (extra moo)
        import pymoo  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"meta.selection: pareto needs pymoo, which is not installed: {PYMOO_HINT}"
        ) from None


def non_dominated(points: Sequence[Sequence[float]]) -> list[int]:
    """Indices of the first (non-dominated) front of ``points`` (maximised), ascending."""
    if not points:
        return []
    require_pymoo()
    # lazy: optional dependency (extra moo)
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    f = -np.asarray(points, dtype=float)
    front = NonDominatedSorting().do(f, only_non_dominated_front=True)
    return sorted(int(i) for i in front)


def hypervolume(points: Sequence[Sequence[float]]) -> float:
    """Hypervolume dominated by ``points`` (maximised) above the reference point."""
    if not points:
        return 0.0
    require_pymoo()
    # lazy: optional dependency (extra moo)
    from pymoo.indicators.hv import HV

    f = -np.asarray(points, dtype=float)
    ref = np.full(f.shape[1], -REFERENCE)
    return float(HV(ref_point=ref)(f))


def contributions(points: Sequence[Sequence[float]]) -> list[float]:
    """Each point's exclusive hypervolume contribution: HV(all) - HV(all but this one)."""
    total = hypervolume(points)
    return [
        total - hypervolume([p for j, p in enumerate(points) if j != i]) for i in range(len(points))
    ]


def pareto_choice(
    points: Sequence[Sequence[float]], scores: Sequence[float]
) -> tuple[int, list[int], str]:
    """(chosen index, the first front, why) by the rule in the module docstring."""
    front = non_dominated(points)
    if len(front) == 1:
        return front[0], front, "the only non-dominated variant"
    contrib = contributions([points[i] for i in front])
    ranked = sorted(
        range(len(front)), key=lambda k: (-round(contrib[k], 12), -scores[front[k]], front[k])
    )
    best = front[ranked[0]]
    tie = len(ranked) > 1 and round(contrib[ranked[0]], 12) == round(contrib[ranked[1]], 12)
    why = (
        f"{len(front)} variants on the front; largest hypervolume contribution "
        f"{contrib[ranked[0]]:.4g}" + (" (tied: higher meta score, then earlier)" if tie else "")
    )
    return best, front, why
