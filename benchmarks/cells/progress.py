"""Signs of life in a long cell's log: every ``--log-every-calls`` real backend calls, the cell,
the calls so far and the seconds per call."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks import common as C
from evotrainer.llm.base import Completion, LLMClient, SamplingParams
from evotrainer.types import Message


class Progress:
    """Counts real backend calls of the current cell and logs every ``every`` of them, so a
    long cell shows it is alive in a nohup log."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.label = ""
        self.calls = 0
        self.t0 = time.perf_counter()

    def reset(self, label: str) -> None:
        self.label, self.calls, self.t0 = label, 0, time.perf_counter()

    def tick(self) -> None:
        self.calls += 1
        if self.every and self.calls % self.every == 0:
            dt = time.perf_counter() - self.t0
            C.log(
                f"  {self.label}: {self.calls} backend calls, {dt:.0f} s "
                f"({dt / self.calls:.1f} s/call)"
            )


class ProgressLLM:
    """A backend wrapper (below cache and budget: it sees real backend calls only) that
    reports each call to a ``Progress``."""

    def __init__(self, inner: LLMClient, progress: Progress) -> None:
        self.inner = inner
        self.progress = progress

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def context_size(self) -> int | None:
        return self.inner.context_size

    def __getattr__(self, name: str) -> Any:  # n_threads and the like
        return getattr(self.inner, name)

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        out = self.inner.complete(messages, params)
        self.progress.tick()
        return out

    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        import asyncio

        return await asyncio.to_thread(self.complete, messages, params)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()


def wrapper(progress: Progress) -> Callable[[LLMClient], LLMClient]:
    """A ``Bench.wrap_backend``: each client wrapped once (the same wrapper every time)."""
    wrappers: dict[int, ProgressLLM] = {}

    def wrap(llm: LLMClient) -> LLMClient:
        if id(llm) not in wrappers:
            wrappers[id(llm)] = ProgressLLM(llm, progress)
        return wrappers[id(llm)]  # type: ignore[return-value]

    return wrap
