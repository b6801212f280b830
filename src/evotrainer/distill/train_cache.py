"""A cache of trained adapters keyed by everything the training reads (``distill.cache_dir``).

A LoRA training is deterministic given its pairs, settings (the seed and the CPU thread
count among them), base model, starting weights and code (``train.py``; tests/test_distill.py
checks it), so an identical training can be read back instead of run. The key is the sha256
of: the pairs' messages, completions and weights (not their notes of origin), the settings
with the thread count resolved (``distill.threads`` unset: the free cores now, as the
training would take them), the base GGUF's and the starting adapter's sha256, the source of
the training code (this package's files that shape the weights), the versions of the
libraries it runs on, and the machine's architecture.

Under ``cache_dir`` an entry is ``<key>.json`` (the training's record, as ``AdapterResult``)
and the adapter ``<sha256>.gguf``. A hit copies the adapter into the run's adapter folder, its
bytes hashed against the record first (never through a symbolic link); the record keeps the
original training's times and CPU seconds (what the adapter cost) and the run's distillation
record says ``cache: {reused: true}``. A damaged entry (unreadable record, missing or changed
adapter) is trained again and replaced, and the record says why. A cache that cannot be
written costs nothing but the reuse: the training's result stands, the record says why.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from evotrainer.distill import base_model
from evotrainer.distill.pairs import TrainingPair
from evotrainer.distill.settings import LoraSettings
from evotrainer.distill.train import AdapterResult
from evotrainer.llm import llamacpp
from evotrainer.llm.adapter_file import adapter_file_name, sha256_file, verified_copy

KEY_VERSION = 1
# the package files whose code shapes an adapter's bytes
CODE_FILES = ("train.py", "export.py", "base_model.py", "pairs.py", "settings.py")
LIBRARIES = ("torch", "transformers", "peft", "gguf", "numpy")

Train = Callable[..., Any]  # distill.train.train_adapter's signature


@lru_cache(maxsize=32)
def _file_sha(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(path)


def file_sha(path: str | Path) -> str:
    """The sha256 of a file, remembered while its size and modification time stay."""
    st = os.stat(path)
    return _file_sha(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


def code_sha() -> str:
    """The sha256 of the training code's source (``CODE_FILES``)."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in CODE_FILES:
        h.update(name.encode())
        h.update((here / name).read_bytes())
    return h.hexdigest()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def training_key(
    pairs: Sequence[TrainingPair],
    settings: LoraSettings,
    base_path: str | Path,
    start_from: str | Path | None = None,
) -> str:
    """The cache key of a training (see the module's doc). ``settings.threads`` must be set:
    the thread count changes the floating-point sums, so the bytes."""
    if settings.threads is None:
        raise ValueError("training_key: settings.threads must be resolved (a number)")
    material = {
        "version": KEY_VERSION,
        "pairs": [
            [[[m.role, m.content] for m in p.messages], p.completion, p.weight] for p in pairs
        ],
        "settings": settings.to_dict(),
        "base_model": file_sha(base_path),
        "start_from": file_sha(start_from) if start_from is not None else None,
        "code": code_sha(),
        "libraries": {name: _version(name) for name in LIBRARIES},
        "machine": platform.machine(),
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def train_cached(
    train: Train,
    cache_dir: str | Path,
    pairs: Sequence[TrainingPair],
    settings: LoraSettings,
    out_dir: str | Path,
    progress: Any = None,
    start_from: str | Path | None = None,
) -> tuple[Any, dict[str, Any]]:
    """``train(pairs, settings, out_dir, progress[, start_from=])`` unless ``cache_dir``
    holds the same training; returns its ``AdapterResult`` and a note for the record
    (``key``, ``reused``, and ``damaged`` or ``not_stored`` with why)."""
    if settings.threads is None:  # what the training would take now, fixed for the key
        settings = replace(settings, threads=llamacpp.auto_threads())
    key = training_key(pairs, settings, base_model.base_gguf(), start_from)
    cache, out = Path(cache_dir), Path(out_dir)
    note: dict[str, Any] = {"key": key, "reused": False}
    if (cache / f"{key}.json").exists():
        try:
            return _reuse(cache, key, out), {**note, "reused": True}
        except Exception as exc:  # noqa: BLE001 - a damaged entry is trained again
            note["damaged"] = f"{type(exc).__name__}: {exc}"
    extra = {"start_from": start_from} if start_from is not None else {}
    result = train(pairs, settings, out, progress, **extra)
    try:
        _store(cache, key, result)
    except OSError as exc:
        note["not_stored"] = f"{cache}: {exc.strerror or exc}"
    return result, note


def _reuse(cache: Path, key: str, out: Path) -> AdapterResult:
    """The entry's result with its adapter copied into ``out`` (hashed against the record)."""
    record = json.loads((cache / f"{key}.json").read_text(encoding="utf-8"))
    sha = str(record["sha256"])
    dest = out / adapter_file_name(sha)
    with verified_copy(cache / adapter_file_name(sha), sha) as (copy, _):
        _copy_atomic(copy, dest)
    record["adapter_path"] = str(dest)
    record["losses"] = tuple(record["losses"])
    record["pairs_skipped"] = tuple(tuple(s) for s in record["pairs_skipped"])
    return AdapterResult(**record)


def _store(cache: Path, key: str, result: Any) -> None:
    record = result.to_dict()
    cache.mkdir(parents=True, exist_ok=True)
    _copy_atomic(Path(record["adapter_path"]), cache / adapter_file_name(record["sha256"]))
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=".entry-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1)
        os.replace(tmp, cache / f"{key}.json")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _copy_atomic(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".copy-", suffix=dest.suffix)
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
