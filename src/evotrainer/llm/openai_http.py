"""OpenAI-compatible chat-completions client over HTTP: vLLM, SGLang, Ollama, llama.cpp server,
OpenAI. One wire protocol, many endpoints: only the base URL and key differ.

Retries with exponential backoff (and jitter) on 429, 5xx, timeouts, connection errors and
unparseable answers; after ``max_retries`` it raises LLMError naming the endpoint. A 400 that
reports a context-length problem raises ContextOverflowError at once. Concurrency is bounded by
a semaphore (sync and async paths alike).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx

from evotrainer.errors import ContextOverflowError, LLMError
from evotrainer.llm.base import BaseLLM, Completion, SamplingParams, as_dicts
from evotrainer.types import Message

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class _Retryable(Exception):
    pass


class OpenAICompatibleLLM(BaseLLM):
    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        backoff_s: float = 0.5,
        concurrency: int = 8,
        context_size: int | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "sk-no-key"
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.concurrency = concurrency
        self.context_size = context_size
        self.extra_body = dict(extra_body or {})
        self.model_id = f"openai:{model}@{self.base_url}"
        if self.extra_body:  # other sampling fields, other answers: keep cache keys apart
            self.model_id += " " + json.dumps(self.extra_body, sort_keys=True)
        self._sem = threading.BoundedSemaphore(concurrency)
        self._asem: asyncio.Semaphore | None = None
        self._client = httpx.Client(timeout=timeout_s, headers=self._headers())
        self._jitter = random.Random(0)  # jitter only; never affects results

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"}

    def _payload(self, messages: Sequence[Message], params: SamplingParams) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": as_dicts(messages),
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
        }
        if params.seed is not None:
            body["seed"] = params.seed
        if params.stop:
            body["stop"] = list(params.stop)
        # Server-specific sampling fields (e.g. llama.cpp's repeat_penalty, vLLM's top_k); they
        # may not override the fields the run controls.
        for key, value in self.extra_body.items():
            body.setdefault(key, value)
        return body

    def _interpret(self, resp: httpx.Response, latency: float) -> Completion:
        url = f"{self.base_url}/chat/completions"
        if resp.status_code in RETRY_STATUS:
            raise _Retryable(f"HTTP {resp.status_code} from {url}: {resp.text[:200]}")
        if resp.status_code >= 400:
            text = resp.text[:500]
            if "context" in text.lower() and (
                "length" in text.lower() or "window" in text.lower() or "exceed" in text.lower()
            ):
                raise ContextOverflowError(f"{url}: prompt too long for the model: {text}")
            raise LLMError(f"HTTP {resp.status_code} from {url} (not retried): {text}")
        try:
            data = resp.json()
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _Retryable(f"unparseable answer from {url}: {resp.text[:200]!r}") from exc
        usage = data.get("usage") or {}
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=latency,
            finish_reason=choice.get("finish_reason") or "stop",
        )

    def _delay(self, attempt: int) -> float:
        return self.backoff_s * (2**attempt) * (0.5 + self._jitter.random())

    def _give_up(self, last: str) -> LLMError:
        return LLMError(
            f"model server at {self.base_url} failed after {self.max_retries + 1} attempts: {last}"
        )

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        body = self._payload(messages, params)
        last = ""
        for attempt in range(self.max_retries + 1):
            start = time.perf_counter()
            try:
                with self._sem:
                    resp = self._client.post(f"{self.base_url}/chat/completions", json=body)
                return self._interpret(resp, time.perf_counter() - start)
            except (_Retryable, httpx.TransportError) as exc:
                last = f"{type(exc).__name__}: {exc}"
            if attempt < self.max_retries:
                time.sleep(self._delay(attempt))
        raise self._give_up(last)

    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        if self._asem is None:
            self._asem = asyncio.Semaphore(self.concurrency)
        body = self._payload(messages, params)
        last = ""
        async with httpx.AsyncClient(timeout=self.timeout_s, headers=self._headers()) as client:
            for attempt in range(self.max_retries + 1):
                start = time.perf_counter()
                try:
                    async with self._asem:
                        resp = await client.post(f"{self.base_url}/chat/completions", json=body)
                    return self._interpret(resp, time.perf_counter() - start)
                except (_Retryable, httpx.TransportError) as exc:
                    last = f"{type(exc).__name__}: {exc}"
                if attempt < self.max_retries:
                    await asyncio.sleep(self._delay(attempt))
        raise self._give_up(last)

    def list_models(self) -> list[dict[str, Any]]:
        try:
            resp = self._client.get(f"{self.base_url}/models", timeout=10)
            resp.raise_for_status()
            return list(resp.json().get("data", []))
        except (httpx.HTTPError, ValueError) as exc:
            raise LLMError(f"cannot list models at {self.base_url}: {exc}") from exc

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "OpenAI-compatible HTTP",
            "model": self.model,
            "endpoint": self.base_url,
            "context": self.context_size,
            "concurrency": self.concurrency,
            **({"extra_body": dict(self.extra_body)} if self.extra_body else {}),
        }
