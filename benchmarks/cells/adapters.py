"""The LoRA adapters the distill profiles' policies carry: found by their hash, kept beside
the cells that returned them, served to the test evaluation."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench import Bench
from evotrainer.config import CacheConfig
from evotrainer.llm.base import LLMClient
from evotrainer.llm.budget import Budget
from evotrainer.llm.spec import build_stack


def find_adapter(sha: str, *roots: Path) -> Path | None:
    """The GGUF file of the adapter with this hash under any of the roots, or None."""
    for root in roots:  # "**" also matches no directory: adapters/<sha>.gguf included
        found = sorted(root.glob(f"**/adapters/**/{sha}.gguf"))
        if found:
            return found[0]
    return None


def keep_adapters(rec: dict[str, Any], work: Path, results: Path) -> None:
    """Copy the adapters a finished cell's policies carry from the (git-ignored) work
    directory into ``results/adapters/``, so the test evaluation can run in a later session
    on a fresh checkout. A missing file is recorded in the cell, not raised."""
    for r in (rec.get("rows") or {}).values():
        sha = r["best_policy"].get("adapter")
        if not sha or (results / "adapters" / f"{sha}.gguf").is_file():
            continue
        src = find_adapter(sha, work)
        if src is None:
            rec.setdefault("missing_adapters", []).append(sha)
            continue
        (results / "adapters").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, results / "adapters" / f"{sha}.gguf")


def lost_adapter_cells(
    cells: dict[str, dict[str, Any]], results: Path, work: Path
) -> dict[str, str]:
    """Finished cells whose returned policy carries an adapter that is neither on disk (the
    results directory's adapters/, git-ignored: ~10 MB each, or the work directory) nor
    scored on every test meeting already: such a cell cannot be tested and runs again."""
    spath = results / "test" / "scores.json"
    scores = json.loads(spath.read_text()) if spath.is_file() else {}
    settings = results / "settings.json"
    tests = (
        json.loads(settings.read_text())["compared"]["data"]["test"] if settings.is_file() else {}
    )
    meetings = [(name, mid) for name, t in tests.items() for mid in t["ids"]]
    out = {}
    for c, rec in cells.items():
        if rec.get("status") != "ok":
            continue
        for r in rec["rows"].values():
            pid, sha = r["best_policy"].get("id"), r["best_policy"].get("adapter")
            if not sha or find_adapter(sha, results, work) is not None:
                continue
            scored = bool(meetings) and all(
                pid in scores.get(name, {}).get(mid, {}) for name, mid in meetings
            )
            if not scored:
                out[c] = f"its adapter {sha[:12]} is gone and it has no complete test score"
    return out


def adapter_clients(
    bench: Bench, roots: tuple[Path, ...], cache_cfg: CacheConfig, budget: Budget
) -> Callable[[str], LLMClient]:
    """The clients of the LoRA adapters the distill profile's policies carry: each adapter
    file found by its hash under the roots (the results directory's adapters/, then the work
    directory's engine run dirs and weights methods' adapters/), loaded once, verified by hash
    before llama.cpp reads it."""
    clients: dict[str, LLMClient] = {}

    def client(sha: str) -> LLMClient:
        if sha not in clients:
            from evotrainer.distill.serve import embedded_with_adapter

            found = find_adapter(sha, *roots)
            if found is None:
                where = ", ".join(str(r) for r in roots)
                raise FileNotFoundError(f"LoRA adapter {sha} not found under {where}")
            backend = embedded_with_adapter(found, sha, bench.model_config(), 0)
            clients[sha] = build_stack(backend, cache_cfg, budget).client
        return clients[sha]

    return client
