"""Serving an adapter: the embedded llama.cpp backend with a GGUF LoRA adapter applied.

Needs llama-cpp-python only (not the ``distill`` extra). The adapter's bytes are verified
against its recorded sha256 (or its hash name) before llama.cpp sees them: a mismatch raises
DataError and nothing is loaded. Greedy answers (temperature 0) are deterministic; batched
decoding (``model.batch_size`` > 1) applies the same adapter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evotrainer.config import ModelConfig
from evotrainer.llm.spec import build_backend


def embedded_with_adapter(
    adapter_path: str | Path,
    sha256: str | None = None,
    model: ModelConfig | None = None,
    seed: int = 0,
) -> Any:
    """An embedded LLM client (``LlamaCppLLM``) for ``model`` (default ``local:smollm2``) with
    the adapter applied; its ``model_id`` carries the adapter's hash. Raises DataError (hash
    mismatch, missing file) or ModelSpecError (not an embedded model, llama.cpp refused the
    adapter, e.g. one made for another base model)."""
    return build_backend(
        model or ModelConfig(), seed=seed, lora_path=adapter_path, lora_sha256=sha256
    )
