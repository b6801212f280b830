"""The shared test evaluation of a results directory: every policy the finished cells returned
(and the seeds A, B, C) on every test meeting, through the library's evaluation (the bench's
``evaluator``: ``evotrainer eval``'s) and ``Validator``, instance-major (all policies on one
meeting back to back: one prefill of its transcript), through a persistent response cache;
scores saved every ``--log-every`` meetings, so a resumed evaluation pays only for new pairs."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import common as C
from benchmarks.bench import Bench
from benchmarks.cells import answers
from benchmarks.cells.adapters import adapter_clients, lost_adapter_cells
from benchmarks.cells.grid import load_cells
from evotrainer.config import CacheConfig
from evotrainer.evaluation.validation import Validator, combine_s_val
from evotrainer.llm.budget import Budget
from evotrainer.llm.spec import build_stack
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.meetings.rewards import reference_action_items
from evotrainer.types import Instance

# the metric keys a test score keeps, per task
SCORE_KEYS = {
    "meetings": (
        "rougeL",
        "action_item_f1",
        "rouge1",
        "rouge2",
        "decision_recall",
        "n_action_items",
    ),
    "dialogue": ("request_recall", "inform_match", "grounded"),
}


def test_policies(
    cells: dict[str, dict[str, Any]], seeds: Sequence[PolicyGenome]
) -> dict[str, PolicyGenome]:
    """The seeds A, B, C (the task's, with the profile's genes) and every policy a finished
    cell returned (deduplicated by id)."""
    pols = {p.id: p for p in seeds}
    for rec in cells.values():
        if rec.get("status") != "ok":
            continue
        for r in rec["rows"].values():
            p = PolicyGenome.from_json(r["best_policy"])
            pols.setdefault(p.id, p)
    return pols


def reference_items(inst: Instance) -> int | None:
    """How many action items the meeting's reference lists, as the metric reads them (0 is
    where ``skip`` leaves action-item F1 undefined); None without annotation (ICSI)."""
    truth = reference_action_items(inst.payload)
    return None if truth is None else len(truth)


def score_row(bench: Bench, inst: Instance, row: dict[str, Any]) -> dict[str, Any]:
    """What scores.json keeps of one policy on one test meeting."""
    dedup = row.get("error") or "rougeL" not in bench.task.validation_metric().keys
    return {
        # s_val of one meeting: the engine's combiner with the row as aggregates
        # (the profile's weights; those of keys a row lacks renormalised away)
        "s_val": combine_s_val(row, bench.weights),
        **{key: row.get(key) for key in SCORE_KEYS[bench.domain]},
        "reference_items": reference_items(inst) if bench.domain != "dialogue" else None,
        "error": row.get("error"),
        "truncated": row.get("truncated"),
        "output": row.get("output"),
        answers.DEDUP_KEY: None
        if dedup
        else answers.rouge_l_dedup(bench.task, inst, str(row.get("output") or "")),
    }


def test_evaluate(bench: Bench, results: Path, work: Path, args: argparse.Namespace) -> None:
    """Every policy of the finished cells on every test meeting, instance-major, through the
    persistent test-set cache; scores saved every ``--log-every`` meetings and at the end."""
    cells = load_cells(results)
    lost = lost_adapter_cells(cells, results, work)
    for cell, why in lost.items():
        C.log(f"test evaluation leaves out cell {cell}: {why}; run the cell again")
    pols = test_policies({c: rec for c, rec in cells.items() if c not in lost}, bench.seeds())
    C.write_json(results / "test" / "policies.json", {pid: p.to_json() for pid, p in pols.items()})
    path = results / "test" / "scores.json"
    scores: dict[str, dict[str, dict[str, Any]]] = (
        json.loads(path.read_text()) if path.is_file() else {}
    )
    meetings = [(name, inst) for name, s in bench.tests.items() for inst in s.instances]
    todo_pairs = sum(
        1
        for name, inst in meetings
        for pid in pols
        if pid not in scores.get(name, {}).get(inst.id, {})
    )
    C.log(
        f"test evaluation: {len(pols)} policies x {len(meetings)} meetings "
        f"({', '.join(f'{n} {len(s.instances)}' for n, s in bench.tests.items())}); "
        f"{todo_pairs} pairs to score"
    )
    if todo_pairs:
        _score(bench, results, work, args, pols, meetings, scores)


def _score(
    bench: Bench,
    results: Path,
    work: Path,
    args: argparse.Namespace,
    pols: dict[str, PolicyGenome],
    meetings: list[tuple[str, Instance]],
    scores: dict[str, dict[str, dict[str, Any]]],
    path: Path | None = None,
) -> None:
    """Score ``pols`` on ``meetings`` into ``scores``, saved at ``path`` (default the results
    directory's test/scores.json) as it goes."""
    path = path or results / "test" / "scores.json"
    cache_cfg = (
        CacheConfig(enabled=False)
        if args.no_test_cache
        else CacheConfig(enabled=True, path=str(work / "test-cache.sqlite"))
    )
    stack = build_stack(bench.backend, cache_cfg, Budget())
    ev = bench.evaluator(stack.client, 0)
    ev.adapters = adapter_clients(bench, (results, work), cache_cfg, stack.budget)
    t0 = time.perf_counter()
    dirty = False
    for k, (name, inst) in enumerate(meetings, 1):
        have = scores.setdefault(name, {}).setdefault(inst.id, {})
        todo = [p for pid, p in pols.items() if pid not in have]
        if todo:  # all policies on this meeting back to back: one prefill of the transcript
            val = Validator(bench.task, ev, [inst], bench.weights, bench.tests[name].info["source"])
            res = val.validate(todo)
            for p in todo:
                have[p.id] = score_row(bench, inst, res[p.id].per_instance[0])
            dirty = True
        if dirty and (k % max(1, args.log_every) == 0 or k == len(meetings)):
            C.write_json(path, scores)
            dirty = False
            dt = time.perf_counter() - t0
            b = stack.budget.snapshot()
            eta = dt / k * (len(meetings) - k)
            C.log(
                f"  test: {k}/{len(meetings)} meetings ({name} {inst.id}), "
                f"{b['backend_calls']} backend calls, {b['cache_hits']} cache hits, {dt:.0f} s, "
                f"about {eta / 60:.0f} min left"
            )
    C.write_json(path, scores)
    b = stack.budget.snapshot()
    C.log(
        f"test evaluation done: {b['backend_calls']} backend calls, {b['cache_hits']} cache hits, "
        f"{time.perf_counter() - t0:.0f} s"
    )
