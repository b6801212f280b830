"""Bradley-Terry fits of pairwise ratings, with uncertainty.

P(left preferred) = sigmoid(x . beta), where x is the difference of the two sides' design rows
(for per-policy scores: +1 for the left policy, -1 for the right one). A tie counts as half a
win for each side (the log-likelihood takes y = 0.5). A Gaussian prior N(0, 1/prior) on every
coefficient keeps the fit finite when a policy has only won (and centres the scores); the
maximum a posteriori fit is found by Newton's method, and the uncertainty is the Laplace
approximation: the inverse of the negative Hessian at the optimum is the covariance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evotrainer.run.ratings import Rating


def sigmoid(z: np.ndarray | float) -> Any:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=float)))


def fit_logistic(
    x: np.ndarray, y: np.ndarray, prior: float | np.ndarray, iterations: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """MAP coefficients and their Laplace covariance for P(y=1) = sigmoid(x @ beta), y in
    [0, 1], with a N(0, 1/prior) prior on each coefficient."""
    n, d = x.shape
    lam = np.broadcast_to(np.asarray(prior, dtype=float), (d,))
    beta = np.zeros(d)
    for _ in range(iterations):
        p = sigmoid(x @ beta)
        grad = x.T @ (y - p) - lam * beta
        hess = x.T @ (x * (p * (1 - p))[:, None]) + np.diag(lam)
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if float(np.max(np.abs(step), initial=0.0)) < 1e-10:
            break
    p = sigmoid(x @ beta)
    hess = x.T @ (x * (p * (1 - p))[:, None]) + np.diag(lam)
    return beta, np.linalg.inv(hess)


@dataclass(frozen=True)
class PolicyScore:
    policy_id: str
    score: float  # log-strength; 0 = an average policy
    se: float  # standard error (Laplace)
    wins: int
    losses: int
    ties: int

    @property
    def n(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def ci95(self) -> tuple[float, float]:
        return self.score - 1.96 * self.se, self.score + 1.96 * self.se

    @property
    def win_probability(self) -> float:
        """Probability that people prefer it to an average policy."""
        return float(sigmoid(self.score))

    def to_json(self) -> dict[str, Any]:
        return {
            "policy_id": self.policy_id,
            "score": self.score,
            "se": self.se,
            "ci95": list(self.ci95),
            "win_probability": self.win_probability,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
        }


def policy_scores(ratings: Sequence[Rating], prior: float = 1.0) -> list[PolicyScore]:
    """Per-policy Bradley-Terry scores with standard errors, best first."""
    ids = sorted({r.left for r in ratings} | {r.right for r in ratings})
    if not ids:
        return []
    col = {pid: i for i, pid in enumerate(ids)}
    x = np.zeros((len(ratings), len(ids)))
    y = np.zeros(len(ratings))
    tally = {pid: [0, 0, 0] for pid in ids}
    for k, r in enumerate(ratings):
        x[k, col[r.left]], x[k, col[r.right]] = 1.0, -1.0
        y[k] = r.left_score
        if r.outcome == "tie":
            tally[r.left][2] += 1
            tally[r.right][2] += 1
        else:
            tally[r.winner or ""][0] += 1
            tally[r.right if r.outcome == "left" else r.left][1] += 1
    beta, cov = fit_logistic(x, y, prior)
    out = [
        PolicyScore(pid, float(beta[i]), float(np.sqrt(cov[i, i])), *tally[pid])
        for pid, i in col.items()
    ]
    return sorted(out, key=lambda s: (-s.score, s.policy_id))
