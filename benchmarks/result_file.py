"""The quick and full profiles' runs: every method on every seed in one process, into one JSON
file (``--out``, default benchmarks/results/quality-PROFILE.json) rewritten after each run,
then every chosen policy scored on the test meetings. The methods are the registry's
(benchmarks/methods/), the same as a results directory's cells; only the record differs.

    python benchmarks/quality.py --profile quick                          # < 60 min, 2 cores
    python benchmarks/quality.py --table benchmarks/results/quality-quick.json
    python benchmarks/quality.py --rescore benchmarks/results/quality-quick.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from benchmarks import common as C
from benchmarks import engine
from benchmarks.bench import Bench, RunOut
from benchmarks.methods import registry
from evotrainer.config import CacheConfig, RunConfig
from evotrainer.evaluation.validation import Validator
from evotrainer.llm.budget import Budget
from evotrainer.llm.spec import build_stack
from evotrainer.policy.genome import PolicyGenome

TEST_KEYS = ("rougeL", "action_item_f1", "rouge1", "rouge2", "decision_recall")
Runs = dict[str, list[tuple[int, RunOut | None, str | None]]]  # row -> (seed, run, error)


def methods_asked(args: argparse.Namespace) -> list[str]:
    """``--methods`` (default every method of a profile that names none), checked."""
    known = registry.DEFAULT
    methods = [m.strip() for m in args.methods.split(",")] if args.methods else list(known)
    unknown = sorted(set(methods) - set(known))
    if unknown:
        raise SystemExit(f"unknown method(s) {unknown}; known: {', '.join(known)}")
    try:  # a typo in --engine-set fails here, not in every engine run
        engine.with_overrides(RunConfig(), args.engine_set)
    except Exception as exc:  # noqa: BLE001 - ConfigError, ValidationError
        raise SystemExit(f"--engine-set {args.engine_set}: {exc}") from exc
    return methods


def run(args: argparse.Namespace, prof: dict[str, Any]) -> dict[str, Any]:
    if args.cells or args.test_only or args.skip_test:
        raise SystemExit(
            "--cells, --test-only and --skip-test need a results directory "
            "(--profile standard or --results-dir DIR)"
        )
    methods = methods_asked(args)
    t0 = time.perf_counter()
    bench = Bench(args, prof)
    out_path = Path(args.out) if args.out else C.RESULTS / f"quality-{args.profile}.json"
    doc = _header(args, prof, bench)
    runs: Runs = {r: [] for r in registry.ROWS}
    try:
        for name in (m for m in registry.DEFAULT if m in methods):
            for seed in range(prof["seeds"]) if name != "seeds" else [0]:
                _run_one(bench, name, seed, prof["seeds"], runs)
                _fill(doc, runs, {}, partial=True)
                C.write_json(out_path, doc)
        policies = [r.best for rows in runs.values() for _, r, _ in rows if r is not None]
        C.log(f"test evaluation of {len({p.id for p in policies})} distinct policies")
        test, test_info = test_evaluate(bench, policies) if policies else ({}, {})
        doc["test_evaluation"] = test_info
        doc["endpoint"] = bench.endpoint_info
    finally:
        bench.close()
    _fill(doc, runs, test, partial=False)
    doc["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    doc["elapsed_s"] = round(time.perf_counter() - t0, 1)
    C.write_json(out_path, doc)
    C.log(f"wrote {out_path} ({doc['elapsed_s']:.0f} s)")
    print(table(doc))
    return doc


def _header(args: argparse.Namespace, prof: dict[str, Any], bench: Bench) -> dict[str, Any]:
    return {
        "benchmark": "quality",
        "profile": args.profile,
        "command": "python " + " ".join([sys.argv[0], *args.argv]),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": C.machine(),
        "model": args.model,
        "threads": args.threads or getattr(bench.backend, "n_threads", None),
        "settings": {**prof, **({"engine_set": args.engine_set} if args.engine_set else {})},
        "s_val_weights": bench.weights,
        "data": {
            "selection": bench.selection.info,
            "gepa_train": bench.gepa_train.info,
            "test": bench.test.info,
            "truncation": f"head_tail at {prof['max_input_tokens']} estimated tokens, all methods",
        },
        "methods": {
            row: {"description": registry.DESCRIPTIONS[row], "runs": []} for row in registry.ROWS
        },
        "partial": True,
    }


def _run_one(bench: Bench, name: str, seed: int, n_seeds: int, runs: Runs) -> None:
    """Method ``name`` on ``seed`` into ``runs``; a failure is recorded, not raised. The seeds
    are deterministic (temperature 0): their one run stands for every seed."""
    C.log(f"{name} seed {seed}: start")
    cpu0 = time.process_time()
    try:
        got = registry.get(name).run(bench, seed)
    except Exception as exc:  # noqa: BLE001 - a failing method is a result
        err = f"{type(exc).__name__}: {exc}"
        C.log(f"{name} seed {seed}: FAILED {err}")
        runs[name].append((seed, None, f"{err}\n{traceback.format_exc(limit=6)}"))
        return
    for r in got.values() if isinstance(got, dict) else [got]:
        r.details.setdefault("process_cpu_s", round(time.process_time() - cpu0, 1))
    if isinstance(got, dict):
        for row, r in got.items():
            for s in range(n_seeds):
                runs[row].append((s, r, None))
        C.log(f"seeds: {_brief(got['seed_best'])}")
    else:
        runs[name].append((seed, got, None))
        C.log(f"{name} seed {seed}: {_brief(got)}")


def _brief(r: RunOut) -> str:
    s = "n/a" if r.selection_s_val is None else f"{r.selection_s_val:.3f}"
    b = r.stack_budget.snapshot()
    return f"selection s_val {s}, {b['backend_calls']} calls, {r.wall_s:.0f}s, best {r.best.id}"


def _fill(doc: dict[str, Any], runs: Runs, test: dict[str, Any], partial: bool) -> None:
    for row, items in runs.items():
        rec = doc["methods"][row]
        rec["runs"] = []
        for seed, r, err in items:
            if r is None:
                rec["runs"].append({"seed": seed, "status": "failed", "error": err})
                continue
            item = {
                "seed": seed,
                "status": "ok",
                "best_policy": {"id": r.best.id, "text": r.best.render()[:1500]},
                "selection_s_val": r.selection_s_val,
                **C.usage(r.stack_budget),
                "wall_s": round(r.wall_s, 2),
                "details": r.details,
            }
            if r.best.id in test:
                item["test"] = test[r.best.id]
            rec["runs"].append(item)
        _aggregate(rec)
    doc["partial"] = partial


def _aggregate(rec: dict[str, Any]) -> None:
    """Mean and std over the seeds of one method's runs."""
    ok = [x for x in rec["runs"] if x["status"] == "ok"]
    agg: dict[str, Any] = {
        "n_ok": len(ok),
        "n_failed": len(rec["runs"]) - len(ok),
        "selection_s_val": C.mean_std([x["selection_s_val"] for x in ok]),
        "calls": C.mean_std([x["calls"] for x in ok]),
        "tokens": C.mean_std([x["tokens"] for x in ok]),
        "wall_s": C.mean_std([x["wall_s"] for x in ok]),
    }
    for key in ("s_val", *TEST_KEYS):
        agg[f"test_{key}"] = C.mean_std([x.get("test", {}).get(key) for x in ok])
    rec["aggregate"] = agg
    if rec["runs"] and not ok:
        rec["error"] = rec["runs"][0]["error"].splitlines()[0]


