"""The type of every field of a checkpoint's state (engine/state.py writes it), checked before
any of it is loaded.

A checkpoint passes its checksum whatever it holds (the checksum is not a signature), and
``plain.check_shape`` compares it with a fresh run's state, which has nothing in its lists and
maps and None where an optional part is off: a list where a policy id belongs (``initial``), a
text where a number belongs in a validation row, passed those checks and crashed the run later,
far from the file (issue 50, found by tests/test_fuzz.py). These pydantic models say what each
field is, strictly (no "3" for 3, no 1 for True); ``check_checkpoint`` raises TypeError naming
the first fields that are not (``state.initial[0]: input should be a valid string (got a
list)``). A resume checks the checkpoint it reads first of all (``checked_checkpoint``: a
CheckpointError naming the file and the field), before any other part of it is used.

Keys a field does not list are ignored (an older checkpoint's leftovers are not read). The
learned defences' fitted models and CMA-ES's internals are objects here: their own loaders
check them (``defences/``, ``loops/cma_es.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evotrainer.errors import CheckpointError

Number = float  # strict: an int or a float (NaN and infinities as JSON writes them), not a bool
Metric = float | bool | None  # a metric's value in a validation row (None: not applicable)


class _Part(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


class LineageState(_Part):
    parents: list[str] = []
    operator: str = "seed"
    generation: int = 0
    note: str = ""


class DecodingState(_Part):
    repeat_penalty: Number = 1.0
    frequency_penalty: Number = 0.0
    presence_penalty: Number = 0.0
    max_tokens: int | None = None
    stop: list[str] = []


class LoopCutState(_Part):
    enabled: bool = False
    collapse_runs: bool = True
    drop_repeats: bool = True
    seen_share: Number = 1.0
    cut_ngram: int = 0
    drop_blanks: bool = False


class PolicyState(_Part):
    id: str | None = None
    name: str = ""
    components: dict[str, str]
    lineage: LineageState | None = None
    adapter: str | None = None
    decoding: DecodingState | None = None
    postprocess: LoopCutState | None = None


class HarnessState(_Part):
    id: str | None = None
    difficulty: Number
    weights: dict[str, Number]
    task_mix: dict[str, Number] | None = None
    real_share: Number = 0.0
    operator: str = "initial"
    parent: str | None = None
    note: str = ""
    genes: dict[str, Number] = {}


class FitnessState(_Part):
    policy_id: str
    fitness: Number
    components: dict[str, Number]
    n: int
    errors: int = 0
    feedback: str = ""


class OperatorStatsState(_Part):
    tried: int = 0
    produced: int = 0
    rejected: int = 0
    improved: int = 0


# random.Random's state as rng_state writes it: [version, the 625 words, gauss or None]
RandomState = tuple[int, list[int], Number | None]


class InnerState(_Part):
    generation: int
    population: list[PolicyState]
    fitness: dict[str, FitnessState]
    seen: list[str]
    op_stats: dict[str, OperatorStatsState]
    rng: RandomState
    protected: str | None = None
    moves: list[tuple[str, str]] = []


class ArchiveEntryState(_Part):
    policy: PolicyState
    harness: HarnessState
    s_val: Number
    generation: int
    outer_step: int
    objectives: dict[str, Number] = {}


class DecisionState(_Part):
    step: int
    chosen: HarnessState
    s_vals: list[Number | None]
    variants: list[HarnessState]
    reason: str


class OuterState(_Part):
    current: HarnessState
    velocity: dict[str, Number]
    step: int
    s_val_history: list[Number]
    decisions: list[DecisionState]
    archive: list[ArchiveEntryState]
    explore: Number
    rng: RandomState
    cma: dict[str, Any] | None = None


class DistillState(_Part):
    rounds: int = 0
    due: bool = False
    records: list[dict[str, Any]] = []
    last_pairs: list[dict[str, Any]] = []


class LearnedState(_Part):
    discriminator: dict[str, Any] | None = None
    learned: dict[str, Any] | None = None
    pairs_seen: list[list[str | int]] = []


class ValidationIdsState(_Part):
    selection: list[str] = []
    confirmation: list[str] = []


class MonitorState(_Part):
    generations: list[tuple[int, Number, dict[str, Number], dict[str, Number]]]
    validations: list[tuple[int, Number, Number]]
    weights: list[dict[str, Number]]
    raised: list[tuple[str, str]]


class SurrogateState(_Part):
    rows: list[tuple[list[Number], Number]] = []
    pairs: list[tuple[Number, Number]] = []
    counts: tuple[int, int, int, int] = (0, 0, 0, 0)


class TurnState(_Part):
    output: str
    observation: str | None = None


class RowState(BaseModel):
    """One validation row: the instance, what the policy answered, its rewards, the metric's
    values (any other key is a metric: a number, a boolean or None) and what a metric said of
    the answer (``feedback``: a user's metric function's text, by metric key)."""

    model_config = ConfigDict(strict=True, extra="allow")
    __pydantic_extra__: dict[str, Metric] = Field(init=False)

    instance_id: str
    length_bucket: str
    truncated: bool = False
    error: str | None = None
    output: str = ""
    raw_output: str | None = None  # the answer before the policy's loop cut
    rewards: dict[str, Number] = {}
    reference: str | None = None
    turns: list[TurnState] = []
    feedback: dict[str, str] = {}  # a metric's words on the answer, by metric key


class ValidationResultState(_Part):
    s_val: Number
    aggregates: dict[str, Number | None]
    per_instance: list[RowState]
    n: int
    truncation: str | None = None


class BudgetState(_Part):
    """The budget's counters (llm/budget.py ``Budget.COUNTERS``): whole numbers but the
    seconds."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    backend_calls: int = 0
    backend_tokens: int = 0
    llm_seconds: Number = 0.0
    cache_hits: int = 0
    cache_misses: int = 0
    llm_errors: int = 0


