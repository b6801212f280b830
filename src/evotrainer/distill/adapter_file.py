"""Hashing and verifying LoRA adapter files: defined in evotrainer/llm/adapter_file.py, beside
the embedded backend that verifies an adapter before it loads it; this is its name in the
distillation package, which writes them."""

from evotrainer.llm.adapter_file import (  # noqa: F401
    SUFFIX,
    adapter_file_name,
    expected_hash,
    sha256_file,
    store_adapter,
    verified_copy,
    verify_adapter,
)
