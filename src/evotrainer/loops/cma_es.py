"""A small (mu/mu_w, lambda)-CMA-ES for the harness weights, whose whole state is plain data.

The textbook algorithm (Hansen, "The CMA Evolution Strategy: A Tutorial", the same updates as
pycma's ``purecma``): weighted recombination, cumulative step-size adaptation, rank-one and
rank-mu covariance updates. It minimises. Samples are clipped into ``[lower, upper]`` and the
clipped points are what the update sees (a repair). Randomness comes from an explicit
``numpy.random.Generator``; ``state_dict()`` returns numbers and lists only (mean, sigma,
covariance, evolution paths, generation, the generator's state, the points asked), so a
checkpoint never holds a pickle and ``from_state`` continues the search exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

MAX_POPSIZE = 10_000  # outer.variants is at most 1000; a larger one is a crafted checkpoint


class CMAES:
    def __init__(
        self,
        x0: Sequence[float],
        sigma: float,
        popsize: int,
        seed: int,
        lower: float = 0.0,
        upper: float = 1.0,
    ) -> None:
        self.n = len(x0)
        self.lam = max(2, _popsize(popsize))
        self.lower, self.upper = float(lower), float(upper)
        self.mean = np.asarray(x0, dtype=float)
        self.sigma = float(sigma)
        self.C = np.eye(self.n)
        self.pc = np.zeros(self.n)
        self.ps = np.zeros(self.n)
        self.generation = 0
        self.rng = np.random.default_rng(seed)
        self.asked: np.ndarray | None = None
        self._constants()

    def _constants(self) -> None:
        n, lam = self.n, self.lam
        mu = lam // 2
        w = np.log(mu + 0.5) - np.log(np.arange(1, mu + 1))
        self.weights = w / w.sum()
        self.mueff = 1.0 / float(np.sum(self.weights**2))
        self.cc = (4 + self.mueff / n) / (n + 4 + 2 * self.mueff / n)
        self.cs = (self.mueff + 2) / (n + self.mueff + 5)
        self.c1 = 2 / ((n + 1.3) ** 2 + self.mueff)
        self.cmu = min(
            1 - self.c1, 2 * (self.mueff - 2 + 1 / self.mueff) / ((n + 2) ** 2 + self.mueff)
        )
        self.damps = 1 + 2 * max(0.0, math.sqrt((self.mueff - 1) / (n + 1)) - 1) + self.cs
        self.chi_n = math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))

    def _eigen(self) -> tuple[np.ndarray, np.ndarray]:
        C = (self.C + self.C.T) / 2
        d2, B = np.linalg.eigh(C)
        return B, np.sqrt(np.maximum(d2, 1e-20))

    def ask(self) -> list[list[float]]:
        B, D = self._eigen()
        z = self.rng.standard_normal((self.lam, self.n))
        x = self.mean + self.sigma * (z * D) @ B.T
        self.asked = np.clip(x, self.lower, self.upper)
        return self.asked.tolist()

    def tell(self, fvals: Sequence[float]) -> None:
        """``fvals[i]`` is the (minimised) value of the i-th point of the last ``ask``."""
        if self.asked is None or len(fvals) != self.lam:
            raise ValueError(f"tell() needs {self.lam} values for the last ask()")
        mu = len(self.weights)
        order = np.argsort(np.asarray(fvals, dtype=float), kind="stable")[:mu]
        xsel = self.asked[order]
        old = self.mean
        self.mean = self.weights @ xsel
        y = (self.mean - old) / self.sigma
        B, D = self._eigen()
        inv_sqrt_c = B @ np.diag(1 / D) @ B.T
        self.ps = (1 - self.cs) * self.ps + math.sqrt(
            self.cs * (2 - self.cs) * self.mueff
        ) * inv_sqrt_c @ y
        norm_ps = float(np.linalg.norm(self.ps))
        hsig = norm_ps / math.sqrt(
            1 - (1 - self.cs) ** (2 * (self.generation + 1))
        ) / self.chi_n < 1.4 + 2 / (self.n + 1)
        self.pc = (1 - self.cc) * self.pc + hsig * math.sqrt(
            self.cc * (2 - self.cc) * self.mueff
        ) * y
        art = (xsel - old) / self.sigma
        self.C = (
            (1 - self.c1 - self.cmu) * self.C
            + self.c1 * (np.outer(self.pc, self.pc) + (1 - hsig) * self.cc * (2 - self.cc) * self.C)
            + self.cmu * (art.T * self.weights) @ art
        )
        self.sigma *= math.exp((self.cs / self.damps) * (norm_ps / self.chi_n - 1))
        self.generation += 1
        self.asked = None

    # -- plain-data state -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "popsize": self.lam,
            "bounds": [self.lower, self.upper],
            "mean": self.mean.tolist(),
            "sigma": self.sigma,
            "C": self.C.tolist(),
            "pc": self.pc.tolist(),
            "ps": self.ps.tolist(),
            "generation": self.generation,
            "rng": self.rng.bit_generator.state,
            "asked": None if self.asked is None else self.asked.tolist(),
        }

    @classmethod
    def from_state(cls, s: dict[str, Any]) -> CMAES:
        """Rebuild from ``state_dict()`` output; raises ValueError on anything malformed."""
        try:
            mean = _floats(s["mean"])
            n = len(mean)
            es = cls(mean, float(s["sigma"]), int(s["popsize"]), 0, *map(float, s["bounds"]))
            es.C = np.array([_floats(row, n) for row in s["C"]], dtype=float).reshape(n, n)
            es.pc = np.array(_floats(s["pc"], n))
            es.ps = np.array(_floats(s["ps"], n))
            es.generation = int(s["generation"])
            rng = s["rng"]
            if not isinstance(rng, dict) or rng.get("bit_generator") != "PCG64":
                raise ValueError("rng must be a PCG64 state")
            es.rng.bit_generator.state = rng
            if s.get("asked") is not None:
                es.asked = np.array([_floats(row, n) for row in s["asked"]]).reshape(es.lam, n)
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"malformed CMA-ES state: {exc!r}") from None
        if not (math.isfinite(es.sigma) and es.sigma > 0 and np.isfinite(es.C).all()):
            raise ValueError("malformed CMA-ES state: sigma and C must be finite")
        return es


def _popsize(value: Any) -> int:
    """The population size as an int; ValueError when it is not a whole number or so large that
    the points asked would not fit in memory."""
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise ValueError(f"CMA-ES popsize must be a whole number, not {value!r}")
    n = int(value)
    if n > MAX_POPSIZE:
        raise ValueError(f"CMA-ES popsize {n} is larger than {MAX_POPSIZE} (outer.variants)")
    return n


def _floats(values: Any, n: int | None = None) -> list[float]:
    if not isinstance(values, list) or (n is not None and len(values) != n):
        raise ValueError(f"expected a list of {n or 'some'} numbers")
    out = [float(v) for v in values]
    if not all(math.isfinite(v) for v in out):
        raise ValueError("expected finite numbers")
    return out
