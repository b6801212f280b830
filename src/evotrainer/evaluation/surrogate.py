"""A surrogate of fitness that screens children before any LLM call (SPEC: "most evaluations
predicted by the surrogate, periodically calibrated with real inference").

**What it predicts.** How much a child's fitness differs from its best parent's on the batch
both meet: a difference, so what it learned carries over from one batch and one harness to the
next. From cheap features of the child and of how it was made: the operator, the parents'
fitness, the change in length and structure (lines, template, examples), and the words gained
and lost (hashed into a few buckets). Model: ridge regression (numpy, closed form), refit after
every generation on the children evaluated for real (the last ``window`` of them).

**How it screens.** Once it has ``min_train`` examples and its held-out rank correlation (its
predictions, made before the children were evaluated, against their real fitness change) is at
least ``min_spearman``, a child whose predicted fitness is below the elites' cut-off by more
than ``margin`` is not evaluated: it keeps the prediction as its fitness (``n`` = 0), so it can
never become an elite. A share ``explore`` of those, chosen by a seeded draw per child, is
evaluated anyway: the calibration on real inference that keeps the model honest where it says
"no" (and the held-out pairs its Spearman is measured on).
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from evotrainer.evaluation.correlation import spearman
from evotrainer.evaluation.evaluator import PolicyFitness
from evotrainer.operators.registry import OPERATORS
from evotrainer.policy.genome import PolicyGenome


class Population(Protocol):
    """What screening reads of the inner loop's optimiser (loops/inner.py: PolicyOptimizer):
    the members, their fitness and how many survive as elites."""

    population: list[PolicyGenome]
    fitness: dict[str, PolicyFitness]

    @property
    def elites(self) -> int: ...


WORD_BUCKETS = 16
_WORD = re.compile(r"[a-z]{3,}")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _bucket(word: str) -> int:
    return int(hashlib.blake2b(word.encode(), digest_size=2).hexdigest(), 16) % WORD_BUCKETS


OPERATOR_NAMES = tuple(sorted(OPERATORS))


def features(
    child: PolicyGenome, parents: Sequence[PolicyGenome], fits: Sequence[float]
) -> list[float]:
    """The child's feature vector (``parents`` with their fitness ``fits``, best first)."""
    best = parents[0]
    text, ptext = child.render(), best.render()
    op = [1.0 if child.lineage.operator == name else 0.0 for name in OPERATOR_NAMES]
    gained = np.zeros(WORD_BUCKETS)
    for w in _words(text) - _words(ptext):
        gained[_bucket(w)] += 1.0
    for w in _words(ptext) - _words(text):
        gained[_bucket(w)] -= 1.0
    has = [
        float(bool(child.components.get(c, "").strip()))
        - float(bool(best.components.get(c, "").strip()))
        for c in ("template", "examples")
    ]
    return [
        1.0,
        fits[0],
        (fits[0] - fits[-1]) if len(fits) > 1 else 0.0,
        len(text) / 1000.0,
        math.log((len(text) + 1) / (len(ptext) + 1)),
        (text.count("\n") - ptext.count("\n")) / 10.0,
        *has,
        *op,
        *(np.tanh(gained / 3.0)),
    ]


