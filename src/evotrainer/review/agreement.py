"""How often the automatic metric agrees with people.

For every rating that is not a tie, and whose two policies both have minutes on the rated
meeting, a metric *agrees* when it scores the preferred minutes higher, *disagrees* when lower,
and counts half when it scores both the same. ``s_val`` is the per-meeting s_val (the quality
objective); the other keys are the single metrics and the conciseness component. 0.5 is what a
coin would reach; below 0.5 the metric prefers what people reject.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evotrainer.evaluation.validation import combine_s_val
from evotrainer.review.human_model import RowsOf, features, usable
from evotrainer.run.ratings import Rating

SHOWN = ("s_val", "rougeL", "action_item_f1", "decision_recall", "conciseness")


def agreement(
    ratings: Sequence[Rating], rows_of: RowsOf, s_val_weights: Mapping[str, float]
) -> dict[str, dict[str, Any]]:
    """metric -> {"agreement": share or None, "n": decisive ratings it could judge}."""
    tally: dict[str, list[float]] = {}
    for r, left, right in usable(ratings, rows_of):
        if r.outcome == "tie":
            continue
        won, lost = (left, right) if r.outcome == "left" else (right, left)
        fw, fl = features(won), features(lost)
        fw["s_val"], fl["s_val"] = (
            combine_s_val(won, s_val_weights),
            combine_s_val(lost, s_val_weights),
        )
        for k in SHOWN:
            a, b = fw.get(k), fl.get(k)
            if a is None or b is None:
                continue
            verdict = 1.0 if a > b + 1e-9 else 0.0 if a < b - 1e-9 else 0.5
            tally.setdefault(k, []).append(verdict)
    return {
        k: {"agreement": sum(v) / len(v) if v else None, "n": len(v)}
        for k in SHOWN
        if (v := tally.get(k)) is not None
    }
