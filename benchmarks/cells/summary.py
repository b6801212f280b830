"""summary.json of a results directory, from its settings, cells and test scores: per test set
(and pooled) each method's mean test scores and its paired difference to seed_best with a 95%
bootstrap interval over meetings (benchmarks/stats.py: the library's statistics), what its
answers are, the method-against-method comparisons and the issues' targets
(comparisons.py), the training cost of the distill methods and the engine's own confirmations.
Reading only: a table of a stored directory needs no model and writes nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks import common as C
from benchmarks import stats
from benchmarks.cells import answers
from benchmarks.cells.comparisons import ALL, Meetings, Runs, compare_methods, mean, targets, vector
from benchmarks.cells.grid import all_cells, is_running, load_cells
from benchmarks.methods import registry

BASELINE = "seed_best"
SEED_ROWS = tuple(registry.SEED_ROWS)
# the two metrics summaries show beside s_val, per task: (key, label); the first gets a Δ column
COLUMNS = {
    "meetings": (("rougeL", "ROUGE-L"), ("action_item_f1", "action-item F1")),
    "dialogue": (("request_recall", "request recall"), ("grounded", "grounded")),
}


def columns(settings: dict[str, Any]) -> tuple[tuple[str, str], tuple[str, str]]:
    """The profile's two metric columns beside s_val (its task's)."""
    return COLUMNS[settings.get("task", "meetings")]  # type: ignore[return-value]


def aggregate(results: Path) -> dict[str, Any]:
    """summary.json: cell status; per method its runs, selection and cost; per test set (and
    pooled) its test means and paired differences to seed_best; comparisons and targets."""
    settings = json.loads((results / "settings.json").read_text())
    comp = settings["compared"]
    n_seeds = int(comp["settings"]["seeds"])
    cells = load_cells(results)
    spath = results / "test" / "scores.json"
    scores = json.loads(spath.read_text()) if spath.is_file() else {}
    runs = runs_by_row(cells)
    sets: dict[str, Meetings] = {
        name: [(name, mid) for mid in t["ids"]] for name, t in comp["data"]["test"].items()
    }
    if len(sets) > 1:
        sets[ALL] = [m for v in list(sets.values()) for m in v]
    base = runs.get(BASELINE) or []
    base_pid = base[0][1]["best_policy"]["id"] if base else None
    doc = _head(results, settings, cells)
    keys = columns(comp["settings"])
    methods = registry.profile_methods(comp["settings"])
    for row in (
        r for m in registry.REGISTRY for r in m.rows if m.always_listed or m.name in methods
    ):
        rr = runs.get(row) or []
        rec = _method_record(row, rr)
        pids = [r["best_policy"]["id"] for _, r in rr]
        for name, meetings in sets.items():
            if pids:
                rec["test"][name] = _test_record(scores, meetings, pids, base_pid, keys)
        doc["methods"][row] = rec
    doc["comparisons"] = compare_methods(runs, scores, sets)
    doc["targets"] = targets(doc, n_seeds)
    doc["training_cost"] = training_cost(cells)
    for c, rec in sorted(cells.items()):
        if rec.get("status") != "ok":
            continue
        for row, r in rec["rows"].items():
            conf = (r.get("details") or {}).get("confirmation")
            if conf is not None:
                doc["confirmation"][f"{c}" if row == rec["method"] else f"{c}/{row}"] = conf
    return doc


def _head(results: Path, settings: dict[str, Any], cells: dict[str, dict]) -> dict[str, Any]:
    """The summary's first fields: what ran, each cell's status (running: its lock is held)."""
    comp = settings["compared"]
    grid = all_cells(int(comp["settings"]["seeds"]), registry.profile_methods(comp["settings"]))
    work = Path(settings["work_dir"]) if settings.get("work_dir") else None
    status = {
        c: (
            "running"
            if cells.get(c, {}).get("status") != "ok" and is_running(work, c)
            else "missing"
            if c not in cells
            else cells[c].get("status", "?")
            + ("" if cells[c].get("status") == "ok" else f": {cells[c].get('error', '')[:100]}")
        )
        for c, _, _ in grid
    }
    return {
        "benchmark": "quality (cells)",
        "results_dir": str(results),
        "aggregated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "profile": comp["profile"],
        "model": comp["model"],
        "settings": comp["settings"],
        "engine": settings.get("engine"),
        "data": comp["data"],
        "cells": status,
        "complete": all(v == "ok" for v in status.values()),
        "commits": sorted({str(c.get("commit")) for c in cells.values()}),
        "bootstrap": {
            "resamples": stats.N_RESAMPLES,
            "seed": stats.SEED,
            "level": stats.LEVEL,
            "what": "mean over meetings of (method's score averaged over its seeds' returned "
            "policies - seed_best's score), meetings resampled with replacement",
        },
        "methods": {},
        "confirmation": {},
    }


def _method_record(row: str, rr: list[tuple[int | None, dict[str, Any]]]) -> dict[str, Any]:
    """A row's runs (one per seed), selection and cost; ``test`` is filled per test set."""
    return {
        "description": registry.DESCRIPTIONS.get(row, ""),
        "runs": [
            {
                "seed": seed,
                "policy": r["best_policy"]["id"],
                "name": r["best_policy"].get("name"),
                "components": sorted(r["best_policy"].get("components", {})),
                "adapter": r["best_policy"].get("adapter"),
                "selection_s_val": r["selection_s_val"],
                "calls": r["calls"],
                "tokens": r["tokens"],
                "wall_s": r["wall_s"],
            }
            for seed, r in rr
        ],
        "selection_s_val": C.mean_std([r["selection_s_val"] for _, r in rr]),
        "calls": C.mean_std([r["calls"] for _, r in rr]),
        "tokens": C.mean_std([r["tokens"] for _, r in rr]),
        "wall_s": C.mean_std([r["wall_s"] for _, r in rr]),
        "test": {},
    }


