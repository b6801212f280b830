"""What a run will cost, said before it starts: an estimate of its LLM calls from the config
and the data (``estimate_calls``) and, once the backend's speed is measured on the run's first
calls, of its time (``Progress``): the console prints both, and every progress line carries an
ETA.

The estimate counts requests (cache hits included: a rerun answered from the cache is faster,
never more expensive) and follows the engine's schedule: the first population on the first
batch, the seeds' validation, every generation's children (with racing: a child meets
``inner.race_first`` batch instances first, about half of them the rest) and operator calls, the
racing validation of the most promising members after each generation, the outer steps (trial
runs and the validation of their bests), and at the end the final validation and the
confirmation of the winner and the best seed. It is an expectation, not a bound: racing and the
cache make the real count lower, a task whose rollouts take several turns higher (its
``max_calls_per_rollout`` is counted as the cost of each rollout). ``budget.max_calls`` caps it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evotrainer.config import RunConfig

RACED_ON = 0.2  # share of raced children that meet the rest of the batch (measured on fakes)
OPERATOR_CALLS = 0.4  # LLM calls an operator makes per child, on average
RACED_VALIDATION = 0.6  # share of the selection part a raced validation meets, on average


@dataclass(frozen=True)
class CallEstimate:
    parts: dict[str, int]
    cap: int | None  # budget.max_calls

    @property
    def total(self) -> int:
        """The run's expected calls, never more than the cap."""
        raw = sum(self.parts.values())
        return min(raw, self.cap) if self.cap else raw

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "parts": dict(self.parts), "cap": self.cap}

    @property
    def minimum(self) -> int:
        """The calls of the first population, the seeds' validation and the final validation
        and confirmation: below them a run stops before its first generation."""
        keys = ("first population", "seeds' validation", "final validation and confirmation")
        return sum(self.parts.get(k, 0) for k in keys)

    def describe(self) -> str:
        parts = ", ".join(f"{k} {v}" for k, v in self.parts.items() if v)
        raw = sum(self.parts.values())
        capped = ""
        if self.cap and self.cap < self.minimum:
            capped = (
                f"; budget.max_calls={self.cap} is below the ~{self.minimum} calls of the first "
                "population, the seeds' validation and the final validation: the run will stop "
                "before its first generation and return an unevolved policy"
            )
        elif self.cap and raw > self.cap:
            capped = f"; budget.max_calls={self.cap} stops it there"
        return f"about {self.total} LLM calls ({parts}{capped})"


def estimate_calls(
    cfg: RunConfig,
    n_selection: int,
    n_confirmation: int,
    n_seeds: int,
    calls_per_rollout: int = 1,
    n_probe: int = 0,
    trials_per_step: int | None = None,
) -> CallEstimate:
    """The expected LLM calls of a run of ``cfg`` on ``n_selection`` selection and
    ``n_confirmation`` confirmation instances, starting from ``n_seeds`` seed policies.
    ``trials_per_step``: the harness variants an outer step may trial (default
    ``outer.variants`` + the incumbent)."""
    inner, outer, val = cfg.inner, cfg.outer, cfg.validation
    c = max(1, calls_per_rollout)
    P, E, T, G = inner.population, inner.elites, inner.tasks_per_generation, inner.generations
    children = P - E
    first_t = min(T, inner.race_first) if inner.race_first else T
    per_child = first_t + RACED_ON * (T - first_t)
    s_val = n_selection + n_probe  # one validation of one policy

    def raced(n: int) -> float:
        first = min(n, val.race_first) if val.race_first else n
        return first + RACED_VALIDATION * (n - first)

    parts = {
        "first population": P * T * c,
        "seeds' validation": min(n_seeds, P) * s_val * c,
        "generations": math.ceil(G * children * (per_child * c + OPERATOR_CALLS)),
        "validation each generation": math.ceil(
            G * min(val.each_generation, children) * raced(s_val) * c
        ),
    }
    steps = (G - 1) // outer.every if G > 1 else 0
    if outer.enabled and steps:
        trials = trials_per_step or (outer.variants + int(outer.include_incumbent))
        runs = 1 if outer.trials == "rerank" else trials
        if outer.trials == "rank":
            runs = 0
        run_cost = E * T * c + outer.trial_generations * children * (per_child * c + OPERATOR_CALLS)
        bests = min(trials, children) if outer.trials != "rank" else 1
        parts["outer steps"] = math.ceil(steps * (runs * run_cost + bests * raced(s_val) * c))
    elif steps:
        parts["outer steps"] = math.ceil(steps * raced(s_val) * c)  # the monitor's validation
    parts["final validation and confirmation"] = (s_val + 2 * n_confirmation) * c
    return CallEstimate({k: int(v) for k, v in parts.items()}, cfg.budget.max_calls)


def format_duration(seconds: float | None) -> str:
    """``3h 05m``, ``12m 30s``, ``45s``; ``?`` when unknown."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "?"
    s = round(seconds)
    if s >= 3600:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s}s"


@dataclass
class Progress:
    """The run's expected calls and the measured pace: seconds per call since the start of this
    session, once ``MIN_CALLS`` calls were made, give the time left."""

    expected_calls: int
    calls_at_start: int = 0  # a resume starts with calls already spent
    MIN_CALLS = 4

    def eta_s(self, calls: int, elapsed_s: float) -> float | None:
        """Seconds left: the calls still expected at the pace measured so far (None before
        ``MIN_CALLS`` calls of this session)."""
        done = calls - self.calls_at_start
        if done < self.MIN_CALLS or elapsed_s <= 0:
            return None
        left = max(0, self.expected_calls - calls)
        return left * elapsed_s / done

    def seconds_per_call(self, calls: int, elapsed_s: float) -> float | None:
        done = calls - self.calls_at_start
        return elapsed_s / done if done >= self.MIN_CALLS else None
