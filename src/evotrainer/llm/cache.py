"""A persistent, request-keyed response cache (SQLite, stdlib only).

Key = sha256 of (model id, messages, sampling params incl. seed). An identical rerun makes no
backend calls and gets identical answers. Safe to share between threads and processes (SQLite
WAL). Errors are never cached, so a rerun retries the requests that failed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from evotrainer.errors import BudgetExceeded, CacheError
from evotrainer.llm.base import (
    BaseLLM,
    BatchResult,
    Completion,
    LLMClient,
    SamplingParams,
    as_dicts,
    batch_size_of,
    complete_batch,
    parallel_requests_of,
)
from evotrainer.llm.budget import Budget
from evotrainer.types import Message


def default_cache_dir() -> Path:
    """``$EVOTRAINER_CACHE_DIR``, else ``$XDG_CACHE_HOME/evotrainer``, else ~/.cache/evotrainer."""
    if env := os.environ.get("EVOTRAINER_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evotrainer"


def request_key(model_id: str, messages: Sequence[Message], params: SamplingParams) -> str:
    payload = json.dumps(
        {"model": model_id, "messages": as_dicts(messages), "params": params.key()},
        sort_keys=True,
        ensure_ascii=False,
    )
    # surrogatepass: a lone surrogate (model text, a transcript read by a plug-in) gets a key
    # of its own instead of an UnicodeEncodeError; valid text encodes as plain UTF-8
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


LOCK_TIMEOUT_S = 30.0  # how long to wait for another process's write lock on the cache


class ResponseCache:
    """SQLite store of completions keyed by ``request_key``. A corrupt, locked or unwritable
    file raises CacheError naming the file and the fix."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(self.path), check_same_thread=False, timeout=LOCK_TIMEOUT_S
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, "
                "completion TEXT NOT NULL, created REAL)"
            )
            self._db.commit()
        except (sqlite3.Error, OSError) as exc:
            raise self._error(exc) from None

    def _error(self, exc: Exception) -> CacheError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            fix = (
                f"another process holds it locked (waited {LOCK_TIMEOUT_S:g} s); wait for it, "
                "or set cache.path to another file"
            )
        elif isinstance(exc, OSError) or "readonly" in text or "unable to open" in text:
            fix = "it cannot be opened for writing; set cache.path to a writable file"
        else:
            fix = (
                "the file is damaged or not a cache; delete it (answers are asked again) or set "
                "cache.path to another file (cache.enabled=false runs without a cache)"
            )
        return CacheError(f"LLM cache {self.path}: {text}: {fix}")

    def get(self, key: str) -> Completion | None:
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT completion FROM responses WHERE key = ?", (key,)
                ).fetchone()
            if row is None:
                return None
            data: dict[str, Any] = json.loads(row[0])
            data["cached"] = True
            return Completion(**data)
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise self._error(exc) from None

    def put(self, key: str, model_id: str, completion: Completion) -> None:
        data = asdict(completion)
        data["cached"] = False
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                    (key, model_id, json.dumps(data), time.time()),  # ASCII: any text fits
                )
                self._db.commit()
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def forget_after(self, when: float) -> int:
        """Delete the answers stored after ``when`` (a ``time.time()``); returns how many. A
        benchmark resuming a run from its last checkpoint uses it so that the generation in
        progress at the kill is paid for again, as in an uninterrupted run."""
        try:
            with self._lock:
                n = self._db.execute("DELETE FROM responses WHERE created > ?", (when,)).rowcount
                self._db.commit()
            return int(n)
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedLLM(BaseLLM):
    """Wraps a client: answers from the cache when it can, else asks ``inner`` and stores the
    answer. Hits and misses are counted in ``budget``."""

    def __init__(self, inner: LLMClient, cache: ResponseCache, budget: Budget | None = None):
        self.inner = inner
        self.cache = cache
        self.budget = budget
        self.model_id = inner.model_id
        self.context_size = inner.context_size
        self.batch_size = batch_size_of(inner)
        self.parallel_requests = parallel_requests_of(inner)
        self.native_async = bool(getattr(inner, "native_async", False))

    def _lookup(self, key: str) -> Completion | None:
        hit = self.cache.get(key)
        if self.budget:
            self.budget.record_cache(hit=hit is not None, completion=hit)
        return hit

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        key = request_key(self.model_id, messages, params)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        completion = self.inner.complete(messages, params)
        self.cache.put(key, self.model_id, completion)
        return completion

    async def acomplete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        key = request_key(self.model_id, messages, params)
        hit = self._lookup(key)  # a local SQLite read: short enough for the event loop
        if hit is not None:
            return hit
        completion = await self.inner.acomplete(messages, params)
        self.cache.put(key, self.model_id, completion)
        return completion

    def complete_batch(
        self, requests: Sequence[Sequence[Message]], params: SamplingParams
    ) -> list[BatchResult]:
        """Cache hits are answered here, the misses go to ``inner`` as one batch. Counted as if
        the prompts were asked one at a time: a prompt after the first BudgetExceeded is never
        counted (one at a time, it would never have been asked); a repeated prompt is a hit."""
        keys = [request_key(self.model_id, m, params) for m in requests]
        found = {k: self.cache.get(k) for k in dict.fromkeys(keys)}
        ask: dict[str, Sequence[Message]] = {}
        for key, messages in zip(keys, requests, strict=True):
            if found[key] is None:
                ask.setdefault(key, messages)
        answers = dict(
            zip(ask, complete_batch(self.inner, list(ask.values()), params), strict=True)
        )
        out: list[BatchResult] = []
        for key in keys:
            hit = found[key]
            res: BatchResult = hit if hit is not None else answers[key]
            if self.budget:
                self.budget.record_cache(hit=hit is not None, completion=hit)
            if hit is None and isinstance(res, Completion):  # a repeat of it is a hit
                self.cache.put(key, self.model_id, res)
                found[key] = replace(res, cached=True)
            out.append(res)
            if isinstance(res, BudgetExceeded):
                out += [res] * (len(keys) - len(out))
                break
        return out

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "cache": str(self.cache.path)}