def _test_record(
    scores: dict,
    meetings: Meetings,
    pids: list[str],
    base_pid: str | None,
    keys: tuple[tuple[str, str], tuple[str, str]],
) -> dict[str, Any]:
    """One row on one test set: s_val and the two columns (mean over meetings of the seed
    average, per run, over runs), the paired differences to seed_best (s_val and the first
    column), the items written where the reference lists none, the answers' columns."""
    t: dict[str, Any] = {"n_meetings": len(meetings)}
    (first, _), (second, _) = keys
    for key in ("s_val", first, second):
        vecs = [vector(scores, meetings, pid, key) for pid in pids]
        per_run = [mean(v) for v in vecs]
        seed_avg = [mean([v[m] for v in vecs]) for m in range(len(meetings))]
        t[key] = {
            "mean": mean(seed_avg),
            "per_run": per_run,
            "over_runs": C.mean_std(per_run),
            "n_scored": sum(x is not None for x in seed_avg),
        }
        if key == second or base_pid is None:
            continue
        bvec = vector(scores, meetings, base_pid, key)
        t[f"diff_{key}"] = stats.paired_difference(vecs, bvec)
        t[f"diff_{key}_per_run"] = [stats.paired_difference([v], bvec) for v in vecs]
        if key == "s_val":
            t["diff_s_val_seeds_meetings"] = stats.seeds_and_meetings_difference(vecs, [bvec])
    t["items_where_reference_lists_none"] = items_where_reference_lists_none(scores, meetings, pids)
    t["answers"] = answers.columns(scores, meetings, pids)  # minutes or loops?
    return t


def runs_by_row(cells: dict[str, dict[str, Any]]) -> Runs:
    """row -> [(seed, run record)] over the finished cells (the seeds cell stands for every
    seed; its rows are listed once, seed None)."""
    out: Runs = {row: [] for row in registry.ALL_ROWS}
    for rec in cells.values():
        if rec.get("status") != "ok":
            continue
        for row, r in rec["rows"].items():
            out.setdefault(row, []).append((rec.get("seed"), r))
    for runs in out.values():
        runs.sort(key=lambda t: -1 if t[0] is None else t[0])
    return out