class RunStateFile(_Part):
    """A checkpoint's ``state`` (engine/state.py's ``state_dict``)."""

    inner: InnerState
    outer: OuterState
    epoch: int
    drawn: HarnessState | None = None
    outer_step: int
    outer_due: bool = False
    distill: DistillState | None = None
    trial_generations: int
    initial: tuple[str, Number] | None
    budget: BudgetState
    elapsed_s: Number
    cpu_s: Number | None = None  # checkpoints from before the field lack it
    policies: dict[str, PolicyState]
    learned: LearnedState | None = None
    rejected: dict[str, list[str]] = {}
    train_ids: list[str] = []
    validation_ids: ValidationIdsState | None = None
    data_sha256: dict[str, str] | None = None
    race: tuple[int, int] = (0, 0)
    monitor: MonitorState | None = None
    surrogate: SurrogateState | None = None
    suspects: list[str] = []
    validation_memo: dict[str, ValidationResultState]
    validation_raced_out: list[str] = []


def check_checkpoint(state: Any) -> None:
    """TypeError naming the fields (up to three) of ``state`` that are not of their type."""
    try:
        RunStateFile.model_validate_json(json.dumps(state))
    except ValidationError as exc:
        raise TypeError(_explain(exc)) from None


def checked_checkpoint(state: Any, path: Path) -> None:
    """``check_checkpoint`` as a CheckpointError naming the file ``path``."""
    try:
        check_checkpoint(state)
    except TypeError as exc:
        raise CheckpointError(f"{path}: not a checkpoint this version can read: {exc}") from None


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = "state" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"] if not _member(p)
        )
        got = err.get("input")
        parts.append(f"{where}: {err['msg'].lower()} (got {_kind(got)})")
    more = exc.error_count() - 3
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _member(step: Any) -> bool:
    """Whether a step of an error's location names the member of a union pydantic tried (a
    type, not a field: ``float``, ``list[int]``, ``HarnessState``)."""
    return isinstance(step, str) and (
        step in ("float", "bool", "int", "str", "none") or "[" in step or step.endswith("State")
    )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names: dict[type, str] = {str: "a text", list: "a list", dict: "an object"}
    return names.get(type(value), "something else")
