"""The async evaluation path against OpenAI-compatible servers (issue 12): calls/s at
concurrency 1, 4 and 16, through the whole LLM stack and the evaluator (AsyncRunner, one pooled
AsyncOpenAI client, ``model.concurrency`` requests in flight), against

- a latency-injecting fake server (llm/fake_server.py: every answer after ``--latency`` s, as a
  remote GPU server that is waiting, not computing), and
- ``python -m llama_cpp.server`` serving the embedded SmolLM2 GGUF on this machine.

    python benchmarks/concurrency.py                  # both servers, ~5 min
    python benchmarks/concurrency.py --skip-llama     # the fake server only (~30 s)

Writes benchmarks/results/concurrency.json and prints the table for docs/efficiency.md.
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
from evotrainer.config import CacheConfig  # noqa: E402
from evotrainer.evaluation.evaluator import Evaluator  # noqa: E402
from evotrainer.evaluation.runner import runner_for  # noqa: E402
from evotrainer.llm.base import SamplingParams  # noqa: E402
from evotrainer.llm.budget import Budget  # noqa: E402
from evotrainer.llm.fake_server import LatencyServer  # noqa: E402
from evotrainer.llm.openai_http import OpenAICompatibleLLM  # noqa: E402
from evotrainer.llm.spec import build_stack  # noqa: E402
from evotrainer.tasks.meetings.task import MeetingTask  # noqa: E402


def calls_per_s(
    base_url: str, model: str, concurrency: int, n_policies: int, instances, params, extra=None
) -> dict[str, Any]:
    task = MeetingTask(max_input_tokens=512)
    client = OpenAICompatibleLLM(
        model, base_url=base_url, concurrency=concurrency, timeout_s=900, extra_body=extra
    )
    stack = build_stack(client, CacheConfig(enabled=False), Budget())
    ev = Evaluator(task, stack.client, params, runner_for(stack.client))
    ev.evaluate(policies(1), instances[:1])  # warm-up: the client's connection pool
    ev.store.clear()
    t0 = time.perf_counter()
    ev.evaluate(policies(n_policies), instances)
    wall = time.perf_counter() - t0
    n = n_policies * len(instances)
    errors = sum(1 for r in ev.store.values() if r.rollout.error)
    return {
        "concurrency": concurrency,
        "runner": type(ev.runner).__name__,
        "calls": n,
        "errors": errors,
        "wall_s": round(wall, 3),
        "calls_per_s": round(n / wall, 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--latency", type=float, default=0.2, help="fake server: seconds per answer")
    ap.add_argument("--fake-calls", type=int, default=64, help="fake server: calls per cell")
    ap.add_argument("--skip-llama", action="store_true")
    ap.add_argument("--llama-policies", type=int, default=4)
    ap.add_argument("--llama-meetings", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=str(C.RESULTS / "concurrency.json"))
    args = ap.parse_args(argv)

    task = MeetingTask(max_input_tokens=512)
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens, seed=0)
    out: dict[str, Any] = {"machine": C.machine(), "settings": vars(args), "fake": [], "llama": []}
    n_pol = 8
    fake_meetings = task.synthetic_validation(max(1, args.fake_calls // n_pol), 17)
    with LatencyServer(latency_s=args.latency) as server:
        for c in args.concurrency:
            row = calls_per_s(server.url, "fake", c, n_pol, fake_meetings, params)
            row["ideal_calls_per_s"] = round(c / args.latency, 3)
            out["fake"].append(row)
            C.log(f"fake server, concurrency {c}: {row['calls_per_s']} calls/s")
    if not args.skip_llama:
        split = C.load_split(task, C.DEFAULT_TEST, args.llama_meetings, name="m", synthetic_seed=5)
        server = C.LlamaServer(
            C.gguf_path("local:smollm2"), 4096, args.threads, C.WORK / "concurrency-server.log"
        ).start()
        try:
            for c in args.concurrency:
                row = calls_per_s(
                    server.base_url,
                    "smollm2",
                    c,
                    args.llama_policies,
                    split.instances,
                    params,
                    C.LlamaServerClient.SAME_AS_EMBEDDED,
                )
                out["llama"].append(row)
                C.log(f"llama_cpp.server, concurrency {c}: {row['calls_per_s']} calls/s")
        finally:
            server.close()
    C.write_json(Path(args.out), out)
    print("\n| server | concurrency | calls | calls/s | vs concurrency 1 |")
    print("|---|---|---|---|---|")
    for name, key in ((f"fake, latency {args.latency:g}s", "fake"), ("llama_cpp.server", "llama")):
        rows = out[key]
        for r in rows:
            ratio = r["calls_per_s"] / rows[0]["calls_per_s"]
            print(
                f"| {name} | {r['concurrency']} | {r['calls']} | {r['calls_per_s']:.2f} | {ratio:.2f}x |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
