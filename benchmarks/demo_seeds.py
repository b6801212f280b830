"""`make demo` across seeds (issue 35): run the demo's command, ``evotrainer run -c
configs/demo.yaml``, once per seed with a cold LLM cache, and record what a newcomer sees at the
end of it: the wall time, the calls, the threads llama.cpp used, whether the run returned an
evolved policy (one that beat the best seed on the 6 held-out confirmation meetings) and the
confirmation's paired difference with its 95% bootstrap interval.

    python benchmarks/demo_seeds.py                   # seeds 0-4, resumes: a finished seed is kept
    python benchmarks/demo_seeds.py --seeds 0 1 --out benchmarks/results/demo_seeds-x.json
    python benchmarks/demo_seeds.py --table           # print the table of what is recorded

One model job at a time: run it on an idle machine (the demo's target is 30 minutes there). Each
seed's run directory and cache lie under ``--work-dir``; the results file is rewritten after
every seed, so a killed benchmark loses at most the seed in progress.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks/results/demo_seeds.json"
WORK = REPO / "benchmarks/results/tmp/demo_seeds"


def git_commit() -> str:
    r = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    )
    return r.stdout.strip() or "unknown"


def threads_used(run_dir: Path) -> list[int]:
    """The llama.cpp threads of each generation event, in order."""
    out: list[int] = []
    path = run_dir / "events.jsonl"
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        e = json.loads(line)
        if e.get("type") == "generation" and isinstance(e.get("threads"), int):
            out.append(e["threads"])
    return out


def one_seed(seed: int, work: Path, extra: list[str]) -> dict[str, Any]:
    run_dir = work / f"seed{seed}"
    cache = work / f"cache-seed{seed}"
    for stale in (run_dir, cache):  # an unfinished earlier attempt: start again, cold
        shutil.rmtree(stale, ignore_errors=True)
    env = dict(os.environ, EVOTRAINER_CACHE_DIR=str(cache))
    cmd = [
        str(Path(sys.executable).parent / "evotrainer"),
        "run",
        "-c",
        "configs/demo.yaml",
        "--set",
        f"seed={seed}",
        "--run-dir",
        str(run_dir),
        *extra,
    ]
    t0 = time.time()
    log = work / f"seed{seed}.log"
    with log.open("w") as f:
        rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    wall = time.time() - t0
    if rc != 0:
        raise SystemExit(f"seed {seed}: evotrainer run exited {rc}; see {log}")
    s = json.loads((run_dir / "summary.json").read_text())
    conf = s.get("confirmation") or {}
    diff = conf.get("difference") or {}
    return {
        "seed": seed,
        "wall_s": round(wall, 1),
        "wall_min": round(wall / 60, 1),
        "llm_calls": s["llm_calls"],
        "threads": threads_used(run_dir),
        "validation": s["validation"]["source"],
        "selection_n": s["validation"]["n"],
        "best_policy": s["best_policy"],
        "final_s_val": s["final_s_val"],
        "confirmation_n": conf.get("n"),
        "winner": conf.get("winner"),
        "best_seed": conf.get("best_seed"),
        "winner_conf_s_val": conf.get("winner_s_val"),
        "seed_conf_s_val": conf.get("best_seed_s_val"),
        "difference": diff.get("mean"),
        "ci95": diff.get("ci95"),
        "returned": conf.get("returned"),
        "evolved_returned": bool(conf) and not conf.get("returned_is_seed", True),
        "reason": conf.get("reason"),
        "run_dir": str(run_dir.relative_to(REPO)) if run_dir.is_relative_to(REPO) else str(run_dir),
    }


def table(data: dict[str, Any]) -> str:
    rows = [
        "| seed | wall (min) | calls | threads | returned | confirmation: winner - best seed [95% CI] (n) |",
        "|---:|---:|---:|---|---|---|",
    ]
    for r in sorted(data["seeds"], key=lambda r: r["seed"]):
        th = sorted(set(r["threads"]))
        ci = r["ci95"] or [None, None]
        diff = (
            f"{r['difference']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}] ({r['confirmation_n']})"
            if r["difference"] is not None and ci[0] is not None
            else "-"
        )
        what = "evolved" if r["evolved_returned"] else "best seed"
        rows.append(
            f"| {r['seed']} | {r['wall_min']} | {r['llm_calls']} | "
            f"{'/'.join(map(str, th)) or '-'} | {what} ({r['returned']}) | {diff} |"
        )
    done = data["seeds"]
    n_ev = sum(r["evolved_returned"] for r in done)
    n_ci = sum(r["evolved_returned"] and bool(r["ci95"]) and r["ci95"][0] > 0 for r in done)
    n_30 = sum(r["wall_min"] <= 30 for r in done)
    rows.append("")
    rows.append(
        f"{n_ev} of {len(done)} seeds returned an evolved policy (it beat the best seed's mean "
        f"on the held-out meetings, the return rule), {n_ci} of them with the 95% interval "
        f"above 0; {n_30} of {len(done)} finished within 30 minutes (commit {data['commit']})."
    )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--work-dir", type=Path, default=WORK)
    ap.add_argument("--table", action="store_true", help="print the recorded table and exit")
    ap.add_argument("--set", action="append", default=[], help="passed on to evotrainer run")
    a = ap.parse_args()
    data: dict[str, Any] = (
        json.loads(a.out.read_text()) if a.out.exists() else {"commit": git_commit(), "seeds": []}
    )
    if a.table:
        print(table(data))
        return
    a.work_dir.mkdir(parents=True, exist_ok=True)
    extra = [x for s in a.set for x in ("--set", s)]
    data.setdefault("sets", a.set)
    for seed in a.seeds:
        if any(r["seed"] == seed for r in data["seeds"]):
            print(f"seed {seed}: recorded, kept")
            continue
        print(f"seed {seed}: running", flush=True)
        data["seeds"].append(one_seed(seed, a.work_dir, extra))
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(data, indent=1) + "\n")
        print(table(data), flush=True)


if __name__ == "__main__":
    main()
