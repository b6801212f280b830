"""How often the automatic metric agrees with people.

For every rating that is not a tie, and whose two policies both have minutes on the rated
meeting, a metric *agrees* when it scores the preferred minutes higher, *disagrees* when lower,
and counts half when it scores both the same. ``s_val`` is the per-meeting s_val (the quality
objective), then the metrics s_val weighs and the reward components named
(``meta.concise_component``), then every other measure of the answers (the features of
review/human_model.py). 0.5 is what a coin would reach; below 0.5 the metric prefers what
people reject.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evotrainer.review.human_model import RowsOf, features, usable
from evotrainer.run.ratings import Rating
from evotrainer.tasks.base import combine_s_val


def agreement(
    ratings: Sequence[Rating],
    rows_of: RowsOf,
    s_val_weights: Mapping[str, float],
    components: Sequence[str] = (),
) -> dict[str, dict[str, Any]]:
    """metric -> {"agreement": share or None, "n": decisive ratings it could judge}."""
    first = ["s_val", *(k for k, w in s_val_weights.items() if w > 0), *components]
    tally: dict[str, list[float]] = {}
    for r, left, right in usable(ratings, rows_of):
        if r.outcome == "tie":
            continue
        won, lost = (left, right) if r.outcome == "left" else (right, left)
        fw, fl = features(won, components), features(lost, components)
        fw["s_val"], fl["s_val"] = (
            combine_s_val(won, s_val_weights),
            combine_s_val(lost, s_val_weights),
        )
        for k in {*first, *fw}:
            a, b = fw.get(k), fl.get(k)
            if a is None or b is None:
                continue
            verdict = 1.0 if a > b + 1e-9 else 0.0 if a < b - 1e-9 else 0.5
            tally.setdefault(k, []).append(verdict)
    shown = [*first, *sorted(k for k in tally if k not in first)]  # s_val and its parts first
    return {
        k: {"agreement": sum(v) / len(v) if v else None, "n": len(v)}
        for k in shown
        if (v := tally.get(k)) is not None
    }
