"""One event loop for the async LLM traffic of a process, on a daemon thread.

Pooled async HTTP clients (``AsyncOpenAI`` keeps an httpx connection pool) are bound to the loop
they first ran on, so every such client lives on this one loop. Sync code (operators, the CLI,
a thread of the evaluator) submits a coroutine with ``run`` and blocks for its result; a
coroutine on another loop (a user's ``asyncio.run``) awaits ``wrap``. Nothing here is pickled:
a Ray worker process starts its own loop when it first needs one.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    def __init__(self, name: str = "evotrainer-llm") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def on_loop(self) -> bool:
        """True when called from a coroutine running on this loop."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it (from any thread but the loop's own)."""
        if self.on_loop():
            coro.close()
            raise RuntimeError("BackgroundLoop.run() called from its own loop; await instead")
        fut = self.submit(coro)
        try:
            return fut.result()
        except BaseException:
            fut.cancel()  # Ctrl-C while waiting: do not leave the request running
            raise

    async def wrap(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on this loop from any loop."""
        if self.on_loop():
            return await coro
        return await asyncio.wrap_future(self.submit(coro))


_SHARED = BackgroundLoop()


def shared_loop() -> BackgroundLoop:
    """The process-wide loop the LLM clients and the async runner share."""
    return _SHARED
