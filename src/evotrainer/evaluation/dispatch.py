"""How the evaluator's jobs reach the LLM.

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
from typing import TYPE_CHECKING, Any

from evotrainer.errors import BudgetExceeded
from evotrainer.llm.base import batch_size_of

if TYPE_CHECKING:
    from evotrainer.evaluation.evaluator import EvalRecord, Evaluator
    from evotrainer.policy.genome import PolicyGenome
    from evotrainer.types import Instance

Job = tuple["PolicyGenome", "Instance"]
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


def run(evaluator: Evaluator, jobs: Sequence[Job]) -> None:
    """Evaluate ``jobs``, storing every record in ``evaluator.store`` as it is made."""
    mine, theirs = evaluator.in_flight.claim(jobs)
    error: BaseException | None = None
    try:
        if mine:
            _run_mine(evaluator, mine)
    except BaseException as exc:
        error = exc
        raise
    finally:
        for job in mine:  # whatever was not stored failed with this run's error
            if key_of(job) not in evaluator.store:
                evaluator.in_flight.finish(key_of(job), error or BudgetExceeded("not evaluated"))
    for fut in theirs:
        fut.result()  # raises what stopped the other thread (BudgetExceeded ...)


def _run_mine(evaluator: Evaluator, jobs: Sequence[Job]) -> None:
    batch = batch_size_of(evaluator.llm) if evaluator.single_turn else 1
    groups = units(jobs, batch)
    amap = getattr(evaluator.runner, "amap", None)
    if amap is not None and evaluator.single_turn and all(len(g) == 1 for g in groups):

        async def one(group: list[Job]) -> None:
            _store(evaluator, group[0], await evaluator._ajob(group[0]))

        amap(one, groups)
    else:
        evaluator.runner.map(lambda group: _run_group(evaluator, group), groups)


def _run_group(evaluator: Evaluator, group: list[Job]) -> None:
    if len(group) == 1:
        _store(evaluator, group[0], evaluator._job(group[0]))
        return
    if evaluator.guard is not None:
        evaluator.guard.check()
    for job, r in zip(group, evaluator.rollouts(group), strict=True):
        if isinstance(r, BudgetExceeded):
            raise r
        _store(evaluator, job, evaluator.record(job[0], job[1], r))


def _store(evaluator: Evaluator, job: Job, record: EvalRecord) -> None:
    evaluator.store[key_of(job)] = record
    evaluator.in_flight.finish(key_of(job))
