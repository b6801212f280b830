"""Budget accounting: LLM calls, tokens and seconds spent inside the LLM, with optional hard caps.

Two levels are counted:
- requests the algorithm made (``llm_calls``, ``prompt_tokens``, ``completion_tokens``), whether
  the cache or the backend answered: a pure function of the run, identical on a cached rerun (a
  resume sets them back to its checkpoint's); what determinism checks compare;
- what reached the backend (``backend_calls``, ``backend_tokens``, ``llm_seconds``): the cost,
  counted once across resumes; and the answers the cache gave (``cache_hits``).
The caps apply to the backend level. ``backend_calls`` is THE call count a person reads (issue
51): the console, summary.json (``runtime.backend_calls``), the report, a resume's "spent before"
and the trackers all show it as "backend calls", with the cached answers beside it as "cached". ``MeteredLLM`` wraps the backend (below the cache, so cache
hits are free): before each call it *reserves* it under one lock: one call against
``max_calls``, and with ``max_tokens`` the most tokens the call can cost (an upper bound of its
prompt, plus ``max_tokens`` of the answer) against what is spent and what calls in flight have
reserved. A call that does not fit raises ``BudgetExceeded`` with a clear message; when it
returns, its reservation is replaced by what it really cost. So neither cap is ever passed,
however many calls run at once (a token cap stops a little early: the prompt bound is loose).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from evotrainer.errors import BudgetExceeded, LLMError
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

log = logging.getLogger(__name__)


@dataclass
class Budget:
    """Counters (restored on resume) and caps (None = unlimited)."""

    max_calls: int | None = None
    max_tokens: int | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    backend_calls: int = 0
    backend_tokens: int = 0
    llm_seconds: float = 0.0
    cache_hits: int = 0
    cache_misses: int = 0
    llm_errors: int = 0
    reserve: int = 0  # calls of max_calls held back (see release_reserve)
    in_flight: int = 0  # calls reserved and not yet recorded (count against max_calls)
    in_flight_tokens: int = 0  # tokens those calls reserved (count against max_tokens)
    # called (outside the lock) after every answer, the backend's or the cache's: a run's
    # progress ticks (engine/telemetry.py). One that raises is dropped, with a warning
    listener: Callable[[], None] | None = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    REQUEST_COUNTERS = ("llm_calls", "prompt_tokens", "completion_tokens")
    COUNTERS = (
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "backend_calls",
        "backend_tokens",
        "llm_seconds",
        "cache_hits",
        "cache_misses",
        "llm_errors",
    )

    def check(self) -> None:
        with self._lock:
            self._check()

    def begin_call(self, tokens: int = 0) -> int:
        """Reserve one backend call and up to ``tokens`` tokens atomically (raises
        BudgetExceeded when either does not fit). Returns the tokens reserved, which
        ``record``/``record_error``/``cancel_call`` release."""
        with self._lock:
            self._check(tokens)
            self.in_flight += 1
            self.in_flight_tokens += tokens
            return tokens

    def cancel_call(self, reserved: int = 0) -> None:
        """A reserved call that ended without an answer or an LLM error (interrupted)."""
        with self._lock:
            self._release(reserved)

    def _release(self, reserved: int) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        self.in_flight_tokens = max(0, self.in_flight_tokens - reserved)

    def _check(self, tokens: int = 0) -> None:
        used = self.backend_calls + self.in_flight
        if self.max_calls is not None and used >= self.max_calls - self.reserve:
            held = (
                f", the other {self.reserve} held back for the final validation"
                if self.reserve
                else ""
            )
            raise BudgetExceeded(
                f"LLM call budget spent: {used} backend calls made of max_calls="
                f"{self.max_calls}{held}. Raise budget.max_calls to continue."
            )
        if self.max_tokens is None:
            return
        spent = self.backend_tokens + self.in_flight_tokens
        if spent >= self.max_tokens or spent + tokens > self.max_tokens:
            flight = f" (+{self.in_flight_tokens} reserved by calls in flight)" * bool(
                self.in_flight_tokens
            )
            raise BudgetExceeded(
                f"LLM token budget spent: {self.backend_tokens} tokens{flight}, and the next "
                f"call may cost up to {tokens} more, > max_tokens={self.max_tokens}. Raise "
                "budget.max_tokens to continue."
            )

    def calls_left(self) -> int | None:
        """Backend calls that may still start before the held-back reserve (None: no cap)."""
        if self.max_calls is None:
            return None
        with self._lock:
            return max(0, self.max_calls - self.reserve - self.backend_calls - self.in_flight)

    def release_reserve(self) -> None:
        """Make the held-back calls spendable (for the final validation)."""
        self.reserve = 0

    def _request(self, completion: Completion) -> None:
        self.llm_calls += 1
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens

    def record(self, completion: Completion, seconds: float, reserved: int = 0) -> None:
        """A backend call that succeeded."""
        with self._lock:
            self._request(completion)
            self._release(reserved)
            self.backend_calls += 1
            self.backend_tokens += completion.prompt_tokens + completion.completion_tokens
            self.llm_seconds += seconds
        self._tell()

    def record_error(self, seconds: float, reserved: int = 0) -> None:
        with self._lock:
            self._release(reserved)
            self.backend_calls += 1
            self.llm_errors += 1
            self.llm_seconds += seconds
        self._tell()

    def record_cache(self, hit: bool, completion: Completion | None = None) -> None:
        with self._lock:
            if hit:
                self.cache_hits += 1
                if completion is not None:
                    self._request(completion)
            else:
                self.cache_misses += 1
        if hit:
            self._tell()

    def listen(self, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` after every answer from now on (None: stop)."""
        self.listener = listener

    def _tell(self) -> None:
        """The listener, after an answer; one that raises is dropped (a progress display
        never stops a call)."""
        listener = self.listener
        if listener is None:
            return
        try:
            listener()
        except Exception as exc:  # noqa: BLE001 - a display bug must not fail an LLM call
            self.listener = None
            log.warning("the progress listener raised %s: %s; dropped", type(exc).__name__, exc)

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            out = {name: getattr(self, name) for name in self.COUNTERS}
        out["llm_seconds"] = round(out["llm_seconds"], 3)
        return out

    def restore(self, data: dict[str, Any]) -> None:
        names = {f.name for f in fields(self)}
        for k in self.COUNTERS:
            if k in data and k in names:
                setattr(self, k, type(getattr(self, k))(data[k]))


