"""The Ray runner's scaling curve (issue 12): 1, 2 and 4 Ray workers, each holding a backend
that answers after ``--latency`` seconds (``fake:latency=S``: a stand-in for a model that keeps
a worker busy), on a local Ray instance. Calls/s through the driver's LLM stack (budget; the
cache is off so every call reaches a worker) and the evaluator, against the ideal
workers / latency.

    python benchmarks/ray_scaling.py                          # ~1-2 min (Ray start included)
    python benchmarks/ray_scaling.py --workers 1 2 4 8 --latency 0.5 --calls 96

Writes benchmarks/results/ray_scaling.json and prints the table for docs/efficiency.md. On a
cluster, set RAY_ADDRESS (or --address) and the workers are spread over its nodes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from benchmarks.efficiency import policies  # noqa: E402
from evotrainer.config import CacheConfig, ModelConfig, RayConfig  # noqa: E402
from evotrainer.evaluation.evaluator import Evaluator  # noqa: E402
from evotrainer.evaluation.runner import runner_for  # noqa: E402
from evotrainer.llm.base import SamplingParams  # noqa: E402
from evotrainer.llm.budget import Budget  # noqa: E402
from evotrainer.llm.spec import build_backend, build_stack  # noqa: E402
from evotrainer.tasks.meetings.task import MeetingTask  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    import ray

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--calls", type=int, default=48)
    ap.add_argument("--address", default=os.environ.get("RAY_ADDRESS"))
    ap.add_argument("--out", default=str(C.RESULTS / "ray_scaling.json"))
    args = ap.parse_args(argv)

    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:  # a local instance; sleeping workers need no real CPU: logical CPUs for all
        ray.init(num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False)
    task = MeetingTask(max_input_tokens=512)
    n_pol = 8
    instances = task.synthetic_validation(max(1, args.calls // n_pol), 23)
    model = ModelConfig(spec=f"fake:latency={args.latency:g}")
    rows: list[dict[str, Any]] = []
    for w in args.workers:
        t0 = time.perf_counter()
        pool = build_backend(model, seed=0, ray=RayConfig(workers=w, num_cpus=1))
        start_s = time.perf_counter() - t0
        stack = build_stack(pool, CacheConfig(enabled=False), Budget())
        ev = Evaluator(
            task, stack.client, SamplingParams(max_tokens=64), runner_for(stack.client, "ray")
        )
        ev.evaluate(policies(1), instances[:1])  # warm-up
        ev.store.clear()
        t0 = time.perf_counter()
        ev.evaluate(policies(n_pol), instances)
        wall = time.perf_counter() - t0
        n = n_pol * len(instances)
        row = {
            "workers": w,
            "calls": n,
            "wall_s": round(wall, 3),
            "calls_per_s": round(n / wall, 3),
            "ideal_calls_per_s": round(w / args.latency, 3),
            "pool_start_s": round(start_s, 2),
            "backend_calls": stack.budget.backend_calls,
        }
        rows.append(row)
        C.log(f"{w} workers: {row['calls_per_s']} calls/s (ideal {row['ideal_calls_per_s']})")
        pool.close()
    ray.shutdown()
    C.write_json(Path(args.out), {"machine": C.machine(), "settings": vars(args), "rows": rows})
    print(
        "\n| workers | calls | calls/s | ideal (workers / latency) | efficiency | speed-up vs 1 |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['workers']} | {r['calls']} | {r['calls_per_s']:.2f} | {r['ideal_calls_per_s']:.2f} | "
            f"{r['calls_per_s'] / r['ideal_calls_per_s']:.0%} | "
            f"{r['calls_per_s'] / rows[0]['calls_per_s']:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
