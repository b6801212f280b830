"""Batched multi-sequence decoding of the embedded model (issue 12): P policies on the same
meetings, answered one at a time (the sequential path: instance-major, llama.cpp reuses the
transcript's KV prefix) and together (``complete_batch``: the transcript prefilled once, all P
answers decoded in one llama_batch per step). Generated tokens/s, calls/s, and whether every
answer is identical (text, finish reason, token counts).

    python benchmarks/batched_decoding.py                       # P = 1 2 4 8 16, ~15 min
    python benchmarks/batched_decoding.py --p 1 4 --meetings 1 --max-tokens 32   # a quick look
    python benchmarks/batched_decoding.py --steps --out benchmarks/results/batched_steps.json
    python benchmarks/batched_decoding.py --steps --model other.gguf   # another GGUF file

``--steps``: what one decoding step costs by the number of rows (sequences) in it, on the
first meeting with the first policy's prompt P times (the decoder's own phase timings), and
where a group's time goes: the shared prefill, the prompt tails, the decoding steps, the rest
(sampling, detokenizing, stop checks in Python).

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


def step_costs(model: LlamaCppLLM, prompts, params, ps: list[int]) -> dict[str, Any]:
    """Per-step cost by rows (one prompt repeated P times: every step has P rows until the
    end), and a breakdown of one group of P = max(ps) different prompts."""
    from evotrainer.llm.llamacpp_batch import capture_completion_args, prepare

    def prepared(messages):
        return prepare(
            model._llm, capture_completion_args(model._llm, model._chat_kwargs(messages, params))
        )

    rows = []
    for p in ps:
        decoder = BatchDecoder(model._llm, p)
        decoder._context(
            max(model.count_tokens(m[-1].content) for m in prompts) + 64 + params.max_tokens
        )
        decoder.run([prepared(prompts[0])] * p)
        n_steps = decoder.stats["step_rows"].get(p, 0)
        # the same prompt P times: the P answers are equal, so every step has P rows
        assert set(decoder.stats["step_rows"]) == {p}, decoder.stats["step_rows"]
        ms = 1000 * decoder.stats["seconds"]["steps"] / n_steps
        rows.append(
            {
                "rows": p,
                "steps": n_steps,
                "ms_per_step": round(ms, 2),
                "ms_per_token": round(ms / p, 2),
            }
        )
        decoder.close()
        C.log(f"{p} rows: {ms:.1f} ms per step, {ms / p:.2f} ms per token")
    p = max(ps)
    decoder = BatchDecoder(model._llm, p)
    decoder._context(
        max(model.count_tokens(m[-1].content) for m in prompts) + 64 + params.max_tokens
    )
    group = [prepared(m) for m in prompts[:p]]
    t0 = time.perf_counter()
    decoder.run(group)
    wall = time.perf_counter() - t0
    seconds, tokens = decoder.stats["seconds"], decoder.stats["tokens"]
    decoded_s = seconds["prefill"] + seconds["tails"] + seconds["steps"]  # inside llama_decode
    breakdown = {
        "p": p,
        "wall_s": round(wall, 3),
        "prefill_and_tails_s": round(seconds["prefill"] + seconds["tails"], 3),
        "prefill_and_tails_tokens": tokens["prefill"] + tokens["tails"],
        "decode_steps_s": round(seconds["steps"], 3),
        "python_s": round(wall - decoded_s, 3),
    }
    decoder.close()
    return {"by_rows": rows, "group": breakdown}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--p", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    ap.add_argument(
        "--meetings", type=int, default=3, help="AMI dev meetings (synthetic if absent)"
    )
    ap.add_argument("--data", default=C.DEFAULT_TEST, help="meetings JSONL (default: AMI dev)")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--max-input-tokens", type=int, default=512)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=str(C.RESULTS / "batched_decoding.json"))
    ap.add_argument("--steps", action="store_true", help="per-step cost by rows (see above)")
    ap.add_argument("--model", help="a GGUF file (default: the embedded SmolLM2 Q4_1)")
    ap.add_argument(
        "--draft-tokens",
        type=int,
        default=0,
        help="prompt-lookup draft tokens per sequence and step in the batched arm (0: none)",
    )
    return ap.parse_args(argv)


def compare_at(model, prompts, params, p: int, draft_tokens: int, max_tokens: int) -> dict:
    """P policies per meeting, sequential against batched: the row of the P table."""
    model.batch_size, model._decoder = p, BatchDecoder(model._llm, p, draft_tokens)
    longest = max(model.count_tokens(m[-1].content) for ms in prompts for m in ms)
    model._decoder._context(longest + 64 + max_tokens)  # made before the clock starts
    seq = measure(model, prompts, params, batched=False)
    bat = measure(model, prompts, params, batched=True)
    same = seq["answers"] == bat["answers"]
    return {
        "p": p,
        "sequential": {k: v for k, v in seq.items() if k != "answers"},
        "batched": {k: v for k, v in bat.items() if k != "answers"},
        "speedup_tokens_per_s": round(bat["tokens_per_s"] / seq["tokens_per_s"], 2),
        "identical": same,
        "differing_answers": sum(
            a != b for a, b in zip(seq["answers"], bat["answers"], strict=True)
        ),
        "decoder": {
            k: model._decoder.stats[k] for k in ("drafted", "accepted", "step_rows", "seconds")
        },
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    task = MeetingTask(max_input_tokens=args.max_input_tokens)
    split = C.load_split(task, args.data, args.meetings, name="meetings", synthetic_seed=5)
    C.log(split.info["message"])
    pool = policies(max(args.p))
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens, seed=0)
    path = Path(args.model) if args.model else smollm2_path()
    model = LlamaCppLLM(path, n_ctx=4096, n_threads=args.threads, label=path.name)
    forget(model)  # warm up
    if args.steps:
        first = [task.render(pol.render(), split.instances[0])[0] for pol in pool]
        got = step_costs(model, first, params, args.p)
        C.write_json(Path(args.out), {"machine": C.machine(), "settings": vars(args), **got})
        print("\n| rows per step | ms per step | ms per token | tokens/s |")
        print("|---|---|---|---|")
        for r in got["by_rows"]:
            print(
                f"| {r['rows']} | {r['ms_per_step']:.1f} | {r['ms_per_token']:.2f} | {1000 / r['ms_per_token']:.0f} |"
            )
        print(got["group"])
        return 0
    rows = []
    for p in args.p:
        prompts = [
            [task.render(pol.render(), inst)[0] for pol in pool[:p]] for inst in split.instances
        ]
        row = compare_at(model, prompts, params, p, args.draft_tokens, args.max_tokens)
        rows.append(row)
        seq, bat = row["sequential"], row["batched"]
        C.log(
            f"P={p}: sequential {seq['tokens_per_s']:.1f} tok/s, batched {bat['tokens_per_s']:.1f}"
            f" tok/s ({row['speedup_tokens_per_s']}x), identical: {row['identical']}"
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
    print_rows(rows)
    return 0


def print_rows(rows: list[dict]) -> None:
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


if __name__ == "__main__":
    raise SystemExit(main())
