"""Typed events. Algorithms never print: the driver emits events and observers consume them
(the rich console, the events.jsonl log, ``--json`` on stdout, the report, trackers)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO


@dataclass(frozen=True)
class Event:
    type: str
    data: dict[str, Any]
    t: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "t": round(self.t, 3), **self.data}


# event types, in the order a run emits them
RUN_STARTED = "run_started"
VALIDATION_SET = "validation_set"  # which validation data (real or synthetic fallback)
GENERATION = "generation"  # one inner generation done
VALIDATION_STARTED = "validation_started"  # policies start meeting the validation meetings
VALIDATION = "validation"  # a policy validated: s_val
TRIAL_STARTED = "trial_started"  # a harness variant's short trial run starts
TRIAL_FINISHED = "trial_finished"
OUTER_STEP = "outer_step"  # harness variants trialled and a decision taken
ROLLBACK = "rollback"
REINJECT = "reinject"  # the best validated policy put back into the population
ALERT = "alert"  # the proxy-gap monitor suspects reward hacking, or oscillation
CONSTITUTION = "constitution_violation"  # a policy was rejected
DEFENCE_REFIT = "defence_refit"  # discriminator / learned reward model refitted (calibration)
CONFIRMATION = "confirmation"  # winner vs best seed on the held-out confirmation meetings
TRAINING_SET = "training_set"  # where training batches come from (real pool, synthetic)
BUDGET_EXHAUSTED = "budget_exhausted"
CHECKPOINT = "checkpoint"
RUN_RESUMED = "run_resumed"
RUN_FINISHED = "run_finished"
WARNING = "warning"


class Observer(Protocol):
    def __call__(self, event: Event) -> None: ...


class JsonlLog:
    """Appends every event to events.jsonl (flushed per line, so a kill loses nothing logged)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = path.open("a", encoding="utf-8")

    def __call__(self, event: Event) -> None:
        self._fh.write(json.dumps(event.to_json(), default=_default) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


class JsonStdout:
    """``evotrainer run --json``: events as JSON lines on stdout, for other tools."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def __call__(self, event: Event) -> None:
        self.stream.write(json.dumps(event.to_json(), default=_default) + "\n")
        self.stream.flush()


def _default(obj: Any) -> Any:
    if hasattr(obj, "to_json"):
        return obj.to_json()
    if hasattr(obj, "__dataclass_fields__"):
        return asdict(obj)
    if isinstance(obj, set | tuple):
        return list(obj)
    return str(obj)


def read_events(path: Path) -> list[dict[str, Any]]:
    """Read events.jsonl, skipping a torn last line (a kill mid-write)."""
    out = []
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out
