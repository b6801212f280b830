"""The ``human`` objective: what people's ratings say about policies nobody has rated yet.

People rate a few pairs; the outer loop has to compare harness variants whose new policies no one
has seen. A Bradley-Terry model over *features* of the minutes bridges the two: a person prefers
minutes x to minutes x' with probability sigmoid(u(x) - u(x')), where

    u(policy, meeting) = w . z(features of its minutes on that meeting) + b[policy]

- the features are the validation metric's numbers for those minutes (ROUGE-1/2/L, action-item
  precision/recall/F1, decision recall, the number of action items for meetings), the reward
  component ``meta.concise_component`` names (meetings: ``conciseness``) and the log word count, standardised over the rated minutes (a metric that does not
  apply to a meeting takes the mean); so w says which measurable qualities people reward;
- b is a per-policy offset for what the features miss (0 for a policy nobody rated).

Both have a N(0, 1/prior) prior (``meta.human_prior``). A policy's ``human`` objective is the
predicted probability that a person prefers its minutes to the best seed's, averaged over the
validation meetings both have minutes for: 0.5 = as good as the best seed.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evotrainer.review.bradley_terry import fit_logistic, sigmoid
from evotrainer.run.ratings import Rating

Row = Mapping[str, Any]
RowsOf = Callable[[str], Mapping[str, Row] | None]  # policy id -> meeting id -> metric row
BOOKKEEPING = {
    "instance_id",
    "length_bucket",
    "truncated",
    "error",
    "output",
    "rewards",
    "reference",
}


def features(row: Row, components: Sequence[str] = ()) -> dict[str, float | None]:
    """The measurable qualities of one policy's answer on one instance: its metrics, the reward
    components named (``meta.concise_component``) and its length."""
    out: dict[str, float | None] = {}
    for k, v in row.items():
        if k in BOOKKEEPING or isinstance(v, bool):
            continue
        if v is None or isinstance(v, int | float):
            out[k] = None if v is None or not math.isfinite(v) else float(v)
    rewards = row.get("rewards") or {}
    for name in components:
        if name in rewards:
            out[name] = float(rewards[name])
    out["log_words"] = math.log1p(len(str(row.get("output") or "").split()))
    return out


@dataclass
class HumanModel:
    names: list[str]
    mean: np.ndarray
    std: np.ndarray
    weights: np.ndarray
    offsets: dict[str, float]
    ratings_used: int
    offset_se: dict[str, float] = field(default_factory=dict)
    components: tuple[str, ...] = ()  # the reward components among the features

    def _z(self, row: Row) -> np.ndarray:
        f = features(row, self.components)
        raw = np.array(
            [f.get(k) if f.get(k) is not None else self.mean[i] for i, k in enumerate(self.names)],
            dtype=float,
        )
        return (raw - self.mean) / self.std

    def utility(self, policy_id: str, row: Row) -> float:
        return float(self._z(row) @ self.weights) + self.offsets.get(policy_id, 0.0)

    def preference(
        self,
        policy_id: str,
        rows: Mapping[str, Row],
        baseline_id: str,
        baseline_rows: Mapping[str, Row],
    ) -> float | None:
        """Predicted P(a person prefers ``policy_id`` to the baseline), averaged over the
        meetings both have rows for; None when they share none."""
        shared = sorted(set(rows) & set(baseline_rows))
        if not shared:
            return None
        if policy_id == baseline_id:
            return 0.5
        d = [
            self.utility(policy_id, rows[m]) - self.utility(baseline_id, baseline_rows[m])
            for m in shared
        ]
        return float(np.mean(sigmoid(np.array(d))))

    def feature_weights(self) -> dict[str, float]:
        """Weight per standardised feature: what people's choices reward (+) or punish (-)."""
        return {k: float(w) for k, w in zip(self.names, self.weights, strict=True)}


def usable(ratings: Sequence[Rating], rows_of: RowsOf) -> list[tuple[Rating, Row, Row]]:
    """Ratings whose two policies both have minutes (a metric row) on the rated meeting."""
    out = []
    for r in ratings:
        left, right = rows_of(r.left) or {}, rows_of(r.right) or {}
        if r.meeting_id in left and r.meeting_id in right:
            out.append((r, left[r.meeting_id], right[r.meeting_id]))
    return out


def fit_human_model(
    ratings: Sequence[Rating],
    rows_of: RowsOf,
    prior: float = 1.0,
    components: Sequence[str] = (),
) -> HumanModel | None:
    """Fit on the usable ratings (``components``: reward components taken as features, the
    run's ``meta.concise_component``); None when there are none."""
    data = usable(ratings, rows_of)
    if not data:
        return None
    feats = [features(row, components) for _, a, b in data for row in (a, b)]
    names = sorted({k for f in feats for k in f})
    table = np.array(
        [[np.nan if f.get(k) is None else f[k] for k in names] for f in feats], dtype=float
    )
    with warnings.catch_warnings():  # a metric that applies to none of the rated meetings
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nan_to_num(np.nanmean(table, axis=0))
    filled = np.where(np.isnan(table), mean, table)
    std = filled.std(axis=0)
    keep = std > 1e-9  # a feature that never varies among the rated minutes says nothing
    names = [k for k, ok in zip(names, keep, strict=True) if ok]
    mean, std, filled = mean[keep], std[keep], filled[:, keep]
    z = (filled - mean) / std
    policies = sorted({p for r, _, _ in data for p in (r.left, r.right)})
    col = {p: len(names) + i for i, p in enumerate(policies)}
    x = np.zeros((len(data), len(names) + len(policies)))
    y = np.zeros(len(data))
    for k, (r, _, _) in enumerate(data):
        x[k, : len(names)] = z[2 * k] - z[2 * k + 1]
        x[k, col[r.left]] += 1.0
        x[k, col[r.right]] -= 1.0
        y[k] = r.left_score
    beta, cov = fit_logistic(x, y, prior)
    return HumanModel(
        names=names,
        mean=mean,
        std=std,
        weights=beta[: len(names)],
        offsets={p: float(beta[c]) for p, c in col.items()},
        ratings_used=len(data),
        offset_se={p: float(np.sqrt(cov[c, c])) for p, c in col.items()},
        components=tuple(components),
    )