def test_evaluate(bench: Bench, policies: list[PolicyGenome]) -> tuple[dict[str, Any], dict]:
    """All chosen policies on the test meetings, instance-major, through the library's
    evaluation (and, for real models, one persistent cache: identical prompts give identical
    outputs)."""
    t0 = time.perf_counter()
    if bench.args.model == C.FAKE_SPEC or bench.args.no_test_cache:
        cache_cfg = CacheConfig(enabled=False)
    else:
        cache_cfg = CacheConfig(enabled=True, path=str(C.WORK / "cache" / "test-shared.sqlite"))
    stack = build_stack(bench.backend, cache_cfg, Budget())
    ev = bench.evaluator(stack.client, 0)
    val = Validator(bench.task, ev, bench.test.instances, bench.weights, bench.test.info["source"])
    res = val.validate(policies)
    out = {}
    for p in policies:
        r = res[p.id]
        out[p.id] = {
            "s_val": r.s_val,
            **{k: r.aggregates.get(k) for k in TEST_KEYS},
            "n_action_items": r.aggregates.get("n_action_items"),
            "errors": sum(1 for row in r.per_instance if row.get("error")),
        }
    info = {**C.usage(stack.budget), "wall_s": round(time.perf_counter() - t0, 2)}
    info["distinct_policies"] = len({p.id for p in policies})
    return out, info


def rescore(args: argparse.Namespace) -> dict[str, Any]:
    """Score the chosen policies of an existing (possibly partial) result file on the test
    meetings and rewrite its test fields: for a run that was stopped before its test phase."""
    path = Path(args.rescore)
    doc = json.loads(path.read_text())
    prof = dict(doc["settings"])
    args.model = doc["model"]
    args.threads = args.threads or doc.get("threads")
    bench = Bench(args, prof)
    pols = {
        run["best_policy"]["id"]: PolicyGenome.from_text(run["best_policy"]["text"])
        for rec in doc["methods"].values()
        for run in rec["runs"]
        if run["status"] == "ok"
    }
    test, info = test_evaluate(bench, list(pols.values()))
    by_text = {p.render(): test[p.id] for p in pols.values()}
    for rec in doc["methods"].values():
        for run in rec["runs"]:
            if run["status"] == "ok":
                run["test"] = by_text[run["best_policy"]["text"]]
        _aggregate(rec)
    doc["test_evaluation"] = {**info, "rescored": time.strftime("%Y-%m-%d %H:%M:%S")}
    C.write_json(path, doc)
    print(table(doc))
    return doc


def table(doc: dict[str, Any]) -> str:
    """The markdown results table of docs/benchmarks.md."""
    head = (
        "| method | test ROUGE-L | test action-item F1 | test s_val | selection s_val "
        "| calls | tokens | wall s |\n|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for row, rec in doc["methods"].items():
        a = rec.get("aggregate") or {}
        if not rec["runs"]:
            continue
        if a.get("n_ok", 0) == 0:
            lines.append(f"| {row} | failed: {rec.get('error', '?')[:80]} | | | | | | |")
            continue
        calls = a["calls"]["mean"]
        tokens = a["tokens"]["mean"]
        lines.append(
            f"| {row} | {C.fmt(a['test_rougeL'])} | {C.fmt(a['test_action_item_f1'])} "
            f"| {C.fmt(a['test_s_val'])} | {C.fmt(a['selection_s_val'])} "
            f"| {calls:.0f} | {tokens:.0f} | {a['wall_s']['mean']:.0f} |"
        )
    return "\n".join(lines)
