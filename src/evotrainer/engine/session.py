"""This session's observers and clock, components of a run (engine/components.py): ``Events``
gives every observer each typed event (one that raises is detached: run/events.py), ``Clock``
keeps this process's times and the expected calls. engine/telemetry.py says what a step
reports through them."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evotrainer.run import events as ev
from evotrainer.run.estimate import Progress

Observer = ev.Observer


def finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


class Events:
    """The run's observers; ``emit`` gives each an event (a raising one is detached)."""

    def __init__(self, observers: Sequence[Observer] = ()) -> None:
        self.observers: list[Observer] = list(observers)
        self._lock = threading.RLock()

    def emit(self, type_: str, **data: Any) -> None:
        with self._lock:  # concurrent trials emit from threads
            ev.notify(self.observers, ev.Event(type_, data))  # a raising observer is detached

    def on_violation(self, policy_id: str, violations: list[Any]) -> None:
        """A policy broke the constitution (FitnessJudge's ``on_violation``)."""
        self.emit(
            ev.CONSTITUTION,
            policy_id=policy_id,
            rules=sorted({v.rule for v in violations}),
            detail="; ".join(map(str, violations)),
        )


@dataclass
class Clock:
    """This process's times: ``t0`` (since the run was built or its state loaded; the run's
    elapsed time adds the checkpoint's ``elapsed_s``), ``session_t0`` (since the estimate:
    the ETA's pace and ``budget.max_wall_s``) and the expected calls (``progress``)."""

    t0: float = field(default_factory=time.perf_counter)
    cpu0: float = field(default_factory=time.process_time)  # this process's CPU at t0
    session_t0: float | None = None
    progress: Progress | None = None
    # the stretch of work under way (engine/telemetry.py's ``phase``): its name, kind, the
    # calls it may make and the answers counted when it started; when progress last ticked
    phase: dict[str, Any] = field(default_factory=dict)
    last_tick: float = 0.0
    calls_before: int | None = None  # a resume: the backend calls of the sessions before it

    def restart(self) -> None:
        self.t0 = time.perf_counter()
        self.cpu0 = time.process_time()

    def since_start(self) -> float:
        return time.perf_counter() - self.t0

    def cpu_since_start(self) -> float:
        """The process's CPU seconds (every thread: the model's, training's) since ``t0``."""
        return time.process_time() - self.cpu0

    def session_seconds(self) -> float:
        start = self.session_t0 if self.session_t0 is not None else self.t0
        return time.perf_counter() - start
