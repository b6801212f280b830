"""Every engine cell: EvoTrainer itself (``inner_ga``: the outer loop off; ``evotrainer``:
co-evolution) and the profiles' variants of it (the scarce and dialogue profiles' harnesses,
the distill profile's alternation), one run each until the budget is spent. With a results
directory the run keeps its run directory, and a killed cell resumes from its last checkpoint
(benchmarks/engine.py, ``resume_point``)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from benchmarks import common as C
from benchmarks import engine
from benchmarks.bench import Bench, RunOut
from evotrainer.coevolution import CoEvolution


def run(bench: Bench, seed: int, *, name: str, outer: bool, harness: str | None) -> RunOut:
    """Cell ``name`` on ``seed``: the engine with the outer loop on or off; ``harness``: the
    profile's engine method whose harness it runs (benchmarks/engine.py ``config``)."""
    t0 = time.perf_counter()
    cache = bench.work / "cache" / f"{name}-seed{seed}.sqlite"
    cfg = engine.config(bench, seed, outer, cache, harness)
    if bench.train_cache is not None and cfg.distill.enabled:  # --train-cache
        distill = cfg.distill.model_copy(update={"cache_dir": str(bench.train_cache)})
        cfg = cfg.model_copy(update={"distill": distill})
    run_dir = None
    resumed: dict[str, Any] | None = None
    if bench.engine_runs is not None:  # a results directory keeps each run's events
        run_dir = bench.engine_runs / f"{name}-seed{seed}"
        resumed = engine.resume_point(run_dir, cfg, cache)
        if resumed is None:
            shutil.rmtree(run_dir, ignore_errors=True)  # nothing to resume: start afresh
    task, validation = engine.task(bench, cfg), engine.validation(bench)
    if resumed is None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{cache}{suffix}").unlink(missing_ok=True)
        co = CoEvolution(cfg, task=task, llm=bench.backend, validation=validation)
    else:  # a killed cell goes on from its last checkpoint (see resume_point)
        C.log(
            f"{name} seed {seed}: resuming {run_dir} from {resumed['checkpoint']} "
            f"(generation {resumed['generation']}; {resumed['forgotten']} answers of the "
            "generation in progress forgotten, to be paid again)"
        )
        co, _ = CoEvolution.resume(run_dir, task=task, llm=bench.backend, validation=validation)
    res = co.run(run_dir)
    details = _details(res, resumed)
    if bench.engine_runs is not None:
        details["summary"] = res.summary
        details["engine_config"] = cfg.model_dump(mode="json")
        details["run_dir"] = str(run_dir)
    return RunOut(res.best, res.best_s_val, co.components.budget, time.perf_counter() - t0, details)


def _details(res: Any, resumed: dict[str, Any] | None) -> dict[str, Any]:
    """What a cell records of its run: how it stopped, its generations and outer steps, the
    harness it ended with, the engine's own confirmation of what it returned."""
    s = res.summary
    final_note = (
        f"final best validated: s_val {s['last_best_s_val']:.4f}"
        if s.get("last_best_s_val") is not None
        else "final best not validated (no budget left)"
    )
    details = {
        "stopped": s["stopped"],
        "generations": s["generations"],
        "outer_steps": s["outer_steps"],
        "trial_generations": s["trial_generations"],
        "initial_s_val": s["initial_s_val"],
        "archive_best_s_val": res.best_s_val,
        "final_validation": final_note,
        "harness": s["harness"],
        "best_lineage": res.best.lineage.operator,
    }
    if "confirmation" in s:  # the engine's held-out check of what it returns
        details["confirmation"] = s["confirmation"]
    if resumed is not None:
        details["resumed"] = resumed
    return details
