"""Runners: how a batch of independent jobs is executed. Injected into the evaluator (DEAP's
``toolbox.map`` idea), so parallelism is a choice, not a rewrite. ``map`` preserves order.

- SerialRunner: one job at a time, in the given order. Right for the embedded model, where the
  order (all policies on one instance, back to back) is what makes KV-cache prefix reuse work.
- ThreadRunner: a thread pool, for HTTP backends that serve many requests at once.
A Ray runner fits the same protocol (a ``map`` over remote tasks); it is not built yet.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Runner(Protocol):
    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]: ...


class SerialRunner:
    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return [fn(x) for x in items]


class ThreadRunner:
    def __init__(self, workers: int = 4) -> None:
        self.workers = max(1, workers)

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if len(items) <= 1 or self.workers == 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(fn, items))


def runner_for(backend_model_id: str, concurrency: int) -> Runner:
    """Serial for the embedded model (prefix reuse needs order), threads for servers."""
    if backend_model_id.startswith("openai:"):
        return ThreadRunner(concurrency)
    return SerialRunner()
