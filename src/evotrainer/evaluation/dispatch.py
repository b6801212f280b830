"""How the evaluator's jobs reach the LLM (the evaluator's ``_dispatch`` runs them; the parts
here need no evaluator).

- **Groups.** When the client decodes several prompts together (``batch_size`` > 1: the
  embedded backend's multi-sequence decoding) and the task is single-turn, the jobs in
  instance-major order (one instance's jobs side by side: their prompts share the transcript)
  are cut into groups of at most ``batch_size`` prompts, split evenly; a group may span
  instances. Otherwise every job is its own unit.
- **Runners.** The units go through the evaluator's runner: one after another (SerialRunner),
  on threads (ThreadRunner, the Ray runner), or as coroutines on the LLM event loop
  (AsyncRunner, for HTTP backends: ``amap``).
- **Stored as finished.** Each record goes into the evaluator's store the moment it is scored,
  so a BudgetExceeded (or Ctrl-C) in the middle of a batch keeps every finished rollout.
- **In flight once.** Two threads evaluating the same (policy, instance) pair at the same time
  (concurrent harness trials share the evaluator) make one request: the second waits for the
  first's record (or its error).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import Instance

Job = tuple[PolicyGenome, Instance]
Key = tuple[str, str]


def key_of(job: Job) -> Key:
    return (job[0].id, job[1].id)


def units(jobs: Sequence[Job], batch_size: int) -> list[list[Job]]:
    """The jobs in instance-major order, cut into groups of at most ``batch_size`` (split
    evenly: 10 prompts with batch_size 8 are two groups of 5); single jobs when batch_size is 1.
    A group may span instances (the decoder prefills each meeting's transcript once and keeps it
    for the next group), so a racing rung's few policies on each of several meetings fill the
    batch instead of decoding in groups of one to three."""
    if batch_size <= 1 or not jobs:
        return [[j] for j in jobs]
    order: dict[str, list[Job]] = {}
    for job in jobs:  # instance-major: an instance's jobs side by side, in first-seen order
        order.setdefault(job[1].id, []).append(job)
    flat = [j for run in order.values() for j in run]
    n = -(-len(flat) // batch_size)  # groups
    size, extra = divmod(len(flat), n)
    out: list[list[Job]] = []
    start = 0
    for g in range(n):
        end = start + size + (g < extra)
        out.append(flat[start:end])
        start = end
    return out


class InFlight:
    """(policy id, instance id) -> the future of its record, while some thread evaluates it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: dict[Key, Future[Any]] = {}

    def claim(self, jobs: Sequence[Job]) -> tuple[list[Job], list[Future[Any]]]:
        """Split ``jobs`` into those this caller evaluates and the futures of those another
        thread is evaluating already."""
        mine: list[Job] = []
        theirs: list[Future[Any]] = []
        with self._lock:
            for job in jobs:
                fut = self._futures.get(key_of(job))
                if fut is not None:
                    theirs.append(fut)
                else:
                    self._futures[key_of(job)] = Future()
                    mine.append(job)
        return mine, theirs

    def finish(self, key: Key, exc: BaseException | None = None) -> None:
        with self._lock:
            fut = self._futures.pop(key, None)
        if fut is not None and not fut.done():
            if exc is None:
                fut.set_result(None)
            else:
                fut.set_exception(exc)
