"""The cell grid of a results directory: the cells of a profile in run order, the filters of
the command line, the cells' files and their locks (``evotrainer.run.lock.RunLock``, one lock
file per cell under the work directory's locks/: two processes on one results directory run
different cells instead of the same one twice)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks.methods import registry
from evotrainer.run.lock import LockHeld, RunLock

Cell = tuple[str, str, int | None]  # (cell id, method, seed); the seeds cell has no seed


def cell_id(method: str, seed: int | None) -> str:
    return method if seed is None else f"{method}-seed{seed}"


def all_cells(n_seeds: int, methods: Sequence[str] = registry.DEFAULT) -> list[Cell]:
    """(cell id, method, seed) of the whole grid in run order: ``seeds`` once (deterministic),
    then seed by seed every other method, so a run stopped halfway has whole seeds to compare."""
    out: list[Cell] = []
    if "seeds" in methods:
        out.append((cell_id("seeds", None), "seeds", None))
    for s in range(n_seeds):
        out += [(cell_id(m, s), m, s) for m in methods if m != "seeds"]
    return out


def select_cells(cells: list[Cell], methods: str | None, only: str | None) -> list[Cell]:
    """Filter by ``--methods a,b`` and ``--cells METHOD[:SEED],...`` (both optional)."""
    if methods:
        wanted = {m.strip() for m in methods.split(",") if m.strip()}
        unknown = sorted(wanted - set(registry.NAMES))
        if unknown:
            raise SystemExit(f"unknown method(s) {unknown}; known: {', '.join(registry.NAMES)}")
        cells = [c for c in cells if c[1] in wanted]
    if only:
        keep: set[str] = set()
        for item in (x.strip() for x in only.split(",")):
            if not item:
                continue
            method, _, seed = item.partition(":")
            hit = {
                c[0]
                for c in cells
                if c[0] == item or (c[1] == method and (not seed or str(c[2]) == seed))
            }
            if not hit:
                known = ", ".join(c[0] for c in cells)
                raise SystemExit(f"--cells {item!r} matches no cell; cells: {known}")
            keep |= hit
        cells = [c for c in cells if c[0] in keep]
    return cells


def cell_path(results: Path, cell: str) -> Path:
    return results / "cells" / f"{cell}.json"


def load_cells(results: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for p in sorted((results / "cells").glob("*.json")):
        with contextlib.suppress(json.JSONDecodeError, OSError):
            out[p.stem] = json.loads(p.read_text())
    return out


def _lock(work: Path, cell: str) -> RunLock:
    return RunLock(work / "locks", f"{cell}.lock")


@contextlib.contextmanager
def cell_lock(work: Path, cell: str) -> Iterator[bool]:
    """The cell's exclusive lock while the block runs: True if got, False when another process
    holds it."""
    lock = _lock(work, cell)
    lock.path.parent.mkdir(parents=True, exist_ok=True)
    try:
        lock.acquire()
    except LockHeld:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def is_running(work: Path | None, cell: str) -> bool:
    """Whether some process holds the cell's lock now."""
    return work is not None and _lock(work, cell).in_use()
