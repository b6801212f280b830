"""The one LLM client interface every backend implements.

Messages go in; text, token usage and latency come out. Backends raise ``LLMError`` (or a
subclass) after their own retries; callers inside an evaluation catch it, record the error on the
rollout and score that example 0, so one bad request never ends a run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from evotrainer.types import Message


@dataclass(frozen=True)
class SamplingParams:
    """Sampling settings; part of the cache key, so two runs with equal params share answers."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 384
    seed: int | None = 0
    stop: tuple[str, ...] = ()

    def key(self) -> dict[str, Any]:
        return {
            "temperature": round(self.temperature, 6),
            "top_p": round(self.top_p, 6),
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "stop": list(self.stop),
        }


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
    """Convenience base: async via a worker thread, a generic description."""

    model_id: str = "base"
    context_size: int | None = None

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        raise NotImplementedError

    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        return await asyncio.to_thread(self.complete, messages, params)

    def describe(self) -> dict[str, Any]:
        return {
            "backend": type(self).__name__,
            "model": self.model_id,
            "context": self.context_size,
        }


def as_dicts(messages: Sequence[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]
