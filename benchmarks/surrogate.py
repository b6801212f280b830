"""The surrogate of fitness at equal budget (issue 12): demo-sized co-evolutions on the embedded
model with ``surrogate.enabled`` off and on, the same ``budget.max_calls``, several seeds, each
arm with its own fresh cache (a shared one would make the second arm's calls free). Reported per
run: the s_val reached (selection and the confirmation meetings), generations reached within
the budget, children screened and the evaluations that saved (at least), and the surrogate's
held-out Spearman (its predictions made before the children were evaluated, against their real
fitness change).

    python benchmarks/surrogate.py                               # 3 seeds x 2 arms, ~1.5 h
    python benchmarks/surrogate.py --seeds 0 --budget 200        # one pair, ~25 min
    python benchmarks/surrogate.py --set surrogate.min_spearman=0.1

Writes benchmarks/results/surrogate.json and prints the table for docs/efficiency.md. Run from
the repository root, on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from benchmarks.efficiency import DEMO_CONFIG  # noqa: E402
from evotrainer.coevolution import CoEvolution  # noqa: E402
from evotrainer.config import load_config  # noqa: E402
from evotrainer.errors import BudgetExceeded  # noqa: E402


def run(work: Path, name: str, overrides: list[str]) -> dict[str, Any]:
    run_dir, cache = work / name, work / f"{name}.sqlite"
    shutil.rmtree(run_dir, ignore_errors=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    cfg = load_config(DEMO_CONFIG, [*overrides, f"cache.path={cache}", "report=false"])
    C.log(f"{name}: running ...")
    try:
        CoEvolution(cfg).run(run_dir)
    except BudgetExceeded as exc:  # a cap below the first generation: recorded, not fatal
        C.log(f"{name}: {exc}")
    s = json.loads((run_dir / "summary.json").read_text())
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--budget", type=int, default=300, help="budget.max_calls of every run")
    ap.add_argument("--generations", type=int, default=12, help="more than the budget allows")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--set", dest="extra", action="append", default=[], help="config override")
    ap.add_argument("--out", default=str(C.RESULTS / "surrogate.json"))
    args = ap.parse_args(argv)
    work = C.WORK / "surrogate"
    work.mkdir(parents=True, exist_ok=True)
    base = [
        f"model.n_threads={args.threads}",
        f"budget.max_calls={args.budget}",
        f"inner.generations={args.generations}",
        *args.extra,
    ]
    rows = []
    for seed in args.seeds:
        for arm in ("off", "on"):
            over = [
                *base,
                f"seed={seed}",
                f"surrogate.enabled={'true' if arm == 'on' else 'false'}",
            ]
            rows.append({"seed": seed, "arm": arm, **run(work, f"{arm}-seed{seed}", over)})
    C.write_json(Path(args.out), {"machine": C.machine(), "settings": vars(args), "runs": rows})

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
            f"| {r['seed']} | {r['arm']} | {r['final_s_val']:.4f} | "
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
