"""Checkpoints: written atomically (temp file, fsync, rename) after every generation; each file
carries a sha256 of its state, so a truncated or corrupt file is detected and the previous one is
used. ``checkpoints/index.json`` is the readable index (generation, outer step, best, s_val)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from evotrainer.errors import CheckpointError

KEEP = 3


def _digest(state: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def save_checkpoint(run_dir: Path, seq: int, state: dict[str, Any], index: dict[str, Any]) -> Path:
    ckdir = run_dir / "checkpoints"
    path = ckdir / f"ckpt-{seq:05d}.json"
    atomic_write(path, json.dumps({"sha256": _digest(state), "state": state}))
    files = sorted(ckdir.glob("ckpt-*.json"))
    for old in files[:-KEEP]:
        old.unlink(missing_ok=True)
    atomic_write(ckdir / "index.json", json.dumps({**index, "file": path.name}, indent=2))
    return path


def load_latest(run_dir: Path) -> tuple[dict[str, Any], Path, list[str]]:
    """The newest intact checkpoint's state, its path, and warnings about skipped files."""
    files = sorted((run_dir / "checkpoints").glob("ckpt-*.json"), reverse=True)
    warnings = []
    for path in files:
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
            state = payload["state"]
            if _digest(state) != payload["sha256"]:
                raise ValueError("checksum mismatch")
            return state, path, warnings
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warnings.append(f"skipped corrupt checkpoint {path.name}: {exc}")
    raise CheckpointError(
        f"no intact checkpoint in {run_dir / 'checkpoints'}"
        + (f" ({'; '.join(warnings)})" if warnings else "")
    )