class FitnessSurrogate:
    def __init__(
        self,
        seed: int = 0,
        min_train: int = 12,
        min_spearman: float = 0.2,
        margin: float = 0.02,
        explore: float = 0.25,
        window: int = 200,
        ridge: float = 1.0,
    ) -> None:
        self.seed = seed
        self.min_train = min_train
        self.min_spearman = min_spearman
        self.margin = margin
        self.explore = explore
        self.window = window
        self.ridge = ridge
        self.rows: list[tuple[list[float], float]] = []  # (features, fitness change)
        self.pairs: list[tuple[float, float]] = []  # held out: (predicted, real) change
        self.coef: list[float] | None = None
        self.screened = 0  # children not evaluated
        self.explored = 0  # children screened out but evaluated anyway (calibration)
        self.evaluated = 0  # children evaluated (explored ones included)
        self.skipped_min = 0  # evaluations the screened children would have cost at least
        self._lock = threading.Lock()  # concurrent harness trials share the surrogate

    # -- the model ------------------------------------------------------------------------
    def _fit(self) -> None:
        if len(self.rows) < self.min_train:
            return
        x = np.asarray([r[0] for r in self.rows])
        y = np.asarray([r[1] for r in self.rows])
        reg = self.ridge * np.eye(x.shape[1])
        reg[0, 0] = 0.0  # the intercept is not shrunk
        self.coef = np.linalg.solve(x.T @ x + reg, x.T @ y).tolist()

    def predict_change(self, feats: Sequence[float]) -> float | None:
        if self.coef is None:
            return None
        return float(np.dot(self.coef, feats))

    @property
    def spearman(self) -> float | None:
        return spearman([p for p, _ in self.pairs], [r for _, r in self.pairs])

    @property
    def active(self) -> bool:
        rho = self.spearman
        return self.coef is not None and rho is not None and rho >= self.min_spearman

    # -- screening ------------------------------------------------------------------------
    def fitness(
        self,
        opt: Population,
        candidates: Sequence[PolicyGenome],
        evaluate: Callable[[list[PolicyGenome]], Mapping[str, PolicyFitness]],
        cost_min: int = 1,
        learn: bool = True,
    ) -> dict[str, PolicyFitness]:
        """The fitness of ``candidates`` (children of ``opt``'s population): the screened
        ones predicted, the others from ``evaluate``; then, with ``learn``, the model learns
        from them (the driver learns from its main loop only: harness trials, which may run
        concurrently, use the model as it is, so their order cannot change it)."""
        with self._lock:
            made = {c.id: self._made(opt, c) for c in candidates}
            active = self.active
        ranked = sorted((opt.fitness[p.id].fitness for p in opt.population), reverse=True)
        finite = [f for f in ranked if math.isfinite(f)]
        cutoff = finite[min(opt.elites, len(finite)) - 1] if finite else -math.inf
        predicted: dict[str, PolicyFitness] = {}
        explored: set[str] = set()
        for c in candidates:
            m = made[c.id]
            if not active or m is None:
                continue
            feats, base = m
            change = self.predict_change(feats)
            if change is None or base + change >= cutoff - self.margin:
                continue
            draw = random.Random(f"{self.seed}/surrogate/{c.id}").random()
            if draw < self.explore:
                explored.add(c.id)
                continue
            predicted[c.id] = PolicyFitness(
                c.id, base + change, {}, 0, 0, feedback="screened by the surrogate"
            )
        real = dict(evaluate([c for c in candidates if c.id not in predicted]))
        with self._lock:
            self.screened += len(predicted)
            self.explored += len(explored)
            self.evaluated += len(real)
            self.skipped_min += len(predicted) * cost_min
            for c in candidates if learn else ():
                m = made[c.id]
                fit = real.get(c.id)
                if m is None or fit is None or not math.isfinite(fit.fitness):
                    continue
                feats, base = m
                change = self.predict_change(feats)
                if change is not None:
                    self.pairs.append((change, fit.fitness - base))
                self.rows.append((feats, fit.fitness - base))
            self.rows = self.rows[-self.window :]
            self.pairs = self.pairs[-self.window :]
            self._fit()
        return {**real, **predicted}

    @staticmethod
    def _made(opt: Population, child: PolicyGenome) -> tuple[list[float], float] | None:
        """(features, best parent's fitness), or None for a child without scored parents."""
        by_id = {p.id: p for p in opt.population}
        parents = [by_id[p] for p in child.lineage.parents if p in by_id and p in opt.fitness]
        fits = [opt.fitness[p.id].fitness for p in parents]
        if not parents or not all(math.isfinite(f) for f in fits):
            return None
        order = sorted(range(len(parents)), key=lambda i: -fits[i])
        parents = [parents[i] for i in order]
        fits = [fits[i] for i in order]
        return features(child, parents, fits), fits[0]

    # -- reporting and checkpoints --------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        rho = self.spearman
        return {
            "screened": self.screened,
            "explored": self.explored,
            "evaluated": self.evaluated,
            "evaluations_skipped_at_least": self.skipped_min,
            "heldout_spearman": round(rho, 4) if rho is not None else None,
            "heldout_pairs": len(self.pairs),
            "active": self.active,
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            "rows": [[list(f), y] for f, y in self.rows],
            "pairs": [list(p) for p in self.pairs],
            "counts": [self.screened, self.explored, self.evaluated, self.skipped_min],
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.rows = [(list(map(float, f)), float(y)) for f, y in state.get("rows", [])]
        self.pairs = [(float(a), float(b)) for a, b in state.get("pairs", [])]
        self.screened, self.explored, self.evaluated, self.skipped_min = (
            int(x) for x in state.get("counts", [0, 0, 0, 0])
        )
        self.coef = None
        self._fit()
