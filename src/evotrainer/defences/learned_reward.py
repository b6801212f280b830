"""Learned reward model: predicts the terminal (validation) score from a rollout's reward
components and cheap output features.

SPEC, "What goes wrong": a reward model trained to *predict* the terminal score rather than the
hand-made proxy. Every time the engine validates a policy it knows, per validation meeting, the
component vector of the output, the output itself and the real per-meeting score
(``row_target``); each such triple is a training pair (``LearnedRewardModel.add``). ``fit``
learns which components (and which output shapes) go with real quality, so a component the
policy games (it rises while the validation score does not) loses its predictive weight, and
``LearnedReward`` (component ``learned``) feeds the prediction back into the training reward.

Features: the component scores in sorted name order (the names seen in the pairs at fit time;
a missing component counts 0; ``learned`` and ``discriminator`` are never features: one is
circular and the other is retrained every step) plus output-only features the task
provides (``HasOutputFeatures``, tasks/base.py; the meeting task's, tasks/meetings/features.py:
log word count, log line count, number of action items, share of action items with an owner,
number of bullets, decisions and topics, whether there is a heading, and the distinct-word
ratio). No transcript features: the model must work from what the rollout scored.

Model: ``GradientBoostingRegressor`` (100 trees of depth 2, learning rate 0.1, squared error,
no subsampling: deterministic given ``rng_seed``). ``fit`` measures calibration on a held-out
25 % split (Spearman rank correlation and MAE, plus the MAE of always predicting the training
mean, for scale), split by ``group`` (e.g. the policy id) when the pairs carry >= 4 groups so the
held-out pairs come from unseen policies; then it refits on all pairs. Fewer than ``min_pairs``
(12) pairs: the fit is skipped (an unfitted model predicts 0.5; a fitted one keeps its model).

As with the discriminator, scikit-learn is imported only by ``fit``: the fitted trees are copied
into plain lists (node feature, threshold, children, value) and ``predict`` walks them by hand
(checked against scikit-learn in the tests), so the state is plain JSON, loading executes no
code, and a round trip predicts bit-identically.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from evotrainer.evaluation.correlation import spearman
from evotrainer.tasks.base import OutputFeatures, RewardComponent
from evotrainer.types import ComponentScore, Instance

__all__ = [
    "CalibrationReport",
    "LearnedRewardModel",
    "LearnedReward",
    "EXCLUDED_COMPONENTS",
    "row_target",
]

STATE_FORMAT = "evotrainer.learned_reward/1"
EXCLUDED_COMPONENTS = frozenset({"learned", "discriminator"})


def row_target(row: Mapping[str, Any], weights: Mapping[str, float]) -> float | None:
    """The per-instance validation score of a metric row (``weights``: s_val's): the weighted
    mean of the weighted keys
    present in the row (None, missing or non-finite values are left out and the weights
    renormalised over the rest). None when no weighted key is present: such a row is no
    training pair (a 0 would be a wrong label)."""
    num = den = 0.0
    for k, w in weights.items():
        if not w or w <= 0:
            continue
        v = row.get(k)
        if v is None or isinstance(v, bool) or not isinstance(v, int | float):
            continue
        v = float(v)
        if not math.isfinite(v):
            continue
        num += w * v
        den += w
    return num / den if den > 0 else None


def _clean_components(components: Mapping[str, Any]) -> dict[str, float]:
    out = {}
    for k, v in components.items():
        if k in EXCLUDED_COMPONENTS:
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        out[str(k)] = min(1.0, max(0.0, f)) if math.isfinite(f) else 0.0
    return out


# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CalibrationReport:
    """How one ``fit`` went: held-out Spearman and MAE (None when not fitted or undefined)."""

    fitted: bool
    n_pairs: int
    n_train: int = 0
    n_test: int = 0
    spearman: float | None = None
    mae: float | None = None
    baseline_mae: float | None = None  # MAE of predicting the training mean
    split: str = ""  # "group" | "random"
    features: tuple[str, ...] = ()
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["features"] = list(self.features)
        return d


@dataclass
class _Tree:
    feature: list[int]
    threshold: list[float]
    left: list[int]
    right: list[int]
    value: list[float]

    def predict(self, x32: Sequence[float]) -> float:
        node = 0
        while self.left[node] != -1:
            f = self.feature[node]
            node = self.left[node] if x32[f] <= self.threshold[node] else self.right[node]
        return self.value[node]


@dataclass
class _Forest:
    features: list[str]
    init: float
    learning_rate: float
    trees: list[_Tree]

    def predict(self, x: Sequence[float]) -> float:
        # sklearn's trees compare float32 features with float64 thresholds
        x32 = [float(v) for v in np.asarray(x, dtype=np.float32)]
        raw = self.init
        for t in self.trees:
            raw += self.learning_rate * t.predict(x32)
        return raw

    def to_json(self) -> dict[str, Any]:
        return {
            "features": self.features,
            "init": self.init,
            "learning_rate": self.learning_rate,
            "trees": [asdict(t) for t in self.trees],
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> _Forest:
        trees = []
        for t in d["trees"]:
            tree = _Tree(
                feature=[int(v) for v in t["feature"]],
                threshold=[float(v) for v in t["threshold"]],
                left=[int(v) for v in t["left"]],
                right=[int(v) for v in t["right"]],
                value=[float(v) for v in t["value"]],
            )
            n = len(tree.left)
            if not (n and len(tree.feature) == len(tree.threshold) == len(tree.right) == n):
                raise ValueError("learned reward state: malformed tree")
            if len(tree.value) != n:
                raise ValueError("learned reward state: malformed tree")
            trees.append(tree)
        return cls(
            [str(f) for f in d["features"]], float(d["init"]), float(d["learning_rate"]), trees
        )


class LearnedRewardModel:
    """Regressor (component scores, output features) -> validation score. See the module
    docstring. Keeps at most ``max_pairs`` pairs (the newest)."""

    def __init__(
        self,
        min_pairs: int = 12,
        max_pairs: int = 5_000,
        n_estimators: int = 100,
        max_depth: int = 2,
        learning_rate: float = 0.1,
        test_size: float = 0.25,
        *,
        features: OutputFeatures,
    ) -> None:
        """``features``: the outputs' own features (the task's, ``HasOutputFeatures``)."""
        self.features = features
        self.min_pairs = min_pairs
        self.max_pairs = max_pairs
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.test_size = test_size
        # (components, output features, target, group)
        self.pairs: list[tuple[dict[str, float], list[float], float, str | None]] = []
        self._forest: _Forest | None = None
        self.report: CalibrationReport | None = None
        self.n_fits = 0
        # leave-one-group-out models, by group, with the (pairs, fits) they were made at
        self._without: dict[str, tuple[tuple[int, int], LearnedRewardModel]] = {}

    @property
    def is_fitted(self) -> bool:
        return self._forest is not None

    def __len__(self) -> int:
        return len(self.pairs)

    def add(
        self,
        components: Mapping[str, float],
        output: str,
        target: float | None,
        group: Hashable | None = None,
    ) -> bool:
        """Record one pair; ``group`` (e.g. the policy id) lets ``fit`` hold out whole groups.
        A None or non-finite target is skipped (returns False)."""
        if target is None:
            return False
        try:
            t = float(target)
        except (TypeError, ValueError):
            return False
        if not math.isfinite(t):
            return False
        self.pairs.append(
            (
                _clean_components(components),
                self.features.of(output),
                min(1.0, max(0.0, t)),
                None if group is None else str(group),
            )
        )
        if len(self.pairs) > self.max_pairs:
            del self.pairs[: len(self.pairs) - self.max_pairs]
        return True

    # ---- training ------------------------------------------------------------------------

    def _row(
        self, features: Sequence[str], comps: Mapping[str, float], out: Sequence[float]
    ) -> list[float]:
        n_c = len(features) - len(self.features.names)
        return [comps.get(f, 0.0) for f in features[:n_c]] + list(out)

    def _fit_sklearn(self, x: list[list[float]], y: list[float], seed: int) -> Any:
        # lazy: optional dependency (extra learned)
        from sklearn.ensemble import GradientBoostingRegressor

        model = GradientBoostingRegressor(
            n_estimators=self.n_estimators,
            max_depth=self.max_depth,
            learning_rate=self.learning_rate,
            subsample=1.0,
            random_state=seed % 2**32,
        )
        model.fit(x, y)
        return model

    def _extract(self, model: Any, features: list[str]) -> _Forest:
        trees = []
        for est in model.estimators_[:, 0]:
            t = est.tree_
            trees.append(
                _Tree(
                    feature=[int(v) for v in t.feature],
                    threshold=[float(v) for v in t.threshold],
                    left=[int(v) for v in t.children_left],
                    right=[int(v) for v in t.children_right],
                    value=[float(v) for v in t.value[:, 0, 0]],
                )
            )
        init = float(model.init_.predict([[0.0] * len(features)])[0])
        return _Forest(features, init, float(model.learning_rate), trees)

    def _split(self, seed: int) -> tuple[list[int], list[int], str]:
        n = len(self.pairs)
        rng = random.Random(f"learned-split-{seed}")
        groups = sorted({g for *_, g in self.pairs if g is not None})
        if len(groups) >= 4 and all(g is not None for *_, g in self.pairs):
            rng.shuffle(groups)
            n_g = max(1, round(self.test_size * len(groups)))
            held = set(groups[:n_g])
            te = [i for i, p in enumerate(self.pairs) if p[3] in held]
            tr = [i for i, p in enumerate(self.pairs) if p[3] not in held]
            if len(tr) >= 2 and len(te) >= 2:
                return tr, te, "group"
        idx = list(range(n))
        rng.shuffle(idx)
        n_te = max(3, round(self.test_size * n))
        return sorted(idx[n_te:]), sorted(idx[:n_te]), "random"

    def fit(self, rng_seed: int = 0) -> CalibrationReport:
        n = len(self.pairs)
        if n < self.min_pairs:
            note = f"too few pairs to train ({n}, need >= {self.min_pairs}): " + (
                "kept the previous model" if self.is_fitted else "untrained, predicts 0.5"
            )
            self.report = CalibrationReport(False, n, note=note)
            return self.report
        comp_names = sorted({k for c, *_ in self.pairs for k in c})
        features = comp_names + list(self.features.names)
        x = [self._row(features, c, o) for c, o, _, _ in self.pairs]
        y = [t for _, _, t, _ in self.pairs]
        tr, te, how = self._split(rng_seed)
        held = self._extract(
            self._fit_sklearn([x[i] for i in tr], [y[i] for i in tr], rng_seed), features
        )
        pred = [min(1.0, max(0.0, held.predict(x[i]))) for i in te]
        truth = [y[i] for i in te]
        rho = spearman(pred, truth)
        mae = sum(abs(p - t) for p, t in zip(pred, truth, strict=True)) / len(te)
        mean_tr = sum(y[i] for i in tr) / len(tr)
        base = sum(abs(mean_tr - t) for t in truth) / len(te)
        self._forest = self._extract(self._fit_sklearn(x, y, rng_seed), features)
        self.n_fits += 1
        rho_s = f"{rho:.2f}" if rho is not None else "undefined"
        self.report = CalibrationReport(
            True,
            n,
            n_train=len(tr),
            n_test=len(te),
            spearman=rho,
            mae=mae,
            baseline_mae=base,
            split=how,
            features=tuple(features),
            note=f"held-out ({how} split) Spearman {rho_s}, MAE {mae:.3f} (mean baseline "
            f"{base:.3f}) on {len(te)} pairs; refit on all {n}",
        )
        return self.report

    def without(self, group: Hashable, rng_seed: int = 0) -> LearnedRewardModel | None:
        """A model fitted on every pair but ``group``'s (leave one group out): honest scores of
        that group's outputs, e.g. to judge a reward that includes the model on the policies it
        learned from (evaluation/rank_judge.py). None when too few pairs remain."""
        key = str(group)
        rest = [p for p in self.pairs if p[3] != key]
        if len(rest) < self.min_pairs:
            return None
        cached = self._without.get(key)
        if cached is not None and cached[0] == (len(self.pairs), self.n_fits):
            return cached[1]
        comp_names = sorted({k for c, *_ in rest for k in c})
        features = comp_names + list(self.features.names)
        x = [self._row(features, c, o) for c, o, _, _ in rest]
        model = LearnedRewardModel(self.min_pairs, self.max_pairs, features=self.features)
        model._forest = self._extract(
            self._fit_sklearn(x, [t for *_, t, _ in rest], rng_seed), features
        )
        self._without[key] = ((len(self.pairs), self.n_fits), model)
        return model

    # ---- prediction ----------------------------------------------------------------------

    def predict_features(self, components: Mapping[str, float], feats: Sequence[float]) -> float:
        f = self._forest
        if f is None:
            return 0.5
        raw = f.predict(self._row(f.features, _clean_components(components), feats))
        return min(1.0, max(0.0, raw)) if math.isfinite(raw) else 0.5

    def predict(self, components: Mapping[str, float], output: str) -> float:
        """Predicted validation score in [0, 1]; 0.5 while untrained."""
        if self._forest is None:
            return 0.5
        return self.predict_features(components, self.features.of(output))

    # ---- state ---------------------------------------------------------------------------

    def state_dict(self, include_pairs: bool = True) -> dict[str, Any]:
        """Plain-JSON state: config, the pairs (unless ``include_pairs`` is False), the fitted
        trees (or None) and the last report."""
        return {
            "format": STATE_FORMAT,
            "config": {
                "min_pairs": self.min_pairs,
                "max_pairs": self.max_pairs,
                "n_estimators": self.n_estimators,
                "max_depth": self.max_depth,
                "learning_rate": self.learning_rate,
                "test_size": self.test_size,
            },
            "pairs": [[c, o, t, g] for c, o, t, g in self.pairs] if include_pairs else [],
            "model": self._forest.to_json() if self._forest is not None else None,
            "report": self.report.to_dict() if self.report is not None else None,
            "n_fits": self.n_fits,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if state.get("format") != STATE_FORMAT:
            raise ValueError(
                f"not a learned-reward state: format {state.get('format')!r}, "
                f"expected {STATE_FORMAT!r}"
            )
        cfg = state.get("config", {})
        self.min_pairs = int(cfg.get("min_pairs", self.min_pairs))
        self.max_pairs = int(cfg.get("max_pairs", self.max_pairs))
        self.n_estimators = int(cfg.get("n_estimators", self.n_estimators))
        self.max_depth = int(cfg.get("max_depth", self.max_depth))
        self.learning_rate = float(cfg.get("learning_rate", self.learning_rate))
        self.test_size = float(cfg.get("test_size", self.test_size))
        pairs = []
        for c, o, t, g in state.get("pairs", []):
            feats = [float(v) for v in o]
            if len(feats) != len(self.features.names):
                raise ValueError("learned reward state: a pair has the wrong number of features")
            pairs.append(
                (
                    {str(k): float(v) for k, v in c.items()},
                    feats,
                    float(t),
                    None if g is None else str(g),
                )
            )
        self.pairs = pairs
        model = state.get("model")
        self._forest = _Forest.from_json(model) if model is not None else None
        rep = state.get("report")
        if rep is not None:
            rep = dict(rep)
            rep["features"] = tuple(rep.get("features", ()))
            self.report = CalibrationReport(**rep)
        else:
            self.report = None
        self.n_fits = int(state.get("n_fits", 0))


# --------------------------------------------------------------------------------------------


class LearnedReward:
    """Reward component ``learned``: the reward model's predicted validation score.

    It needs the other components' scores of the same rollout, so it recomputes them with
    ``components`` (``learned`` and ``discriminator`` are skipped). 0.5 while untrained. Never
    raises. When the engine already holds the score vector, ``model.predict(scores, output)``
    gives the same number without recomputing."""

    name = "learned"
    description = (
        "learned reward model: the validation score predicted from the other components and "
        "the output's shape (trained on every validated rollout)"
    )

    def __init__(
        self, model: LearnedRewardModel, components: Mapping[str, RewardComponent]
    ) -> None:
        self.model = model
        self.components = {
            k: c for k, c in components.items() if k not in EXCLUDED_COMPONENTS and c is not self
        }

    def __repr__(self) -> str:
        return f"LearnedReward(fitted={self.model.is_fitted}, components={sorted(self.components)})"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        m = self.model
        try:
            if not m.is_fitted:
                return ComponentScore(
                    self.name, 0.5, "learned reward model untrained: neutral 0.5 for every output"
                )
            scores: dict[str, float] = {}
            for name, comp in self.components.items():
                try:
                    scores[name] = float(comp.score(instance, output, parsed).score)
                except Exception:  # noqa: BLE001 - a broken component scores 0, as in the engine
                    scores[name] = 0.0
            p = m.predict(scores, output)
            fb = f"predicted validation score {p:.2f}"
            rep = m.report
            if rep is not None and rep.fitted and rep.spearman is not None:
                fb += f" (model: held-out Spearman {rep.spearman:.2f} on {rep.n_test} pairs)"
            return ComponentScore(self.name, p, fb)
        except Exception as exc:  # noqa: BLE001 - a reward component never raises
            return ComponentScore(self.name, 0.0, f"learned reward error: {type(exc).__name__}")
