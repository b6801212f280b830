"""Resume: what ``CoEvolution.resume`` needs besides the checkpoint (run/checkpoint.py) and the
state it restores (engine/state.py): the settings the caller sets anew, the generations a run
made (``resume --more-generations``), and the population's rollouts re-read on the current
batch. The data is checked by content (run/data_identity.py); the calls a resume makes to
re-read the population count against the budget."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evotrainer.config import RunConfig, config_from_dict, set_value
from evotrainer.engine.components import Components
from evotrainer.engine.generation import draw_batch, fitness_of
from evotrainer.engine.state import RunState
from evotrainer.errors import BudgetExceeded, CheckpointError
from evotrainer.llm.budget import Budget

MAX_COUNT = 10**15  # a counter read from a run directory above this is not believed


def with_settings(config: RunConfig, settings: Mapping[str, Any] | None, source: Path) -> RunConfig:
    """``config`` with ``settings`` (dotted keys -> values, taken as they are) applied."""
    if not settings:
        return config
    data = config.model_dump(mode="json")
    for key, value in settings.items():
        set_value(data, key, value)
    return config_from_dict(data, f"{source} + the command line")


def generations_done(saved: Any, run_dir: Path) -> int:
    """The generations a run made, from its newest checkpoint (``resume --more-generations``)."""
    if saved is None:
        raise CheckpointError(
            f"{run_dir}: no checkpoint to continue from; `evotrainer resume {run_dir}` without "
            "--more-generations starts it again"
        )
    try:
        return int(saved[0]["inner"]["generation"])
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(f"{saved[1]}: no generation count in the checkpoint") from None


def counted_at_finish(c: Components, run_dir: Path) -> None:
    """A finished run continued (``resume --more-generations``): its last checkpoint was
    written before the final validation and the confirmation, whose backend calls only
    summary.json counted. The backend counters go on from there (the larger of the two), so
    the backend calls a run reports count every call the backend answered, once, across
    resumes (issue 51). summary.json is data: only whole, finite, non-negative numbers are
    taken."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return
    runtime = summary.get("runtime") if isinstance(summary, dict) else None
    if not isinstance(runtime, dict):
        return
    now = c.budget.snapshot()
    later = {}
    for k in Budget.COUNTERS:
        v = runtime.get(k)
        if k in Budget.REQUEST_COUNTERS or isinstance(v, bool) or not isinstance(v, int | float):
            continue
        if math.isfinite(v) and 0 <= v < MAX_COUNT and v > now[k]:
            later[k] = v
    c.budget.restore(later)


def reread_population(c: Components, s: RunState, spent: dict[str, Any]) -> BudgetExceeded | None:
    """What an uninterrupted run holds in memory: the population's rollouts on the current
    batch. Answered by the cache when it is on; calls that reach the backend count against
    the budget (``spent``: the counters the checkpoint restored), so the server never sees
    more than ``budget.max_calls`` across a resume. The requests' counters stay those of
    the checkpoint (they are a function of the run). A cap reached here is returned: it ends
    the run at its start (``run()``)."""
    stopped = None
    try:
        batch = draw_batch(c, s, s.epoch, s.drawn)
        fitness_of(c, s, s.inner.population, batch, s.harness, drawn=s.drawn)
    except BudgetExceeded as exc:
        stopped = exc
    c.budget.restore({k: spent[k] for k in Budget.REQUEST_COUNTERS if k in spent})
    return stopped
