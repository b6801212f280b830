"""Adapter files are named by their content: ``<sha256 of the bytes>.gguf``.

A run directory records an adapter by that hash; before llama.cpp loads one, its bytes are
hashed and compared, and llama.cpp is handed a private copy made from exactly the bytes that
were hashed (so a file swapped after the check is never loaded). Standard library only: serving
an adapter does not need the ``distill`` extra.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from evotrainer.errors import DataError

SUFFIX = ".gguf"
_HASH = re.compile(r"[0-9a-f]{64}")


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def adapter_file_name(sha256: str) -> str:
    return f"{sha256}{SUFFIX}"


def expected_hash(path: str | Path, sha256: str | None = None) -> str | None:
    """The hash an adapter file must have: ``sha256`` when given, else its name's stem when the
    name is a hash, else None (nothing to check against)."""
    if sha256 is not None:
        return sha256.lower()
    stem = Path(path).name.removesuffix(SUFFIX)
    return stem if _HASH.fullmatch(stem) else None


def verify_adapter(path: str | Path, sha256: str | None = None) -> str:
    """Hash ``path`` and return the hash. Raises DataError when the file is missing, or when
    its hash differs from ``sha256`` (or from its name, for a file named by its hash)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"LoRA adapter {p} not found")
    actual = sha256_file(p)
    _check(p, actual, expected_hash(p, sha256))
    return actual


def _check(path: Path, actual: str, expected: str | None) -> None:
    if expected is not None and actual != expected:
        raise DataError(
            f"LoRA adapter {path}: its sha256 is {actual}, expected {expected}; the file was "
            "changed or replaced after it was recorded, so it is not loaded"
        )


@contextlib.contextmanager
def verified_copy(path: str | Path, sha256: str | None = None) -> Iterator[tuple[Path, str]]:
    """Copy ``path`` to a private temporary file while hashing the bytes copied; yield
    (the copy, its sha256) when the hash matches (see ``expected_hash``), else raise DataError
    before anything is loaded. The copy is deleted on exit (llama.cpp reads an adapter fully
    when it loads it)."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"LoRA adapter {p} not found")
    fd, tmp = tempfile.mkstemp(prefix="evotrainer-lora-", suffix=SUFFIX)
    try:
        h = hashlib.sha256()
        with open(p, "rb") as src, os.fdopen(fd, "wb") as dst:
            for block in iter(lambda: src.read(1 << 20), b""):
                h.update(block)
                dst.write(block)
        actual = h.hexdigest()
        _check(p, actual, expected_hash(p, sha256))
        yield Path(tmp), actual
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def store_adapter(src: str | Path, out_dir: str | Path) -> tuple[Path, str]:
    """Copy an adapter file into ``out_dir`` under its hash name (atomic; a file already there
    under that name is kept). Returns (the stored path, its sha256)."""
    sha = sha256_file(src)
    out = Path(out_dir) / adapter_file_name(sha)
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f"{out.name}.{os.getpid()}.part")
        shutil.copyfile(src, tmp)
        tmp.replace(out)
    return out, sha
