"""LLM fakes for unit tests and throughput benchmarks. They ship with the package (like dspy's
DummyLM) so users can test their own tasks and reward components without a model.

Real calls are always explicit: nothing in EvoTrainer silently falls back to a fake.
"""

from __future__ import annotations

import asyncio
import importlib
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import entry_points
from typing import cast

from evotrainer.errors import LLMError, ModelSpecError
from evotrainer.llm.base import BaseLLM, BatchResult, Completion, SamplingParams
from evotrainer.types import Message


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class FunctionLLM(BaseLLM):
    """Answers with ``fn(messages, params)``. If ``fn`` raises LLMError, so does the fake (use it
    to simulate a failing server). Counts calls in ``.calls``."""

    def __init__(
        self,
        fn: Callable[[Sequence[Message], SamplingParams], str],
        model_id: str = "fake:function",
        context_size: int | None = 8192,
    ) -> None:
        self.fn = fn
        self.model_id = model_id
        self.context_size = context_size
        self.calls = 0
        self._lock = threading.Lock()

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        with self._lock:
            self.calls += 1
        text = self.fn(messages, params)
        prompt = sum(_approx_tokens(m.content) for m in messages)
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=_approx_tokens(text))


class ScriptedLLM(FunctionLLM):
    """Replays a fixed list of answers in order (cycling if ``cycle``), or raises once exhausted."""

    def __init__(
        self, responses: Iterable[str], cycle: bool = False, model_id: str = "fake:scripted"
    ):
        self._responses = list(responses)
        self._i = 0
        self._cycle = cycle
        super().__init__(self._next, model_id=model_id)

    def _next(self, messages: Sequence[Message], params: SamplingParams) -> str:
        if self._i >= len(self._responses):
            if not self._cycle or not self._responses:
                raise LLMError(f"ScriptedLLM ran out of answers after {self._i} calls")
            self._i = 0
        out = self._responses[self._i]
        self._i += 1
        return out


class EchoLLM(FunctionLLM):
    """Returns the last user message (truncated): a zero-latency backend for benchmarks."""

    def __init__(self, max_chars: int = 400) -> None:
        super().__init__(lambda m, p: m[-1].content[-max_chars:], model_id="fake:echo")


class BatchingLLM(FunctionLLM):
    """A FunctionLLM that says it decodes up to ``batch_size`` prompts together (like the
    embedded backend's batched decoding); records the size of every batch it was given."""

    def __init__(self, fn: Callable[[Sequence[Message], SamplingParams], str], batch_size: int = 8):
        super().__init__(fn, model_id="fake:batching")
        self.batch_size = batch_size
        self.batches: list[int] = []

    def complete_batch(
        self, requests: Sequence[Sequence[Message]], params: SamplingParams
    ) -> list[BatchResult]:
        with self._lock:
            self.batches.append(len(requests))
        return super().complete_batch(requests, params)


class ConcurrentLLM(FunctionLLM):
    """A FunctionLLM that serves ``parallel_requests`` requests at once, each after
    ``latency_s`` (an async sleep: ``native_async``); records the most served at once."""

    native_async = True

    def __init__(
        self,
        fn: Callable[[Sequence[Message], SamplingParams], str],
        parallel_requests: int = 4,
        latency_s: float = 0.01,
    ) -> None:
        super().__init__(fn, model_id="fake:concurrent")
        self.parallel_requests = parallel_requests
        self.latency_s = latency_s
        self.active = 0
        self.max_active = 0

    def _enter(self) -> None:
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)

    def _leave(self) -> None:
        with self._lock:
            self.active -= 1

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        self._enter()
        try:
            time.sleep(self.latency_s)
            return super().complete(messages, params)
        finally:
            self._leave()

    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        self._enter()
        try:
            await asyncio.sleep(self.latency_s)
            return super().complete(messages, params)
        finally:
            self._leave()


class LatencyLLM(FunctionLLM):
    """Answers like EchoLLM after ``latency_s`` seconds: a stand-in for a backend whose cost is
    waiting (benchmarks of concurrency and of the Ray runner)."""

    def __init__(self, latency_s: float, max_chars: int = 400) -> None:
        def answer(messages: Sequence[Message], params: SamplingParams) -> str:
            time.sleep(latency_s)
            return messages[-1].content[-max_chars:]

        super().__init__(answer, model_id=f"fake:latency={latency_s:g}")
        self.latency_s = latency_s


FAKE_SPECS = (
    "fake:echo, fake:minutes, fake:clerk, fake:inventing-clerk, fake:customer, "
    "fake:latency=<seconds>"
)
# fake:<name> backends a task provides (they know its prompts' layout), found as task plug-ins
# are (tasks/registry.py): an installed package adds its own under the entry-point group
FAKE_ENTRY_POINT_GROUP = "evotrainer.fakes"
TASK_FAKES = {
    "minutes": "evotrainer.tasks.meetings.fake:minutes_llm",
    "clerk": "evotrainer.tasks.dialogue.clerk:reference_clerk",
    "inventing-clerk": "evotrainer.tasks.dialogue.clerk:inventing_clerk",
    "customer": "evotrainer.tasks.dialogue.clerk:scripted_customer",
}


def fake_backend(name: str) -> FunctionLLM:
    """The backend of a ``fake:<name>`` model spec (no model, no server; for plumbing checks,
    tests and throughput measurements, never for scores that mean something):

    - ``echo``: answers with the end of its prompt (EchoLLM);
    - ``minutes``: plausible minutes written from the meeting's transcript, and a rewritten
      instruction for operator calls (tasks/meetings/fake.py; the benchmarks' fake);
    - ``clerk`` / ``inventing-clerk``: the dialogue task's rule-based reference clerk, and the
      same clerk making up every phone number, postcode and reference (tasks/dialogue/clerk.py);
    - ``customer``: an LLM-played customer that says exactly what it is told to (the dialogue
      task's ``user_model`` plumbing without a model);
    - ``latency=S``: an echo that answers after S seconds (LatencyLLM)."""
    if name == "echo":
        return EchoLLM()
    factory = _task_fake(name)
    if factory is not None:
        return factory()
    if name.startswith("latency="):
        return LatencyLLM(_seconds(name.partition("=")[2]))
    raise ModelSpecError(f"unknown fake backend {name!r}: {FAKE_SPECS}")


def _task_fake(name: str) -> Callable[[], FunctionLLM] | None:
    """The factory of the fake backend a task provides under ``name`` (an entry point of the
    group ``evotrainer.fakes``, or a built-in task's), None when there is none."""
    for ep in entry_points(group=FAKE_ENTRY_POINT_GROUP):
        if ep.name == name:
            return cast(Callable[[], FunctionLLM], ep.load())
    target = TASK_FAKES.get(name)
    if target is None:
        return None
    module, _, attr = target.partition(":")
    return cast(Callable[[], FunctionLLM], getattr(importlib.import_module(module), attr))


def _seconds(text: str) -> float:
    """The S of fake:latency=S: a finite number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and value >= 0):
        raise ModelSpecError(
            f"fake:latency={text}: the latency must be a number of seconds, 0 or more "
            "(e.g. fake:latency=0.05)"
        )
    return value
