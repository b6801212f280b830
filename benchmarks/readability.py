"""Readable minutes: which decoding and loop-cut genes the meeting task's seeds start with
(issue 46, docs/readability.md).

The seed policies A, B and C answer developer meetings of AMI *train* (none of them in any
benchmark profile's selection, confirmation or GEPA training split: ``--exclude-from``), under
each decoding setting of the grid; every loop-cut setting is applied to the same answers (the
cut needs no model call). Per (setting, cut) it reports, over seeds x meetings: s_val (the
task's default weights, readability included), ROUGE-L, action-item F1, the mean share of
distinct word 4-grams, the loop share (answers under 0.5), the mean repeated-sentence share,
the mean words per answer, and a few answers word for word.

Resumable: answers go through an on-disk cache (benchmarks/results/tmp/cache/readability.sqlite)
and each finished decoding setting is written to the results file at once; a rerun skips what
is there.

    python benchmarks/readability.py                       # embedded model, 16 meetings
    python benchmarks/readability.py --model fake:minutes --meetings 3   # plumbing
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from evotrainer.config import CacheConfig  # noqa: E402
from evotrainer.evaluation.validation import Validator  # noqa: E402
from evotrainer.llm.budget import Budget  # noqa: E402
from evotrainer.llm.spec import build_stack  # noqa: E402
from evotrainer.policy.decoding import DecodingGenes  # noqa: E402
from evotrainer.policy.postprocess import LoopCut  # noqa: E402
from evotrainer.policy.repetition import degeneracy  # noqa: E402
from evotrainer.tasks.meetings.plugin import DEFAULTS  # noqa: E402
from evotrainer.tasks.meetings.task import MeetingTask  # noqa: E402

S_VAL_WEIGHTS = DEFAULTS["outer"]["s_val_weights"]

# name -> decoding genes (each costs seeds x meetings model calls)
DECODINGS: dict[str, dict[str, Any]] = {
    "plain": {},
    "rp1.05": {"repeat_penalty": 1.05},
    "rp1.1": {"repeat_penalty": 1.1},
    "rp1.15": {"repeat_penalty": 1.15},
    "rp1.2": {"repeat_penalty": 1.2},
    "pres0.5": {"presence_penalty": 0.5},
    "freq0.5": {"frequency_penalty": 0.5},
    "rp1.1+pres0.3": {"repeat_penalty": 1.1, "presence_penalty": 0.3},
    "rp1.1+freq0.3": {"repeat_penalty": 1.1, "frequency_penalty": 0.3},
}
# name -> loop-cut genes (free: applied to the answers above)
CUTS: dict[str, dict[str, Any]] = {
    "none": {},
    "dedupe": {"enabled": True},
    "dedupe0.8": {"enabled": True, "seen_share": 0.8},
    "cut8": {"enabled": True, "cut_ngram": 8},
}


def used_ids(pattern: str) -> set[str]:
    """Meeting ids any benchmark profile selected, confirmed or trained GEPA on."""
    ids: set[str] = set()
    for path in glob.glob(pattern):
        data = (json.loads(Path(path).read_text()).get("compared") or {}).get("data") or {}
        for part in ("selection", "confirmation", "gepa_train"):
            ids.update((data.get(part) or {}).get("ids") or [])
    return ids


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="local:smollm2")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--meetings", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--train-data", default=C.DEFAULT_TRAIN)
    ap.add_argument("--exclude-from", default=str(C.RESULTS / "quality-*" / "settings.json"))
    ap.add_argument("--decodings", default=",".join(DECODINGS), help="names, comma-separated")
    ap.add_argument("--out", default=str(C.RESULTS / "readability.json"))
    args = ap.parse_args(argv)

    task = MeetingTask(max_input_tokens=1024, truncation="head_tail")
    path = C.resolve(args.train_data)
    if path is None or not path.is_file():
        print(f"{args.train_data} not found: this benchmark needs AMI train", file=sys.stderr)
        return 2
    used = used_ids(args.exclude_from)
    pool = [m for m in task.load(path) if m.id not in used]
    meetings = C.spread(pool, args.meetings, offset=3)
    C.log(f"{len(meetings)} developer meetings of {len(pool)} unused ({len(used)} excluded)")
    out_path = Path(args.out)
    doc = json.loads(out_path.read_text()) if out_path.is_file() else {}
    if doc.get("meetings") not in (None, [m.id for m in meetings]):
        print(f"{out_path} holds other meetings: give another --out", file=sys.stderr)
        return 2
    doc.update(meetings=[m.id for m in meetings], model=args.model, max_tokens=args.max_tokens)
    doc.setdefault("settings", {})
    backend = C.make_backend(args.model, 4096, args.threads)
    cache = CacheConfig(enabled=True, path=str(C.WORK / "cache" / "readability.sqlite"))
    stack = build_stack(backend, cache, Budget())
    seeds = task.seed_policies()
    for name in args.decodings.split(","):
        if all(f"{name}|{cut}" in doc["settings"] for cut in CUTS):
            continue
        with C.timer() as t:
            for cut_name, cut in CUTS.items():
                ev = C.evaluator(task, stack.client, args.max_tokens)
                pols = [
                    p.with_genes(p.lineage, DecodingGenes(**DECODINGS[name]), LoopCut(**cut))
                    for p in seeds
                ]
                val = Validator(task, ev, meetings, S_VAL_WEIGHTS, "ami-train developer")
                results = val.validate(pols)
                doc["settings"][f"{name}|{cut_name}"] = summary(pols, results, seeds)
        C.log(f"{name}: {t['s']:.0f}s, {stack.budget.backend_calls} backend calls so far")
        C.write_json(out_path, doc)
    print(table(doc))
    return 0


def summary(pols: list[Any], results: dict[str, Any], seeds: list[Any]) -> dict[str, Any]:
    """Means over seeds x meetings, per seed, and three answers word for word."""
    rows = [r for p in pols for r in results[p.id].per_instance]
    deg = degeneracy(r.get("output") or "" for r in rows)

    def mean(key: str) -> float | None:
        vals = [float(r[key]) for r in rows if r.get(key) is not None]
        return sum(vals) / len(vals) if vals else None

    return {
        "s_val": sum(results[p.id].s_val for p in pols) / len(pols),
        "per_seed": {s.name: results[p.id].s_val for s, p in zip(seeds, pols, strict=True)},
        "rougeL": mean("rougeL"),
        "action_item_f1": mean("action_item_f1"),
        "readability": mean("readability"),
        **deg.to_json(),
        "raw_words": sum(len((r.get("raw_output") or r.get("output") or "").split()) for r in rows)
        / max(1, len(rows)),
        "examples": [r.get("output") for r in rows[:: max(1, len(rows) // 3)]][:3],
    }


def table(doc: dict[str, Any]) -> str:
    head = (
        "| decoding | cut | s_val | ROUGE-L | AI F1 | distinct-4 | loop share | repeated | words |"
    )
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for key, r in doc["settings"].items():
        dec, cut = key.split("|")
        ai = r["action_item_f1"]
        lines.append(
            f"| {dec} | {cut} | {r['s_val']:.3f} | {r['rougeL']:.3f} | "
            f"{'n/a' if ai is None else f'{ai:.3f}'} | {r['distinct4']:.2f} | "
            f"{r['loop_share']:.0%} | {r['repeated_units']:.2f} | {r['words']:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
