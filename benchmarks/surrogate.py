"""The surrogate of fitness at equal budget (issue 12): demo-sized co-evolutions on the embedded
model with ``surrogate.enabled`` off and on, the same ``budget.max_calls``, several seeds, each
arm with its own fresh cache (a shared one would make the second arm's calls free). Reported per
run: the s_val reached (selection and the confirmation meetings), generations reached within
the budget, children screened and the evaluations that saved (at least), and the surrogate's
held-out Spearman (its predictions made before the children were evaluated, against their real
fitness change).

    python benchmarks/surrogate.py                               # 3 seeds x 2 arms, ~1.5 h
    python benchmarks/surrogate.py --arms off --threads 1 &       # two processes, one core each,
    python benchmarks/surrogate.py --arms on --threads 1          # sharing the work directory
    python benchmarks/surrogate.py --seeds 0 --budget 200        # one pair, ~25 min
    python benchmarks/surrogate.py --set surrogate.min_spearman=0.1
    python benchmarks/surrogate.py --replay RUN_DIR [RUN_DIR ...]  # no LLM call: seconds

``--replay`` measures the held-out Spearman on run directories that already exist (any run of
the engine, e.g. those of benchmarks/quality.py): generation by generation, the surrogate
predicts each new child from its parents' fitness in the generation before, then learns from
it, as it would have online (children made by harness trials are left out, as online).

Writes benchmarks/results/surrogate.json (after every finished run: every run finished so far)
and prints the table for docs/efficiency.md. Resumable: a finished run (its row in the work
directory, same settings) is not run again. Run from the repository root; the numbers are
s_val, generations and calls, not times, so two single-threaded processes may share the cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from benchmarks.efficiency import fresh_demo_run  # noqa: E402


def run(work: Path, name: str, overrides: list[str]) -> dict[str, Any]:
    s = fresh_demo_run(work, name, overrides)
    conf = s.get("confirmation") or {}
    row = {
        "name": name,
        "stopped": s["stopped"],
        "final_s_val": s["final_s_val"],
        "initial_s_val": s["initial_s_val"],
        "confirmation_winner_s_val": conf.get("winner_s_val"),
        "confirmation_seed_s_val": conf.get("best_seed_s_val"),
        "generations": s["generations"],
        "backend_calls": s["runtime"]["backend_calls"],
        "wall_s": s["wall_s"],
        "surrogate": s.get("surrogate"),
    }
    C.log(f"{name}: {json.dumps(row)}")
    return row


def replay(run_dirs: list[str], min_train: int) -> dict[str, Any]:
    """Held-out (predicted before learned) fitness changes of the children in existing runs."""
    from evotrainer.evaluation.surrogate import FitnessSurrogate, features, spearman
    from evotrainer.policy.genome import PolicyGenome
    from evotrainer.run.checkpoint import load_latest

    sur = FitnessSurrogate(min_train=min_train)
    pairs: list[tuple[float, float]] = []
    per_run = []
    for rd in map(Path, run_dirs):
        state, _, _ = load_latest(rd)
        pols = {pid: PolicyGenome.from_json(p) for pid, p in state["policies"].items()}
        prev: dict[str, float] | None = None
        n0 = len(pairs)
        for line in (rd / "events.jsonl").read_text().splitlines():
            e = json.loads(line) if line.strip() else {}
            if e.get("type") == "outer_step":
                prev = None  # the next population meets a new batch: no parent fitness
            if e.get("type") != "generation":
                continue
            pop = {m["id"]: m for m in e["population"]}
            for cid, m in pop.items() if prev is not None else ():
                parents = [q for q in m["parents"] if q in prev]
                if cid in prev or not parents or m["fitness"] is None or cid not in pols:
                    continue
                ranked = sorted(parents, key=lambda q: -prev[q])
                if any(q not in pols for q in ranked):
                    continue
                feats = features(pols[cid], [pols[q] for q in ranked], [prev[q] for q in ranked])
                change = m["fitness"] - prev[ranked[0]]
                predicted = sur.predict_change(feats)
                if predicted is not None:
                    pairs.append((predicted, change))
                sur.rows.append((feats, change))
            sur._fit()
            prev = {k: v["fitness"] for k, v in pop.items() if v["fitness"] is not None}
        run_pairs = pairs[n0:]
        per_run.append(
            {
                "run": str(rd),
                "pairs": len(run_pairs),
                "spearman": spearman([a for a, _ in run_pairs], [b for _, b in run_pairs]),
            }
        )
    rho = spearman([a for a, _ in pairs], [b for _, b in pairs])
    return {"heldout_spearman": rho, "pairs": len(pairs), "rows": len(sur.rows), "runs": per_run}


def _rows(work: Path, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """The finished runs in ``work`` made with ``settings`` (several processes may share the
    work directory, each with its own ``--seeds``), by seed and arm."""
    rows = []
    for path in sorted(work.glob("*.row.json")):
        doc = json.loads(path.read_text())
        if doc.get("settings") == settings:
            rows.append({**doc["row"], "threads": doc.get("threads")})
    return sorted(rows, key=lambda r: (r["seed"], r["arm"] != "off"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--replay", nargs="+", metavar="RUN_DIR", help="existing runs: no LLM call")
    ap.add_argument("--min-train", type=int, default=12)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--arms", nargs="+", choices=("off", "on"), default=["off", "on"])
    ap.add_argument("--budget", type=int, default=300, help="budget.max_calls of every run")
    ap.add_argument("--generations", type=int, default=12, help="more than the budget allows")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--set", dest="extra", action="append", default=[], help="config override")
    ap.add_argument(
        "--out", help="default benchmarks/results/surrogate.json (surrogate_replay.json)"
    )
    args = ap.parse_args(argv)
    if args.replay:
        result = replay(args.replay, args.min_train)
        C.write_json(Path(args.out or C.RESULTS / "surrogate_replay.json"), result)
        print(json.dumps(result, indent=2))
        return 0
    work = C.WORK / "surrogate"
    work.mkdir(parents=True, exist_ok=True)
    base = [
        f"model.n_threads={args.threads}",
        f"budget.max_calls={args.budget}",
        f"inner.generations={args.generations}",
        *args.extra,
    ]
    out = Path(args.out or C.RESULTS / "surrogate.json")
    settings = {k: v for k, v in vars(args).items() if k not in ("out", "seeds", "arms", "threads")}
    for seed in args.seeds:  # resumable: a finished run's row is kept and not run again
        for arm in args.arms:
            path = work / f"{arm}-seed{seed}.row.json"
            done = json.loads(path.read_text()) if path.is_file() else None
            if done is not None and done.get("settings") == settings:
                continue
            over = [
                *base,
                f"seed={seed}",
                f"surrogate.enabled={'true' if arm == 'on' else 'false'}",
            ]
            row = {"seed": seed, "arm": arm, **run(work, f"{arm}-seed{seed}", over)}
            C.write_json(path, {"settings": settings, "threads": args.threads, "row": row})
            rows = _rows(work, settings)  # every finished run so far, of any process
            C.write_json(out, {"machine": C.machine(), "settings": settings, "runs": rows})
    rows = _rows(work, settings)
    C.write_json(out, {"machine": C.machine(), "settings": settings, "runs": rows})

    def mean(arm: str, key: str) -> float | None:
        xs = [r[key] for r in rows if r["arm"] == arm and r.get(key) is not None]
        return round(statistics.fmean(xs), 4) if xs else None

    print(
        "\n| seed | surrogate | final s_val | confirmation s_val | generations | calls | "
        "screened | evaluations skipped (at least) | held-out Spearman |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["surrogate"] or {}
        print(
            f"| {r['seed']} | {r['arm']} | "
            f"{'n/a' if r['final_s_val'] is None else format(r['final_s_val'], '.4f')} | "
            f"{r['confirmation_winner_s_val'] if r['confirmation_winner_s_val'] is not None else 'n/a'} | "
            f"{r['generations']} | {r['backend_calls']} | {s.get('screened', '-')} | "
            f"{s.get('evaluations_skipped_at_least', '-')} | {s.get('heldout_spearman', '-')} |"
        )
    for arm in ("off", "on"):
        print(
            f"mean {arm}: final s_val {mean(arm, 'final_s_val')}, generations {mean(arm, 'generations')}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