def items_where_reference_lists_none(
    scores: dict, meetings: Meetings, pids: list[str]
) -> dict[str, Any] | None:
    """On the meetings whose reference lists no action item (where ``skip`` leaves action-item
    F1 undefined): the items each run's policy wrote there, in total and the meetings with any.
    None when no such meeting is known (ICSI, or scores recorded before the field)."""
    empty = [
        (name, mid)
        for name, mid in meetings
        if any(r.get("reference_items") == 0 for r in scores.get(name, {}).get(mid, {}).values())
    ]
    if not empty:
        return None
    per_run = []
    for pid in pids:
        counts = [c for c in vector(scores, empty, pid, "n_action_items") if c is not None]
        per_run.append(
            {"items": int(sum(counts)), "meetings_with_items": sum(c > 0 for c in counts)}
            if counts
            else None
        )
    return {"meetings": len(empty), "per_run": per_run}


def training_cost(cells: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per method, per finished cell: the cell's process CPU seconds (inference, operators and
    training together) and what its LoRA training cost (CPU and wall seconds, adapters trained
    and kept). A weights method trains once (details.training) and keeps its adapter when it
    returns it; an engine cell trains once per distillation round (summary.distillations; a
    round skipped for want of calls or pairs trains nothing and says why). Methods that
    train nothing are left out."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c, rec in sorted(cells.items()):
        if rec.get("status") != "ok":
            continue
        for row, r in rec["rows"].items():
            d = r.get("details") or {}
            returned = bool(r["best_policy"].get("adapter"))
            if d.get("training"):  # weights_only, sft_refs
                t = d["training"]
                rounds = [{"adapter": t.get("sha256"), "kept": returned, "training": t}]
                cpu_key = "process_cpu_s"
            elif rec.get("method") in registry.DISTILL and "summary" in d:
                rounds = d["summary"].get("distillations") or []
                cpu_key = "cpu_seconds"
            else:
                continue
            cost = _cost(c, rec, rounds, cpu_key, returned)
            if "summary" in d and d.get("resumed"):  # its run's times, across resumes
                cost.update(_engine_times(d))
            out.setdefault(row, []).append(cost)
    return out


def _engine_times(details: dict[str, Any]) -> dict[str, Any]:
    """A resumed engine cell's wall and CPU seconds from its run's summary, which counts
    every session (the cell's own record counts its last process only). A run whose engine
    did not record its CPU (``cpu_s``, added 2026-12-07) has no known CPU total: None."""
    s = details["summary"]
    out: dict[str, Any] = {"cell_cpu_s": s.get("cpu_s")}
    if s.get("wall_s") is not None:
        out["cell_wall_s"] = s["wall_s"]
    return out


def _cost(
    cell: str, rec: dict[str, Any], rounds: list[dict[str, Any]], cpu_key: str, returned: bool
) -> dict[str, Any]:
    trained = [x for x in rounds if x.get("adapter")]
    runs = [x.get("training") or {} for x in trained]
    cpus = [t.get(cpu_key) for t in runs]
    reused = sum(1 for t in runs if (t.get("cache") or {}).get("reused"))
    out = {
        "cell": cell,
        "seed": rec.get("seed"),
        "cell_cpu_s": rec.get("process_cpu_s"),
        "cell_wall_s": rec.get("wall_s"),
        "adapters_trained": len(trained),
        "adapters_kept": sum(1 for x in trained if x.get("kept")),
        "returned_adapter": returned,
        "train_cpu_s": None if not cpus or None in cpus else round(sum(cpus), 1),
        "train_wall_s": round(sum(t.get("seconds", 0) + t.get("load_seconds", 0) for t in runs), 1)
        if runs
        else None,
        "not_trained": [x.get("why") for x in rounds if not x.get("adapter")],
    }
    if reused:  # read back from --train-cache: their CPU seconds are the original training's
        out["adapters_reused"] = reused
    return out
