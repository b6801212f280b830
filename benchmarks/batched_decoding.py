"""Batched multi-sequence decoding of the embedded model (issue 12): P policies on the same
meetings, answered one at a time (the sequential path: instance-major, llama.cpp reuses the
transcript's KV prefix) and together (``complete_batch``: the transcript prefilled once, all P
answers decoded in one llama_batch per step). Generated tokens/s, calls/s, and whether every
answer is identical (text, finish reason, token counts).

    python benchmarks/batched_decoding.py                       # P = 1 2 4 8 16, ~15 min
    python benchmarks/batched_decoding.py --p 1 4 --meetings 1 --max-tokens 32   # a quick look

Writes benchmarks/results/batched_decoding.json and prints the table for docs/efficiency.md.
Run it on an idle machine (timings under load are meaningless); ``--threads`` fixes llama.cpp's
threads (default: all cores).
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
from evotrainer.llm.base import Completion, SamplingParams  # noqa: E402
from evotrainer.llm.llamacpp import LlamaCppLLM, smollm2_path  # noqa: E402
from evotrainer.llm.llamacpp_batch import BatchDecoder  # noqa: E402
from evotrainer.tasks.meetings.task import MeetingTask  # noqa: E402
from evotrainer.types import Message  # noqa: E402


def forget(model: LlamaCppLLM) -> None:
    """An unrelated call, so that no measurement starts with the transcript in the KV cache."""
    model.complete([Message("user", "Say hello.")], SamplingParams(max_tokens=2, seed=0))


def measure(model: LlamaCppLLM, prompts_by_meeting, params, batched: bool) -> dict[str, Any]:
    answers: list[Completion] = []
    forget(model)
    t0 = time.perf_counter()
    for prompts in prompts_by_meeting:
        if batched:
            res = model.complete_batch(prompts, params)
            assert all(isinstance(r, Completion) for r in res), res
            answers += res  # type: ignore[arg-type]
        else:
            answers += [model.complete(m, params) for m in prompts]
    wall = time.perf_counter() - t0
    tokens = sum(a.completion_tokens for a in answers)
    return {
        "wall_s": round(wall, 3),
        "calls": len(answers),
        "generated_tokens": tokens,
        "tokens_per_s": round(tokens / wall, 2),
        "calls_per_s": round(len(answers) / wall, 4),
        "answers": [
            (a.text, a.finish_reason, a.prompt_tokens, a.completion_tokens) for a in answers
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--p", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument(
        "--meetings", type=int, default=3, help="AMI dev meetings (synthetic if absent)"
    )
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--max-input-tokens", type=int, default=512)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=str(C.RESULTS / "batched_decoding.json"))
    args = ap.parse_args(argv)

    task = MeetingTask(max_input_tokens=args.max_input_tokens)
    split = C.load_split(task, C.DEFAULT_TEST, args.meetings, name="meetings", synthetic_seed=5)
    C.log(split.info["message"])
    pool = policies(max(args.p))
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens, seed=0)
    model = LlamaCppLLM(smollm2_path(), n_ctx=4096, n_threads=args.threads, label="smollm2")
    forget(model)  # warm up
    rows = []
    for p in args.p:
        prompts = [
            [task.render(pol.render(), inst)[0] for pol in pool[:p]] for inst in split.instances
        ]
        model.batch_size, model._decoder = p, BatchDecoder(model._llm, p)
        longest = max(model.count_tokens(m[-1].content) for ms in prompts for m in ms)
        model._decoder._context(longest + 64 + args.max_tokens)  # made before the clock starts
        seq = measure(model, prompts, params, batched=False)
        bat = measure(model, prompts, params, batched=True)
        same = seq["answers"] == bat["answers"]
        row = {
            "p": p,
            "sequential": {k: v for k, v in seq.items() if k != "answers"},
            "batched": {k: v for k, v in bat.items() if k != "answers"},
            "speedup_tokens_per_s": round(bat["tokens_per_s"] / seq["tokens_per_s"], 2),
            "identical": same,
            "differing_answers": sum(
                a != b for a, b in zip(seq["answers"], bat["answers"], strict=True)
            ),
        }
        rows.append(row)
        C.log(
            f"P={p}: sequential {seq['tokens_per_s']:.1f} tok/s, batched {bat['tokens_per_s']:.1f}"
            f" tok/s ({row['speedup_tokens_per_s']}x), identical: {same}"
        )
    C.write_json(
        Path(args.out),
        {
            "machine": C.machine(),
            "settings": {k: v for k, v in vars(args).items() if k != "out"},
            "meetings": split.info,
            "rows": rows,
        },
    )
    print(
        "\n| P | sequential tokens/s | batched tokens/s | speed-up | sequential calls/s "
        "| batched calls/s | identical outputs |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        s, b = r["sequential"], r["batched"]
        print(
            f"| {r['p']} | {s['tokens_per_s']:.1f} | {b['tokens_per_s']:.1f} | "
            f"{r['speedup_tokens_per_s']:.2f}x | {s['calls_per_s']:.3f} | {b['calls_per_s']:.3f} | "
            f"{'yes' if r['identical'] else 'NO (' + str(r['differing_answers']) + ')'} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
