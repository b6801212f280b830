"""How well does a reward built without labels rank policies by their real validation score?

Issue 32's question in miniature, on developer data (AMI *train* meetings that the scarce profile
uses neither for selection nor for confirmation; never ami-dev or ICSI): a set of policies (the
seeds A, B, C and every policy the quality benchmark's cells returned) answers each meeting once;
each answer is scored twice:

- by the reward components on the meeting *without* its references (what a harness sees on an
  unlabelled meeting: reference-free completeness, format, action count, faithfulness ...),
- by s_val against the human reference (the meta-objective).

Reported: the Spearman rank correlation between each component (and the seed's fixed reward
R = 0.5 R1 + 0.2 R2 + 0.3 R3) and s_val, over policies (means over the meetings), and within
meetings (averaged). Raw per-answer rows go to the JSON so any other weighting can be checked
without a model call.

    python benchmarks/reward_ranking.py --threads 2            # ~20 min on 2 idle cores
    python benchmarks/reward_ranking.py --model fake:minutes   # plumbing check
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from evotrainer.config import CacheConfig  # noqa: E402
from evotrainer.evaluation.surrogate import spearman  # noqa: E402
from evotrainer.evaluation.validation import Validator, combine_s_val  # noqa: E402
from evotrainer.harness.reward import score_rollout  # noqa: E402
from evotrainer.llm.budget import Budget  # noqa: E402
from evotrainer.llm.spec import build_stack  # noqa: E402
from evotrainer.policy.genome import PolicyGenome  # noqa: E402
from evotrainer.tasks.meetings.seeds import seed_policies  # noqa: E402
from evotrainer.tasks.meetings.task import MeetingTask  # noqa: E402
from evotrainer.types import Rollout  # noqa: E402

SEED_R = {"completeness": 0.5, "format": 0.2, "action_count": 0.3}


def unlabelled(inst):
    """The meeting as a harness sees it without labels: the transcript, no references."""
    m = inst.payload
    return replace(inst, payload=replace(m, summary=(), decisions=(), action_items=()))


def policies() -> list[PolicyGenome]:
    out = {p.id: p for p in seed_policies()}
    for path in sorted(glob.glob(str(C.RESULTS / "quality-*" / "cells" / "*.json"))):
        cell = json.loads(Path(path).read_text())
        for row in (cell.get("rows") or {}).values():
            bp = row.get("best_policy") if isinstance(row, dict) else None
            if isinstance(bp, dict) and isinstance(bp.get("components"), dict):
                p = PolicyGenome.from_json(bp)
                out.setdefault(p.id, p)
    return list(out.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="local:smollm2", help="or fake:minutes (plumbing)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--meetings", type=int, default=12)
    ap.add_argument("--train-data", default=str(C.DEFAULT_TRAIN))
    ap.add_argument("--out", default=str(C.RESULTS / "reward_ranking.json"))
    args = ap.parse_args(argv)
    task = MeetingTask(max_input_tokens=1024, truncation="head_tail", empty_reference_items="skip")
    # the scarce profile's 16 labelled meetings are spread(all, 8) and spread(rest, 8, offset 2);
    # the developer meetings here come from what is left, offset 1
    all_meetings = task.load(args.train_data)
    labelled = C.spread(all_meetings, 8)
    rest = [m for m in all_meetings if m not in labelled]
    labelled += C.spread(rest, 8, offset=2)
    pool = [m for m in all_meetings if m not in labelled]
    meetings = C.spread(pool, args.meetings, offset=1)
    pols = policies()
    C.log(f"{len(pols)} policies x {len(meetings)} developer meetings ({len(pool)} in the pool)")
    backend = C.make_backend(args.model, 4096, args.threads)
    cache = CacheConfig(enabled=True, path=str(C.WORK / "cache" / "reward-ranking.sqlite"))
    stack = build_stack(backend, cache, Budget())
    ev = C.evaluator(task, stack.client, 256)
    val = Validator(task, ev, meetings, C.S_VAL_WEIGHTS, "ami-train developer meetings")
    results = val.validate(pols)
    components = task.reward_components()
    rows = []
    for p in pols:
        for r, inst in zip(results[p.id].per_instance, meetings, strict=True):
            bare = unlabelled(inst)
            vec = score_rollout(components, bare, Rollout(p.id, inst.id, r["output"]), None)
            rows.append(
                {
                    "policy": p.id,
                    "meeting": inst.id,
                    "s_val": combine_s_val(r, C.S_VAL_WEIGHTS),
                    "rougeL": r.get("rougeL"),
                    "components": vec.applicable(),
                }
            )
    doc = {"policies": {p.id: p.render() for p in pols}, "rows": rows}
    doc["summary"] = summarise(rows)
    doc["usage"] = C.usage(stack.budget)
    C.write_json(Path(args.out), doc)
    print(json.dumps(doc["summary"], indent=1))
    return 0


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    names = sorted({k for r in rows for k in r["components"]})

    def reward(r: dict[str, Any], weights: dict[str, float]) -> float:
        return sum(w * r["components"].get(k, 0.0) for k, w in weights.items())

    scores = {n: (lambda r, n=n: r["components"].get(n, 0.0)) for n in names}
    scores["seed_R"] = lambda r: reward(r, SEED_R)
    pol_ids = sorted({r["policy"] for r in rows})
    meet_ids = sorted({r["meeting"] for r in rows})
    out: dict[str, Any] = {}
    for name, f in scores.items():
        by_pol = [statistics.mean(f(r) for r in rows if r["policy"] == p) for p in pol_ids]
        s_pol = [statistics.mean(r["s_val"] for r in rows if r["policy"] == p) for p in pol_ids]
        within = []
        for m in meet_ids:
            mr = [r for r in rows if r["meeting"] == m]
            rho = spearman([f(r) for r in mr], [r["s_val"] for r in mr])
            if rho is not None:
                within.append(rho)
        out[name] = {
            "over_policies": spearman(by_pol, s_pol),
            "within_meetings": statistics.mean(within) if within else None,
        }
    return out


if __name__ == "__main__":
    raise SystemExit(main())
