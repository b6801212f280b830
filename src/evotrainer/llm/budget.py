"""Budget accounting: LLM calls, tokens and seconds spent inside the LLM, with optional hard caps.

Two levels are counted:
- requests the algorithm made (``llm_calls``, ``prompt_tokens``, ``completion_tokens``), whether
  the cache or the backend answered: a pure function of the run, identical on a cached rerun;
- what reached the backend (``backend_calls``, ``backend_tokens``, ``llm_seconds``): the cost.
The caps apply to the backend level. ``MeteredLLM`` wraps the backend (below the cache, so cache
hits are free): before each call it *reserves* the call (check and count under one lock, so
concurrent requests can never overshoot ``max_calls``) or raises ``BudgetExceeded`` with a clear
message; after it, it records usage. The token cap is checked before each call: concurrent calls
in flight may pass it by their own tokens (a call's size is known only when it returns).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from evotrainer.errors import BudgetExceeded, LLMError
from evotrainer.llm.base import BaseLLM, Completion, LLMClient, SamplingParams
from evotrainer.types import Message


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

    def begin_call(self) -> None:
        """Reserve one backend call atomically (raises BudgetExceeded when the cap is reached)."""
        with self._lock:
            self._check()
            self.in_flight += 1

    def cancel_call(self) -> None:
        """A reserved call that ended without an answer or an LLM error (interrupted)."""
        with self._lock:
            self.in_flight = max(0, self.in_flight - 1)

    def _check(self) -> None:
        used = self.backend_calls + self.in_flight
        if self.max_calls is not None and used >= self.max_calls - self.reserve:
            held = f" ({self.reserve} held back for the final validation)" if self.reserve else ""
            raise BudgetExceeded(
                f"LLM call budget spent: {used} calls >= "
                f"max_calls={self.max_calls}{held}. Raise budget.max_calls to continue."
            )
        if self.max_tokens is not None and self.backend_tokens >= self.max_tokens:
            raise BudgetExceeded(
                f"LLM token budget spent: {self.backend_tokens} tokens >= "
                f"max_tokens={self.max_tokens}. Raise budget.max_tokens to continue."
            )

    def release_reserve(self) -> None:
        """Make the held-back calls spendable (for the final validation)."""
        self.reserve = 0

    def _request(self, completion: Completion) -> None:
        self.llm_calls += 1
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens

    def record(self, completion: Completion, seconds: float) -> None:
        """A backend call that succeeded."""
        with self._lock:
            self._request(completion)
            self.in_flight = max(0, self.in_flight - 1)
            self.backend_calls += 1
            self.backend_tokens += completion.prompt_tokens + completion.completion_tokens
            self.llm_seconds += seconds

    def record_error(self, seconds: float) -> None:
        with self._lock:
            self.in_flight = max(0, self.in_flight - 1)
            self.backend_calls += 1
            self.llm_errors += 1
            self.llm_seconds += seconds

    def record_cache(self, hit: bool, completion: Completion | None = None) -> None:
        with self._lock:
            if hit:
                self.cache_hits += 1
                if completion is not None:
                    self._request(completion)
            else:
                self.cache_misses += 1

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


class MeteredLLM(BaseLLM):
    """Counts every real backend call and enforces the caps."""

    def __init__(self, inner: LLMClient, budget: Budget) -> None:
        self.inner = inner
        self.budget = budget
        self.model_id = inner.model_id
        self.context_size = inner.context_size

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        self.budget.begin_call()
        start = time.perf_counter()
        try:
            completion = self.inner.complete(messages, params)
        except LLMError:
            self.budget.record_error(time.perf_counter() - start)
            raise
        except BaseException:
            self.budget.cancel_call()
            raise
        self.budget.record(completion, time.perf_counter() - start)
        return completion

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()
