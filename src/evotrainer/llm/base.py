"""The one LLM client interface every backend implements.

Messages go in; text, token usage and latency come out. Backends raise ``LLMError`` (or a
subclass) after their own retries; callers inside an evaluation catch it, record the error on the
rollout and score that example 0, so one bad request never ends a run.

Two optional capabilities, both plain attributes a wrapper passes on:
- ``batch_size`` > 1: ``complete_batch`` decodes that many prompts together (the embedded
  backend's multi-sequence decoding); the evaluator then hands it its prompts in groups, in
  instance-major order (the prompts of one instance share the transcript prefix);
- ``parallel_requests`` > 1: it serves that many requests at once (an HTTP server, Ray
  workers); the evaluator then sends requests concurrently (as coroutines when
  ``native_async``), and the operators of a generation and the trials of an outer step run
  concurrently.
``complete_batch`` returns one result per prompt, in order: a Completion or the error that prompt
met (errors are values there, so one bad prompt does not lose the others' answers).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from evotrainer.errors import EvoTrainerError, LLMError
from evotrainer.types import Message

# the model specs llm/spec.py's build_backend accepts (error messages name them)
VALID_FORMS = (
    "local:smollm2, local:smollm2-q4_0, local:/path/to/model.gguf, "
    "openai:<model-name> (with --base-url), or without a model fake:echo, fake:minutes, "
    "fake:clerk, fake:inventing-clerk, fake:customer, fake:latency=<seconds>"
)


@dataclass(frozen=True)
class SamplingParams:
    """Sampling settings; part of the cache key, so two runs with equal params share answers.

    The penalties are a policy's decoding genes (policy/decoding.py): ``repeat_penalty`` is
    llama.cpp's (1.0 = off; sent to a server as ``repeat_penalty`` and ``repetition_penalty``),
    ``frequency_penalty`` and ``presence_penalty`` OpenAI's (0 = off). They join the cache key
    only when set, so the keys of earlier answers stay valid."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 384
    seed: int | None = 0
    stop: tuple[str, ...] = ()
    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0

    def key(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "temperature": round(self.temperature, 6),
            "top_p": round(self.top_p, 6),
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "stop": list(self.stop),
        }
        for name, off in PENALTIES_OFF.items():
            value = getattr(self, name)
            if value != off:
                out[name] = round(value, 6)
        return out

    def penalties(self) -> dict[str, float]:
        """The penalties that are on (name -> value)."""
        return {n: getattr(self, n) for n, off in PENALTIES_OFF.items() if getattr(self, n) != off}


PENALTIES_OFF = {"repeat_penalty": 1.0, "frequency_penalty": 0.0, "presence_penalty": 0.0}


@dataclass(frozen=True)
class Completion:
    """What a backend returns. ``finish_reason`` is "stop" or "length" (hit max_tokens or the
    end of the context window)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str = "stop"
    cached: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


BatchResult = Completion | EvoTrainerError


@runtime_checkable
class LLMClient(Protocol):
    """Protocol of every backend and wrapper.

    ``model_id`` is a stable identity used in cache keys (e.g. ``local:SmolLM2-135M...gguf``).
    ``context_size`` is the context window in tokens, or None when unknown.
    ``complete`` raises LLMError/ContextOverflowError on failure; it never returns partial junk
    silently (a cut answer has ``finish_reason == "length"``).
    """

    model_id: str
    context_size: int | None

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion: ...

    async def acomplete(
        self, messages: Sequence[Message], params: SamplingParams
    ) -> Completion: ...

    def describe(self) -> dict[str, Any]: ...


class BaseLLM:
    """Convenience base: async via a worker thread, batches one prompt at a time, a generic
    description."""

    model_id: str = "base"
    context_size: int | None = None
    batch_size: int = 1
    parallel_requests: int = 1
    native_async: bool = False  # acomplete is a coroutine of its own, not a worker thread

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        raise NotImplementedError

    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        return await asyncio.to_thread(self.complete, messages, params)

    def complete_batch(
        self, requests: Sequence[Sequence[Message]], params: SamplingParams
    ) -> list[BatchResult]:
        """One result per prompt, in order; an LLMError is returned, not raised."""
        out: list[BatchResult] = []
        for messages in requests:
            try:
                out.append(self.complete(messages, params))
            except LLMError as exc:
                out.append(exc)
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "backend": type(self).__name__,
            "model": self.model_id,
            "context": self.context_size,
        }


def as_dicts(messages: Sequence[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def batch_size_of(client: Any) -> int:
    """How many prompts ``client`` decodes together (1 for clients without the capability)."""
    return max(1, int(getattr(client, "batch_size", 1) or 1))


def parallel_requests_of(client: Any) -> int:
    """How many requests ``client`` serves at once (1 for clients without the capability)."""
    return max(1, int(getattr(client, "parallel_requests", 1) or 1))


def complete_batch(
    client: Any, requests: Sequence[Sequence[Message]], params: SamplingParams
) -> list[BatchResult]:
    """``client.complete_batch`` when it has one, else one prompt at a time (LLMErrors as
    values, like ``BaseLLM.complete_batch``)."""
    fn = getattr(client, "complete_batch", None)
    if fn is not None:
        return list(fn(requests, params))
    return BaseLLM.complete_batch(client, requests, params)
