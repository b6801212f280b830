"""Runners: how a batch of independent jobs is executed. Injected into the evaluator (DEAP's
``toolbox.map`` idea), so parallelism is a choice, not a rewrite. ``map`` preserves order.

- SerialRunner: one job at a time, in the given order. Right for the embedded model, where the
  order (all policies on one instance, back to back) is what makes KV-cache prefix reuse work.
- ThreadRunner: a thread pool, for clients that serve many requests at once but only offer a
  blocking call (the Ray pool: each thread waits on one remote worker).
- AsyncRunner: coroutines on the LLM event loop (``amap``), at most ``concurrency`` at a time,
  for HTTP backends: the evaluator awaits the async LLM stack end to end.
- The Ray runner (``runner: ray``, llm/ray_pool.py) is a client plus threads: cache and
  budget stay on the driver, the backend calls go to workers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from evotrainer.llm.aio import BackgroundLoop, shared_loop
from evotrainer.llm.base import parallel_requests_of

T = TypeVar("T")
R = TypeVar("R")
RUNNERS = ("auto", "serial", "threads", "async", "ray")


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


class AsyncRunner:
    """``amap(afn, items)`` runs ``afn(item)`` for every item on the LLM event loop, at most
    ``concurrency`` at once; every item runs to its end, then the first exception (in item
    order) is raised. ``map`` (for blocking functions) uses threads."""

    def __init__(self, concurrency: int = 8, loop: BackgroundLoop | None = None) -> None:
        self.concurrency = max(1, concurrency)
        self.loop = loop or shared_loop()

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return ThreadRunner(self.concurrency).map(fn, items)

    def amap(self, afn: Callable[[T], Awaitable[R]], items: Sequence[T]) -> list[R]:
        async def all_of() -> list[Any]:
            sem = asyncio.Semaphore(self.concurrency)

            async def one(x: T) -> R:
                async with sem:
                    return await afn(x)

            return await asyncio.gather(*(one(x) for x in items), return_exceptions=True)

        results = self.loop.run(all_of())
        for r in results:
            if isinstance(r, BaseException):
                raise r
        return results


def runner_for(client: Any, kind: str = "auto") -> Runner:
    """The runner for an LLM client: serial for one request at a time (the embedded model:
    prefix reuse needs order), else async (clients with a native ``acomplete``: HTTP) or
    threads (the Ray pool), as wide as the client's ``parallel_requests``."""
    width = parallel_requests_of(client)
    if kind == "serial" or (kind == "auto" and width <= 1):
        return SerialRunner()
    if kind == "threads" or kind == "ray":
        return ThreadRunner(width)
    if kind == "async" or getattr(client, "native_async", False):
        return AsyncRunner(width)
    return ThreadRunner(width)
