"""A client whose answers pass through a post-processor (a policy's loop cut,
policy/postprocess.py) on their way back: every answer of an episode, one at a time, batched or
awaited, so a multi-turn environment sees what the policy really says. The raw answer stays in
``Completion.extra["raw_text"]`` when the cut changed it. It wraps the cache (answers are
cached raw: a policy that cuts otherwise costs no new call) and passes the inner client's
capabilities on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from evotrainer.llm.base import (
    BaseLLM,
    BatchResult,
    Completion,
    LLMClient,
    SamplingParams,
    batch_size_of,
    complete_batch,
    parallel_requests_of,
)
from evotrainer.types import Message

RAW_TEXT = "raw_text"


class PostProcessedLLM(BaseLLM):
    def __init__(self, inner: LLMClient, cut: Callable[[str], str]) -> None:
        self.inner = inner
        self.cut = cut
        self.model_id = inner.model_id
        self.context_size = inner.context_size
        self.batch_size = batch_size_of(inner)
        self.parallel_requests = parallel_requests_of(inner)
        self.native_async = bool(getattr(inner, "native_async", False))

    def _apply(self, c: Completion) -> Completion:
        text = self.cut(c.text)
        if text == c.text:
            return c
        return replace(c, text=text, extra={**c.extra, RAW_TEXT: c.text})

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        return self._apply(self.inner.complete(messages, params))

    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        return self._apply(await self.inner.acomplete(messages, params))

    def complete_batch(
        self, requests: Sequence[Sequence[Message]], params: SamplingParams
    ) -> list[BatchResult]:
        return [
            self._apply(r) if isinstance(r, Completion) else r
            for r in complete_batch(self.inner, requests, params)
        ]

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "post_processor": "loop cut"}


def raw_text(c: Completion) -> str | None:
    """The answer before the post-processor, or None when it changed nothing."""
    raw = c.extra.get(RAW_TEXT)
    return raw if isinstance(raw, str) else None
