"""Running a results directory: the settings checked (settings.py), each cell of the grid not
finished yet run under its lock (one method on one seed, benchmarks/methods/) and written at
once, then the shared test evaluation (scoring.py), the summary and its tables."""

from __future__ import annotations

import argparse
import time
import traceback
from pathlib import Path
from typing import Any

from benchmarks import common as C
from benchmarks import engine
from benchmarks.bench import Bench, RunOut
from benchmarks.cells import settings
from benchmarks.cells.adapters import keep_adapters, lost_adapter_cells
from benchmarks.cells.grid import Cell, all_cells, cell_lock, cell_path, load_cells, select_cells
from benchmarks.cells.progress import Progress, wrapper
from benchmarks.cells.scoring import test_evaluate
from benchmarks.cells.summary import aggregate
from benchmarks.cells.table import table
from benchmarks.methods import registry


def results_dirs(args: argparse.Namespace, prof: dict[str, Any] | None = None) -> tuple[Path, Path]:
    """The results directory (``--results-dir``, else benchmarks/results/<results_name>) and
    the work directory beside it."""
    name = (prof or {}).get("results_name") or f"quality-{args.profile}"
    results = Path(args.results_dir) if args.results_dir else C.RESULTS / name
    work = Path(args.work_dir) if args.work_dir else C.WORK / f"quality-{results.name}"
    return results, work


def run(args: argparse.Namespace, prof: dict[str, Any]) -> dict[str, Any]:
    """The cells asked for (``--cells``, ``--methods``), the test evaluation, the summary."""
    results, work = results_dirs(args, prof)
    args.work_dir = str(work)
    grid = all_cells(prof["seeds"], registry.profile_methods(prof))
    cells = select_cells(grid, args.methods, args.cells)
    bench = Bench(args, prof)
    settings.check_settings(
        results,
        settings.compared_settings(args, prof, bench),
        settings.engine_settings(args, prof, bench),
        args,
        work,
    )
    C.log(f"results directory {results} (work files in {work})")
    bench.engine_runs = work / "runs"
    if getattr(args, "train_cache", False):
        bench.train_cache = results / "train-cache"
    if any(registry.get(m).engine for _, m, _ in cells) and not args.test_only:
        try:  # an engine without the profile's options fails here, not after hours
            engine.config(bench, 0, True)
            engine.validation(bench)
        except engine.EngineContractError as exc:
            raise SystemExit(str(exc)) from exc
        except Exception as exc:  # noqa: BLE001 - ConfigError, ValidationError
            raise SystemExit(f"engine config for this profile is invalid: {exc}") from exc
    progress = Progress(args.log_every_calls)
    if args.log_every_calls:
        bench.wrap_backend = wrapper(progress)
    try:
        if not args.test_only:
            run_cells(bench, cells, results, work, progress)
        if not args.skip_test:
            progress.reset("test evaluation")
            with cell_lock(work, "test-evaluation") as got:
                if got:
                    test_evaluate(bench, results, work, args)
                else:
                    C.log("test evaluation: running in another process, skipped here")
    finally:
        bench.close()
    doc = aggregate(results)
    C.write_json(results / "summary.json", doc)
    print(table(doc))
    return doc


def run_cells(
    bench: Bench, cells: list[Cell], results: Path, work: Path, progress: Progress
) -> None:
    """Each cell not finished yet (a finished one whose adapter is lost runs again), under
    its lock; its record written as soon as it ends."""
    done = load_cells(results)
    for cell, why in lost_adapter_cells(done, results, work).items():
        C.log(f"cell {cell}: run again: {why}")
        done.pop(cell)
    todo = [c for c in cells if done.get(c[0], {}).get("status") != "ok"]
    C.log(
        f"{len(cells)} cells asked for, {len(cells) - len(todo)} already finished, "
        f"{len(todo)} to run: {', '.join(c[0] for c in todo) or '-'}"
    )
    for n, (cell, method, seed) in enumerate(todo, 1):
        with cell_lock(work, cell) as got:
            if not got:
                C.log(f"cell {cell}: running in another process, skipped")
                continue
            if load_cells(results).get(cell, {}).get("status") == "ok":
                continue  # another process finished it meanwhile
            C.log(f"cell {cell} ({n}/{len(todo)}): start")
            progress.reset(cell)
            rec = run_cell(bench, cell, method, seed)
            keep_adapters(rec, work, results)
            C.write_json(cell_path(results, cell), rec)
            C.log(f"cell {cell}: {brief(rec)}")


def run_record(r: RunOut) -> dict[str, Any]:
    return {
        "best_policy": {**r.best.to_json(), "text": r.best.render()},
        "selection_s_val": r.selection_s_val,
        **C.usage(r.stack_budget),
        "wall_s": round(r.wall_s, 2),
        "details": r.details,
    }


def run_cell(bench: Bench, cell: str, method: str, seed: int | None) -> dict[str, Any]:
    """One method on one seed: its record (status, rows, times, commit); a failing method is a
    result (status failed, the error and its traceback), not an exception."""
    args = bench.args
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    t0, cpu0 = time.perf_counter(), time.process_time()
    rec: dict[str, Any] = {
        "cell": cell,
        "method": method,
        "seed": seed,
        "started": started,
        **settings.git_state(),
        "model": args.model,
        "threads": args.threads,
    }
    try:
        got = registry.get(method).run(bench, 0 if seed is None else seed)
    except Exception as exc:  # noqa: BLE001 - a failing method is a result
        rec.update(
            status="failed",
            error=f"{type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(limit=8),
        )
    else:
        rows = got if isinstance(got, dict) else {method: got}
        rec["status"] = "ok"
        rec["rows"] = {row: run_record(r) for row, r in rows.items()}
    rec["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    rec["wall_s"] = round(time.perf_counter() - t0, 2)
    rec["process_cpu_s"] = round(time.process_time() - cpu0, 1)
    if method in ("gepa", "evoprompt_ga") and bench.endpoint_info:
        rec["endpoint"] = bench.endpoint_info
    return rec


def brief(rec: dict[str, Any]) -> str:
    if rec.get("status") != "ok":
        return f"FAILED {rec.get('error', '?')}"
    parts = []
    for row, r in rec["rows"].items():
        s = r["selection_s_val"]
        parts.append(
            f"{row}: selection s_val {'n/a' if s is None else f'{s:.3f}'}, {r['calls']} calls, "
            f"policy {r['best_policy']['id']}"
        )
    return "; ".join(parts) + f" ({rec['wall_s']:.0f} s)"
