"""The Ray runner's backend: a pool of Ray workers (actors) that each hold their own backend.

``runner: ray`` makes the run's backend a ``RayPoolLLM``. The driver keeps the whole LLM stack
above the backend (the request-keyed cache and the budget with its atomic reservations), so
cache hits and caps are exact however many workers run; what travels to a worker is plain data:
the rendered chat messages and the sampling settings (and once, the ModelConfig it builds its
backend from); what comes back is the answer's text and counts. A worker with the embedded
model decodes a whole group of prompts at once (``complete_batch``); a worker with an HTTP
backend serves ``model.concurrency`` requests at once, e.g. to the vLLM server on its own node
(``base_url: http://127.0.0.1:8000/v1`` is resolved on the worker's node).

Ray is imported only here, and only when ``runner: ray`` is chosen (``pip install
'evotrainer[ray]'``). ``ray.init(address=...)`` takes ``ray.address``, else ``$RAY_ADDRESS``,
else starts a local Ray instance.

Shutdown: ``close()`` stops the workers and, when this pool started or connected Ray itself, shuts
Ray down; it also runs at exit, before Ray's own exit handler. No Ray call is made once Ray is
shut down (every Ray API would start a new local instance then, and the process would never
exit), nor from ``__del__`` while the interpreter is exiting.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from evotrainer.config import ModelConfig, RayConfig
from evotrainer.errors import ConfigError, ContextOverflowError, LLMError
from evotrainer.llm.base import (
    BaseLLM,
    BatchResult,
    Completion,
    LLMClient,
    SamplingParams,
    complete_batch,
)
from evotrainer.types import Message

BackendFactory = Callable[[ModelConfig, int], LLMClient]  # (model config, seed) -> backend

Wire = list[list[str]]  # messages as [role, content] pairs


def to_wire(messages: Sequence[Message]) -> Wire:
    return [[m.role, m.content] for m in messages]


def from_wire(wire: Wire) -> list[Message]:
    return [Message(role, content) for role, content in wire]


def encode_result(res: BatchResult) -> dict[str, Any]:
    if isinstance(res, Completion):
        return {"ok": asdict(res)}
    return {"error": type(res).__name__, "message": str(res)}


def decode_result(data: dict[str, Any]) -> BatchResult:
    if "ok" in data:
        return Completion(**data["ok"])
    cls = ContextOverflowError if data["error"] == "ContextOverflowError" else LLMError
    return cls(data["message"])


class BackendWorker:
    """What runs inside a Ray actor: a backend built from a ModelConfig (plain data) by
    ``build`` (llm/spec.py's ``build_backend``, pickled by reference)."""

    def __init__(self, model: dict[str, Any], seed: int, build: BackendFactory) -> None:
        self.backend = build(ModelConfig.model_validate(model), seed)

    def describe(self) -> dict[str, Any]:
        return {**self.backend.describe(), "model_id": self.backend.model_id, "node": _node()}

    def complete(self, wire: Wire, params: dict[str, Any]) -> dict[str, Any]:
        try:
            res: BatchResult = self.backend.complete(from_wire(wire), _params(params))
        except LLMError as exc:
            res = exc
        return encode_result(res)

    def complete_batch(self, wires: list[Wire], params: dict[str, Any]) -> list[dict[str, Any]]:
        results = complete_batch(self.backend, [from_wire(w) for w in wires], _params(params))
        return [encode_result(r) for r in results]


def _params(data: dict[str, Any]) -> SamplingParams:
    return SamplingParams(**{**data, "stop": tuple(data.get("stop", ()))})


def _node() -> str:
    return socket.gethostname()


class RayPoolLLM(BaseLLM):
    """An LLMClient whose calls run on ``ray.workers`` Ray actors (the least busy one first)."""

    def __init__(
        self, model: ModelConfig, ray_cfg: RayConfig, seed: int, build: BackendFactory
    ) -> None:
        """``build(model, seed)``: each worker's backend (llm/spec.py's ``build_backend``)."""
        try:
            # lazy: optional dependency (extra ray)
            import ray
        except ImportError as exc:
            raise ConfigError(
                "runner: ray needs Ray: pip install 'evotrainer[ray]' (or pip install ray)"
            ) from exc
        self._ray = ray
        self.workers: list[Any] = []
        self._owns_ray = not ray.is_initialized()  # then close() shuts Ray down
        if self._owns_ray:
            address = ray_cfg.address or os.environ.get("RAY_ADDRESS") or None
            kwargs: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False}
            if ray_cfg.runtime_env:
                kwargs["runtime_env"] = ray_cfg.runtime_env
            if address is None:
                kwargs["include_dashboard"] = False
            try:
                ray.init(address=address, **kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(f"ray.init(address={address!r}) failed: {exc}") from exc
        # registered after ray.init, so it runs before Ray's own exit handler (atexit is LIFO)
        atexit.register(_close_at_exit, weakref.ref(self))
        per_worker = model.concurrency if model.spec.startswith("openai:") else 1
        options: dict[str, Any] = {
            "num_cpus": ray_cfg.num_cpus,
            "num_gpus": ray_cfg.num_gpus,
            "max_concurrency": per_worker,
        }
        if ray_cfg.spread:
            options["scheduling_strategy"] = "SPREAD"
        actor = ray.remote(BackendWorker)
        self.workers = [
            actor.options(**options).remote(model.model_dump(mode="json"), seed, build)
            for _ in range(ray_cfg.workers)
        ]
        try:
            self.info = ray.get([w.describe.remote() for w in self.workers], timeout=600)
        except Exception as exc:  # noqa: BLE001 - a worker that cannot build its backend
            self.close()
            raise LLMError(f"Ray workers could not start their backend: {exc}") from exc
        first = self.info[0]
        self.model_id = str(first["model_id"])
        self.context_size = first.get("context")
        self.batch_size = max(1, int(first.get("batch_size") or 1))
        self.parallel_requests = ray_cfg.workers * per_worker
        self._busy = [0] * len(self.workers)
        self._lock = threading.Lock()

    def _acquire(self) -> int:
        with self._lock:
            i = min(range(len(self.workers)), key=lambda k: (self._busy[k], k))
            self._busy[i] += 1
            return i

    def _release(self, i: int) -> None:
        with self._lock:
            self._busy[i] -= 1

    def _get(self, ref: Any) -> Any:
        try:
            return self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:
            raise LLMError(f"Ray worker failed: {exc}") from exc

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        i = self._acquire()
        try:
            ref = self.workers[i].complete.remote(to_wire(messages), asdict(params))
            res = decode_result(self._get(ref))
        finally:
            self._release(i)
        if isinstance(res, Completion):
            return res
        raise res

    def complete_batch(
        self, requests: Sequence[Sequence[Message]], params: SamplingParams
    ) -> list[BatchResult]:
        i = self._acquire()
        try:
            ref = self.workers[i].complete_batch.remote(
                [to_wire(m) for m in requests], asdict(params)
            )
            return [decode_result(d) for d in self._get(ref)]
        finally:
            self._release(i)

    def describe(self) -> dict[str, Any]:
        return {
            "backend": f"Ray pool of {len(self.workers)} workers",
            "model": self.model_id,
            "context": self.context_size,
            "nodes": sorted({str(w.get("node")) for w in self.info}),
            "worker": {k: v for k, v in self.info[0].items() if k != "node"},
        }

    def close(self) -> None:
        """Stop the workers, and shut Ray down when this pool started it (or connected to it).
        Safe to call twice; a no-op once Ray is shut down."""
        self._stop_workers()
        if getattr(self, "_owns_ray", False) and self._ray.is_initialized():
            self._ray.shutdown()
        self._owns_ray = False

    def _stop_workers(self) -> None:
        workers, self.workers = getattr(self, "workers", []), []
        if not workers or not self._ray.is_initialized():
            return  # Ray is shut down, and its workers with it: any Ray call would restart it
        for w in workers:
            with contextlib.suppress(Exception):  # already gone
                self._ray.kill(w)

    def __del__(self) -> None:
        # a pool dropped during a run frees its workers; at interpreter exit close() has run
        if not sys.is_finalizing() and hasattr(self, "_ray"):
            self._stop_workers()


def _close_at_exit(ref: weakref.ref[RayPoolLLM]) -> None:
    pool = ref()
    if pool is not None:
        pool.close()
