"""Typed events. Algorithms never print: the driver emits events and observers consume them
(the rich console, the events.jsonl log, ``--json`` on stdout, the report, trackers)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from evotrainer.run.checkpoint import open_appendable, strict_json


@dataclass(frozen=True)
class Event:
    type: str
    data: dict[str, Any]
    t: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "t": round(self.t, 3), **self.data}


# event types, in the order a run emits them
RUN_STARTED = "run_started"
TRACKING = "tracking"  # where an experiment tracker logs the run (MLflow run id, URL ...)
WARM_START = "warm_start"  # policies and harness seeded from an earlier run (init_from)
VALIDATION_SET = "validation_set"  # which validation data (real or synthetic fallback)
ESTIMATE = "estimate"  # the LLM calls the run is expected to make (run/estimate.py)
GENERATION = "generation"  # one inner generation done
THREADS = "threads"  # the embedded model's CPU threads changed (decided again from free cores)
VALIDATION_STARTED = "validation_started"  # policies start meeting the validation meetings
VALIDATION = "validation"  # a policy validated: s_val
TRIAL_STARTED = "trial_started"  # a harness variant's short trial run starts
TRIAL_FINISHED = "trial_finished"
HUMAN_FEEDBACK = "human_feedback"  # new ratings read (review), human model refitted
OUTER_STEP = "outer_step"  # harness variants trialled and a decision taken
OUTER_STEP_SKIPPED = "outer_step_skipped"  # the calls left cannot pay for an outer step
ROLLBACK = "rollback"
REINJECT = "reinject"  # the best validated policy put back into the population
ALERT = "alert"  # the proxy-gap monitor suspects reward hacking, or oscillation
CONSTITUTION = "constitution_violation"  # a policy was rejected
DEFENCE_REFIT = "defence_refit"  # discriminator / learned reward model refitted (calibration)
CONFIRMATION = "confirmation"  # winner vs best seed on the held-out confirmation meetings
DISTILL_STARTED = "distill_started"  # training pairs chosen (kept and dropped, and why)
DISTILL_PROGRESS = "distill_progress"  # one optimizer step of the adapter's training
DISTILL_FINISHED = "distill_finished"  # the adapter trained and kept or set aside
TRAINING_SET = "training_set"  # where training batches come from (real pool, synthetic)
BUDGET_EXHAUSTED = "budget_exhausted"
CHECKPOINT = "checkpoint"
RUN_RESUMED = "run_resumed"
RUN_FINISHED = "run_finished"
RUN_FAILED = "run_failed"  # stopped by an error (too many failed LLM answers, no valid policy)
RUN_INTERRUPTED = "run_interrupted"  # Ctrl-C (KeyboardInterrupt): no summary says completed
WARNING = "warning"
OBSERVER_DETACHED = "observer_detached"  # an observer raised: reported and detached
# what the clock decides, for a display, not the run's record: events.jsonl leaves them out,
# ``--json`` streams them (issue 51)
PHASE = "phase"  # a stretch of work starts (the first population, a validation, a trial ...)
PROGRESS = "progress"  # calls answered so far and the ETA, at most once a second
TRANSIENT = frozenset({PHASE, PROGRESS})


Observer = Callable[[Event], None]  # anything called with each event


def notify(observers: list[Observer], event: Event) -> None:
    """Give ``event`` to every observer. An observer that raises is reported (a line on stderr
    and an ``observer_detached`` event to the others) and detached: observers cannot end a run.
    KeyboardInterrupt and other BaseExceptions still propagate."""
    for obs in list(observers):
        try:
            obs(event)
        except Exception as exc:  # noqa: BLE001 - any observer bug: report and detach
            if obs in observers:
                observers.remove(obs)
            name = getattr(obs, "__qualname__", None) or type(obs).__name__
            error = f"{type(exc).__name__}: {exc}"
            sys.stderr.write(
                f"warning: observer {name} raised {error} on a {event.type!r} event and was "
                "detached; the run goes on\n"
            )
            notify(
                observers,
                Event(OBSERVER_DETACHED, {"observer": name, "error": error, "event": event.type}),
            )


class JsonlLog:
    """Appends every event to events.jsonl (flushed per line, so a kill loses nothing logged).
    A line torn by a kill is ended before the next event is appended; the file is never opened
    through a symlink nor appended to through a hard link; non-finite numbers are written as
    null (strict JSON)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        fd = open_appendable(path)
        self._fh = os.fdopen(fd, "a", encoding="utf-8")
        size = os.fstat(fd).st_size
        if size:
            with path.open("rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    self._fh.write("\n")  # a kill tore the last line: keep it apart
                    self._fh.flush()

    def __call__(self, event: Event) -> None:
        if event.type in TRANSIENT:  # the clock's, not the run's: kept out of the record
            return
        self._fh.write(_line(event) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


class JsonStdout:
    """``evotrainer run --json``: events as JSON lines on stdout, for other tools: every event
    events.jsonl records, and the transient ``phase`` and ``progress`` events besides."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def __call__(self, event: Event) -> None:
        self.stream.write(_line(event) + "\n")
        self.stream.flush()


def _line(event: Event) -> str:
    doc = json.loads(json.dumps(event.to_json(), default=_default))
    return json.dumps(strict_json(doc), allow_nan=False)


def _default(obj: Any) -> Any:
    if hasattr(obj, "to_json"):
        return obj.to_json()
    if hasattr(obj, "__dataclass_fields__"):
        return asdict(obj)
    if isinstance(obj, set | tuple):
        return list(obj)
    return str(obj)


def read_events(path: Path) -> list[dict[str, Any]]:
    """Read events.jsonl, skipping what is not an event: a torn last line (a kill mid-write),
    a line that is not UTF-8 or not JSON, JSON nested too deeply, a value that is not an
    object."""
    out: list[dict[str, Any]] = []
    if not path.exists():
        return out
    for raw in path.read_bytes().splitlines():
        try:
            event = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            continue
        if isinstance(event, dict):
            out.append(event)
    return out
