"""OpenAI-compatible chat-completions client over HTTP: vLLM, SGLang, Ollama, llama.cpp server,
OpenAI. One wire protocol, many endpoints: only the base URL and key differ.

Built on the ``openai`` SDK's ``AsyncOpenAI``: one pooled client per backend, its retries with
exponential backoff and jitter (429, 408, 409, 5xx, timeouts, connection errors; a server's
Retry-After is honoured), ``extra_body`` for server-specific fields. The client lives on the
process's LLM event loop (llm/aio.py): ``acomplete`` is the one path, ``complete`` waits for it
from sync code. At most ``concurrency`` requests are in flight (one semaphore for every caller).
An answer that cannot be read (not JSON, no choices, any field of the wrong type) is retried
``max_retries`` times too. After the retries it raises LLMError naming the endpoint; a 400 that
reports a context-length problem raises ContextOverflowError at once. A request without a reply
for ``wait_notice_s`` seconds is logged as a warning (the command line prints it), again every
as many seconds, one line per client at a time: a slow or hanging server is never silent.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from evotrainer.errors import ConfigError, ContextOverflowError, LLMError
from evotrainer.llm.aio import BackgroundLoop, shared_loop
from evotrainer.llm.base import BaseLLM, Completion, SamplingParams, as_dicts
from evotrainer.types import Message

DEFAULT_BASE_URL = "https://api.openai.com/v1"
log = logging.getLogger(__name__)


def _is_overflow(text: str) -> bool:
    low = text.lower()
    return "context" in low and ("length" in low or "window" in low or "exceed" in low)


def checked_base_url(given: str | None) -> str:
    """The endpoint: ``given`` (model.base_url / --base-url), else $OPENAI_BASE_URL, else
    OpenAI's, without a final slash. ConfigError naming where it came from when it is not an
    http(s) URL with a host (the HTTP client would fail later, with a traceback)."""
    url = given or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    problem = _url_problem(url)
    if problem:
        where = "model.base_url (--base-url)" if given else "$OPENAI_BASE_URL"
        raise ConfigError(
            f"{where} {url!r}: {problem}; give an http(s) address such as http://127.0.0.1:8000/v1"
        )
    return url.rstrip("/")


def _url_problem(url: str) -> str | None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    return None


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
        loop: BackgroundLoop | None = None,
        wait_notice_s: float = 15.0,
    ) -> None:
        self.model = model
        self.base_url = checked_base_url(base_url)
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "sk-no-key"
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s  # between retries of an unreadable answer
        self.concurrency = concurrency
        self.parallel_requests = concurrency
        self.native_async = True
        self.context_size = context_size
        self.extra_body = dict(extra_body or {})
        self.model_id = f"openai:{model}@{self.base_url}"
        if self.extra_body:  # other sampling fields, other answers: keep cache keys apart
            self.model_id += " " + json.dumps(self.extra_body, sort_keys=True)
        self._loop = loop or shared_loop()
        self._client: Any = None  # AsyncOpenAI, made on the loop at first use
        self._sem: asyncio.Semaphore | None = None
        self._jitter = random.Random(0)  # jitter only; never affects results
        self.wait_notice_s = wait_notice_s
        self._last_notice = -float("inf")  # when this client last said it was waiting

    # -- the pooled client, on the LLM loop -------------------------------------------------
    def _ensure_client(self) -> Any:
        if self._client is None:
            # lazy: start-up time (openai takes about a second to import)
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key,
                timeout=self.timeout_s,
                max_retries=self.max_retries,
            )
            self._sem = asyncio.Semaphore(self.concurrency)
        return self._client

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
        for name in ("frequency_penalty", "presence_penalty"):  # OpenAI's own fields
            if name in params.penalties():
                body[name] = getattr(params, name)
        return body

    def _extra(self, body: dict[str, Any], params: SamplingParams) -> dict[str, Any]:
        """Server-specific fields: a policy's repetition penalty under the names llama.cpp's
        server (``repeat_penalty``) and vLLM/SGLang (``repetition_penalty``) read, when it is
        on, then ``model.extra_body`` (e.g. vLLM's top_k), which may not override the fields
        the run controls."""
        run: dict[str, Any] = {}
        if params.repeat_penalty != 1.0:
            run = {"repeat_penalty": params.repeat_penalty}
            run["repetition_penalty"] = params.repeat_penalty
        mine = {k: v for k, v in self.extra_body.items() if k not in body and k not in run}
        return {**mine, **run}

    def _give_up(self, last: str) -> LLMError:
        return LLMError(
            f"model server at {self.base_url} failed after {self.max_retries + 1} attempts: {last}"
        )

    async def _call(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        # lazy: start-up time (openai takes about a second to import)
        import openai

        client = self._ensure_client()
        assert self._sem is not None
        body = self._payload(messages, params)
        url = f"{self.base_url}/chat/completions"
        last = ""
        for attempt in range(self.max_retries + 1):
            start = time.perf_counter()
            try:
                async with self._sem:
                    resp = await self._waited(
                        client.chat.completions.create(
                            **body, extra_body=self._extra(body, params) or None
                        )
                    )
                return self._read(resp, time.perf_counter() - start, url)
            except openai.BadRequestError as exc:
                text = f"{exc.message} {exc.body}"
                if _is_overflow(text):
                    raise ContextOverflowError(
                        f"{url}: prompt too long for the model: {text}"
                    ) from None
                raise LLMError(f"HTTP 400 from {url} (not retried): {text[:500]}") from None
            except openai.APIStatusError as exc:
                # the SDK already retried what is worth retrying (429, 5xx ...)
                if exc.status_code >= 500 or exc.status_code in (408, 409, 429):
                    raise self._give_up(f"HTTP {exc.status_code}: {exc.message}") from None
                raise LLMError(
                    f"HTTP {exc.status_code} from {url} (not retried): {exc.message}"
                ) from None
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                raise self._give_up(f"{type(exc).__name__}: {exc}") from None
            except (_Unreadable, openai.APIResponseValidationError, ValueError) as exc:
                last = f"unparseable answer from {url}: {exc}"
            if attempt < self.max_retries:
                await asyncio.sleep(self.backoff_s * (2**attempt) * (0.5 + self._jitter.random()))
        raise self._give_up(last)

    async def _waited(self, request: Any) -> Any:
        """``await request``, saying (a warning) when it has had no reply for
        ``wait_notice_s`` seconds, and again every as many seconds."""
        task = asyncio.ensure_future(request)
        start = time.monotonic()
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=self.wait_notice_s)
                if done:
                    return task.result()
                self._say_waiting(time.monotonic() - start)
        finally:
            if not task.done():  # cancelled (Ctrl-C): do not leave the request running
                task.cancel()

    def _say_waiting(self, waited: float) -> None:
        now = time.monotonic()
        if now - self._last_notice < self.wait_notice_s * 0.9:
            return  # one line per interval, however many requests wait
        self._last_notice = now
        tries = self.max_retries + 1
        log.warning(
            "waiting for the model server at %s: no reply for %.0f s (each try waits up to "
            "%g s, %d tries: model.timeout_s, model.max_retries; eval --timeout sets the first)",
            self.base_url,
            waited,
            self.timeout_s,
            tries,
        )

    @staticmethod
    def _read(resp: Any, latency: float, url: str) -> Completion:
        """The completion in a reply, or _Unreadable (retried like an unparseable answer): the
        SDK builds its objects from whatever JSON the server sent without checking it, so any
        field may be of any type (``choices`` an object, ``content`` a list, a token count a
        text or 1e400)."""
        try:
            choices = resp.choices
            if not isinstance(choices, list) or not choices:
                raise _Unreadable(f"no list of choices in {str(resp)[:200]!r}")
            choice = choices[0]
            text = choice.message.content or ""
            finish = getattr(choice, "finish_reason", None) or "stop"
        except _Unreadable:
            raise
        except Exception as exc:  # noqa: BLE001 - whatever the reply's shape, it is unreadable
            raise _Unreadable(f"{type(exc).__name__} reading {str(resp)[:200]!r}") from exc
        if not isinstance(text, str):
            raise _Unreadable(f"content is {type(text).__name__}")
        usage = getattr(resp, "usage", None)
        return Completion(
            text=text,
            prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
            completion_tokens=_count(getattr(usage, "completion_tokens", 0)),
            latency_s=latency,
            finish_reason=finish if isinstance(finish, str) else "stop",
        )

    # -- the LLMClient interface ------------------------------------------------------------
    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        return await self._loop.wrap(self._call(messages, params))

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        return self._loop.run(self._call(messages, params))

    def list_models(self) -> list[dict[str, Any]]:
        async def _list() -> list[dict[str, Any]]:
            page = await self._ensure_client().models.list(timeout=10)
            return [m.model_dump() for m in page.data]

        try:
            return self._loop.run(_list())
        except Exception as exc:  # noqa: BLE001 - every failure is "cannot list"
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


class _Unreadable(Exception):
    pass


def _count(value: Any) -> int:
    """A token count from a reply: a non-negative whole number, else 0 (the server's usage
    block is informative; a text, a list, a negative or an infinite count is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not value.is_integer():  # also inf and nan
        return 0
    return max(0, int(value))
