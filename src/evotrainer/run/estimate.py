"""What a run will cost, said before it starts: an estimate of its LLM calls from the config
and the data (``estimate_calls``) and, once the backend's speed is measured on the run's first
calls, of its time (``Progress``): the console prints both, and every progress line carries an
ETA.

The estimate counts requests (cache hits included: a rerun answered from the cache is faster,
never more expensive) and follows the engine's schedule: the first population on the first
batch, the seeds' validation, every generation's children (with racing: a child meets
``inner.race_first`` batch instances first, about half of them the rest) and operator calls, the
racing validation of the most promising members after each generation, the outer steps (trial
runs and the validation of their bests; with ``distill.mix_genes`` each trial's population scored
again on its adapter), the distillation rounds (fresh answers, the population on the new weights,
the validation of its best), and at the end the final validation and the
confirmation of the winner and the best seed, and (with distillation) the returned policy
validated again without its adapter. It is an expectation, not a bound: racing and the
cache make the real count lower, a task whose rollouts take several turns higher (its
``max_calls_per_rollout`` is counted as the cost of each rollout). ``budget.max_calls`` caps it,
and the estimate then says what the cap buys: the generations and outer steps it pays for, spent
as the engine spends it (``CallEstimate.buys``).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

from evotrainer.config import RunConfig
from evotrainer.harness.distill_mix import TRIAL, mix_genes
from evotrainer.harness.genes import movable, overridden

RACED_ON = 0.2  # share of raced children that meet the rest of the batch (measured on fakes)
OPERATOR_CALLS = 0.4  # LLM calls an operator makes per child, on average
RACED_VALIDATION = 0.6  # share of the selection part a raced validation meets, on average


TRAINING, VALIDATION = "training", "validation"  # the two kinds of call, timed apart
# The embedded model's seconds per call before a run has measured its own pace: `make demo`
# (configs/demo.yaml: 174 training and 134 validation calls expected, 266-332 made) took
# 10.0-11.9 minutes on 2 idle cores (README, docs/demo.md), about 2.2 s a call; a validation
# call (a real meeting cut at 1,024 tokens) takes about twice a training call (issue 51: one
# pace for both was 2x off), so 174 t + 134 * 2 t = 660 s gives t = 1.5 s. Beside another job
# on the second core the demo ran 2-4x slower (docs/demo.md).
EMBEDDED_S_PER_CALL = {TRAINING: 1.5, VALIDATION: 3.0}


@dataclass(frozen=True)
class CallEstimate:
    parts: dict[str, int]
    cap: int | None  # budget.max_calls
    # what the parts hold of each kind of call (training: a batch's synthetic and real
    # instances; validation: the long real meetings), for the ETA (``Progress``)
    kinds: dict[str, int] = field(default_factory=dict)
    # what the schedule is made of, for what a cap buys (``buys``)
    generation: float = 0.0  # one inner generation and its validation
    outer_step: float = 0.0  # one outer step, as expected
    outer_step_bound: float = 0.0  # one outer step at most (what outer.skip_unaffordable weighs)
    reserve: int = 0  # calls held back for the final validation (budget.reserve_final)
    generations: int = 0  # inner.generations
    outer_every: int = 0  # outer.every (0: no outer step)
    skip_unaffordable: bool = True

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

    def buys(self) -> tuple[int, int]:
        """The generations and outer steps the cap pays for, as the engine spends it: the
        first population and the seeds' validation first, the final validation's calls held
        back, then generation after generation, an outer step when due and (with
        ``outer.skip_unaffordable``) when its bound fits in what is left."""
        if not self.cap:
            return self.generations, self.outer_steps_due(self.generations)
        start = self.parts.get("first population", 0) + self.parts.get("seeds' validation", 0)
        final = self.parts.get("final validation and confirmation", 0)
        left = float(self.cap - start - max(self.reserve, final))
        gens = steps = 0
        while gens < self.generations and left >= self.generation:
            left -= self.generation
            gens += 1
            if self.outer_steps_due(gens) > self.outer_steps_due(gens - 1):
                if self.skip_unaffordable and left < self.outer_step_bound:
                    continue  # skipped: the inner loop goes on
                if left < self.outer_step:
                    break
                left -= self.outer_step
                steps += 1
        return gens, steps

    def outer_steps_due(self, gens: int) -> int:
        """Outer steps due after ``gens`` generations (none after the last one)."""
        if not self.outer_every:
            return 0
        return min(gens, self.generations - 1) // self.outer_every if gens else 0

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
        elif self.cap:
            gens, steps = self.buys()
            what = (
                f"{gens} generation{'s' * (gens != 1)} of {self.generations} and {steps} outer "
                f"step{'s' * (steps != 1)}"
            )
            if raw > self.cap:
                capped = f"; budget.max_calls={self.cap} stops it there: this cap buys about {what}"
            else:
                capped = f"; budget.max_calls={self.cap} leaves room for all of it: {what}"
        return f"about {self.total} LLM calls ({parts}{capped})"

    def embedded_seconds(self) -> float:
        """The expected calls at the embedded model's pace on 2 idle cores
        (``EMBEDDED_S_PER_CALL``), before the run measures its own."""
        raw = sum(self.parts.values())
        share = min(1.0, self.total / raw) if raw else 1.0
        return share * sum(n * EMBEDDED_S_PER_CALL.get(k, 0.0) for k, n in self.kinds.items())


def mix_can_move(cfg: RunConfig) -> bool:
    """Whether an outer step adds the data mix's gene-step trial: the trials train adapters
    (``cfg.distill_trials()``) and a mix gene can move (a ``harness.genes`` override with step
    0, as the benchmark's frozen, ``_refs`` and ``_own`` cells set, fixes one; with all fixed
    the outer loop adds no such variant, harness/genes.py ``movable``)."""
    if not cfg.distill_trials():
        return False
    overrides = cfg.harness.genes
    genes = {
        g.name: overridden(g, overrides[g.name]) if g.name in overrides else g
        for g in mix_genes(cfg.distill)
    }
    return bool(movable(genes, {TRIAL}))


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
    ``outer.variants`` + the incumbent, + the data mix's gene step where ``mix_can_move``)."""
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

    train_gen = children * (per_child * c + OPERATOR_CALLS)
    val_gen = min(val.each_generation, children) * raced(s_val) * c
    kinds = {TRAINING: P * T * c + G * train_gen, VALIDATION: min(n_seeds, P) * s_val * c}
    kinds[VALIDATION] += G * val_gen + (s_val + 2 * n_confirmation) * c
    parts = {
        "first population": P * T * c,
        "seeds' validation": min(n_seeds, P) * s_val * c,
        "generations": math.ceil(G * train_gen),
        "validation each generation": math.ceil(G * val_gen),
    }
    steps = (G - 1) // outer.every if G > 1 else 0
    step_train = step_val = bound = 0.0
    gene_step = int(mix_can_move(cfg))  # a data mix to trial: one variant steps it alone
    trials = trials_per_step or (outer.variants + int(outer.include_incumbent) + gene_step)
    if outer.enabled:
        runs = {"rerank": 1, "rank": 0}.get(outer.trials, trials)
        run_cost = E * T * c + outer.trial_generations * children * (per_child * c + OPERATOR_CALLS)
        bests = min(trials, children) if outer.trials != "rank" else 1
        step_train, step_val = runs * run_cost, bests * raced(s_val) * c
        full_run = (E + outer.trial_generations * children) * T * c
        bound = runs * full_run + (trials + 1) * s_val * c
    else:
        step_val = raced(s_val) * c  # the monitor's validation
    if cfg.distill_trials():
        step_train += runs * P * T * c  # each trial's population scored again on its adapter
    if steps:
        parts["outer steps"] = math.ceil(steps * (step_train + step_val))
        kinds[TRAINING] += steps * step_train
        kinds[VALIDATION] += steps * step_val
    dist, dist_train, dist_val = _distillations(
        cfg, P * T * c, raced(s_val) * c, s_val, n_confirmation, c
    )
    kinds[TRAINING] += dist_train
    kinds[VALIDATION] += dist_val
    effect = dist.pop("adapter effect", 0)
    parts.update(dist)
    final = (s_val + 2 * n_confirmation) * c
    parts["final validation and confirmation"] = final
    if effect:
        parts["adapter effect"] = effect
    cap = cfg.budget.max_calls
    return CallEstimate(
        {k: int(v) for k, v in parts.items()},
        cap,
        {k: math.ceil(v) for k, v in kinds.items()},
        generation=train_gen + val_gen,
        outer_step=step_train + step_val,
        outer_step_bound=bound if outer.enabled else step_val,
        reserve=min(final, cap // 2) if cap and cfg.budget.reserve_final else 0,
        generations=G,
        outer_every=outer.every if outer.enabled else 0,
        skip_unaffordable=outer.skip_unaffordable,
    )


def _distillations(
    cfg: RunConfig, batch: float, validation: float, s_val: int, n_confirmation: int, c: int
) -> tuple[dict[str, int], float, float]:
    """The distillation rounds' calls as (parts, training, validation); ``batch``: the
    population scored on a batch, ``validation``: one raced validation. Per round: the best
    policy's fresh answers (none for the references' round), the population on the new weights
    scored on a batch, its best validated; at the end a winner on an adapter validated again
    with and without it on the selection and confirmation part (engine/distill_step's
    ``adapter_effect``; skipped when the calls have run out, so not held back for)."""
    rounds = distillation_rounds(cfg)
    if not rounds:
        return {}, 0.0, 0.0
    first = int(cfg.distill.schedule == "weights_first")
    fresh = (rounds - first) * cfg.distill.fresh_instances * c
    scored = rounds * batch
    validated = rounds * cfg.distill.validate_top * validation
    effect = 2 * (s_val + n_confirmation) * c
    parts = {"distillations": math.ceil(fresh + scored + validated), "adapter effect": effect}
    return parts, fresh + scored, validated + effect


def distillation_rounds(cfg: RunConfig) -> int:
    """The distillation rounds a run of ``cfg`` is due: the references' round before
    generation 1 under ``weights_first``, then those ``DistillConfig.due_after`` schedules,
    none after the last generation (coevolution.py)."""
    d = cfg.distill
    rounds = int(d.enabled and d.schedule == "weights_first")
    for g in range(1, cfg.inner.generations):
        rounds += d.due_after(g, rounds)
    return rounds


def calls_text(backend: Any, cached: Any = 0, expected: Any = None) -> str:
    """``backend calls 51 + 12 cached/~161``: the one count of calls (what the backend
    answered, what ``budget.max_calls`` caps), the cache's answers beside it (issue 51)."""
    text = f"backend calls {backend}"
    if cached:
        text += f" + {cached} cached"
    return text + (f"/~{expected}" if expected else "")


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


class Progress:
    """The run's expected calls and the measured pace, for the ETA (issue 51). Only backend
    calls are timed: the pace is the wall time of this session's stretches of work over the
    backend calls made in them, apart for each kind of call (``TRAINING``, ``VALIDATION``:
    a validation meeting is several times longer than a training one, and one pace for both
    was off by about 2x). A stretch the cache answered costs its (short) wall time and counts
    no call, so a warm cache never makes the ETA read "0s" while real calls are left; the calls
    still expected are priced at the backend's pace (the cache may answer some: an ETA that
    errs long). ``switch`` starts a stretch; every method takes the budget's counters now
    (backend calls, and backend calls plus cached answers) and the clock, so it can be tested
    without a run."""

    MIN_CALLS = 4  # backend calls of this session before a pace is given

    def __init__(
        self,
        expected_calls: int,
        kinds: dict[str, int] | None = None,
        cap: int | None = None,
        backend_at_start: int = 0,
        answered_at_start: int = 0,
    ) -> None:
        self.expected_calls = expected_calls
        self.kinds = dict(kinds or {TRAINING: expected_calls})
        self.cap = cap
        self.backend_at_start = backend_at_start
        self.answered_at_start = answered_at_start
        self.seconds: dict[str, float] = {}  # closed stretches, by kind
        self.calls: dict[str, int] = {}  # their backend calls
        self.answered: dict[str, int] = {}  # their backend calls and cached answers
        self.kind: str | None = None  # the open stretch
        self._since = (0.0, backend_at_start, answered_at_start)
        self._lock = threading.Lock()

    def switch(self, kind: str, backend: int, answered: int, now: float) -> None:
        """A stretch of ``kind`` starts now (the open one is closed)."""
        with self._lock:
            self.seconds, self.calls, self.answered = self._measured(backend, answered, now)
            self.kind, self._since = kind, (now, backend, answered)

    def _measured(
        self, backend: int, answered: int, now: float
    ) -> tuple[dict[str, float], dict[str, int], dict[str, int]]:
        """The stretches' seconds, backend calls and answers by kind, the open one included."""
        seconds, calls, done = dict(self.seconds), dict(self.calls), dict(self.answered)
        if self.kind is not None:
            t, b, a = self._since
            seconds[self.kind] = seconds.get(self.kind, 0.0) + max(0.0, now - t)
            calls[self.kind] = calls.get(self.kind, 0) + backend - b
            done[self.kind] = done.get(self.kind, 0) + answered - a
        return seconds, calls, done

    def seconds_per_call(self, backend: int, answered: int, now: float) -> float | None:
        """This session's wall seconds per backend call, all kinds together (None before
        ``MIN_CALLS`` backend calls)."""
        with self._lock:
            seconds, calls, _ = self._measured(backend, answered, now)
        n = sum(calls.values())
        return sum(seconds.values()) / n if n >= self.MIN_CALLS else None

    def eta_s(self, backend: int, answered: int, now: float) -> float | None:
        """Seconds left: the calls still expected of each kind at that kind's pace (the
        overall pace for a kind not measured yet); None before ``MIN_CALLS`` backend calls."""
        with self._lock:
            seconds, calls, done = self._measured(backend, answered, now)
        n = sum(calls.values())
        if n < self.MIN_CALLS:
            return None
        overall = sum(seconds.values()) / n
        total = sum(self.kinds.values()) or 1
        left = {  # a resume's earlier calls are spread over the kinds by their shares
            k: max(0.0, e - done.get(k, 0) - self.answered_at_start * e / total)
            for k, e in self.kinds.items()
        }
        if self.cap is not None:  # the cap stops the run: no more backend calls than it allows
            room = max(0, self.cap - backend)
            if sum(left.values()) > room:
                scale = room / sum(left.values())
                left = {k: v * scale for k, v in left.items()}
        pace = {
            k: seconds[k] / calls[k] if calls.get(k, 0) >= self.MIN_CALLS else overall for k in left
        }
        return sum(left[k] * pace[k] for k in left)