def prompt_token_bound(messages: Sequence[Message]) -> int:
    """An upper bound of a chat prompt's tokens for byte-level tokenizers (a token is at least
    one byte of text), plus room for the chat template's own tokens."""
    return 64 + sum(8 + len(m.role) + len(m.content.encode("utf-8")) for m in messages)


class MeteredLLM(BaseLLM):
    """Counts every real backend call and enforces the caps (sync, async and batches)."""

    def __init__(self, inner: LLMClient, budget: Budget) -> None:
        self.inner = inner
        self.budget = budget
        self.model_id = inner.model_id
        self.context_size = inner.context_size
        self.batch_size = batch_size_of(inner)
        self.parallel_requests = parallel_requests_of(inner)
        self.native_async = bool(getattr(inner, "native_async", False))

    def _bound(self, messages: Sequence[Message], params: SamplingParams) -> int:
        if self.budget.max_tokens is None:
            return 0
        count = getattr(self.inner, "prompt_token_bound", None)
        prompt = count(messages) if count is not None else prompt_token_bound(messages)
        return int(prompt) + params.max_tokens

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        reserved = self.budget.begin_call(self._bound(messages, params))
        start = time.perf_counter()
        try:
            completion = self.inner.complete(messages, params)
        except LLMError:
            self.budget.record_error(time.perf_counter() - start, reserved)
            raise
        except BaseException:
            self.budget.cancel_call(reserved)
            raise
        self.budget.record(completion, time.perf_counter() - start, reserved)
        return completion

    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        reserved = self.budget.begin_call(self._bound(messages, params))
        start = time.perf_counter()
        try:
            completion = await self.inner.acomplete(messages, params)
        except LLMError:
            self.budget.record_error(time.perf_counter() - start, reserved)
            raise
        except BaseException:  # cancelled, interrupted
            self.budget.cancel_call(reserved)
            raise
        self.budget.record(completion, time.perf_counter() - start, reserved)
        return completion

    def complete_batch(
        self, requests: Sequence[Sequence[Message]], params: SamplingParams
    ) -> list[BatchResult]:
        """Reserve the prompts in order; from the first that does not fit on, every prompt gets
        that BudgetExceeded (as one at a time would stop there). The reserved ones are decoded
        together; the batch's seconds are shared equally among them."""
        reserved: list[int] = []
        refused: BudgetExceeded | None = None
        for messages in requests:
            try:
                reserved.append(self.budget.begin_call(self._bound(messages, params)))
            except BudgetExceeded as exc:
                refused = exc
                break
        n = len(reserved)
        results: list[BatchResult] = []
        if n:
            start = time.perf_counter()
            try:
                results = complete_batch(self.inner, requests[:n], params)
            except BaseException:
                for r in reserved:
                    self.budget.cancel_call(r)
                raise
            share = (time.perf_counter() - start) / n
            for res, r in zip(results, reserved, strict=True):
                if isinstance(res, Completion):
                    self.budget.record(res, share, r)
                elif isinstance(res, LLMError):
                    self.budget.record_error(share, r)
                else:
                    self.budget.cancel_call(r)
        if refused is not None:
            results += [refused] * (len(requests) - n)
        return results

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()
