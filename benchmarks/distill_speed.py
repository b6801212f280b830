"""What LoRA distillation costs on this machine: training tokens/s (forward + backward + AdamW,
float32 on the CPU) of the embedded SmolLM2-135M at several sequence lengths and LoRA ranks, and
the minutes one adapter costs (``--pairs`` pairs x ``--epochs`` epochs at ``--adapter-len``
tokens), from the measured rate plus the measured loading and export times.

Each (rank, length) cell trains ``--warmup`` + ``--steps`` optimizer steps (batch size 1) on
synthetic meeting-style pairs of exactly that many tokens, a quarter of them completion (the
loss and the vocabulary projection cover the completion only, as in real training); tokens/s is
the cell's tokens over the wall time of its measured steps (the warm-up steps are not counted).
Last, the serving cost: one greedy answer (512-token prompt, 64 new tokens) by llama.cpp
without and with the first rank's adapter.
The load average and the busiest other processes are recorded before and after, since the
machine is shared.

    .venv/bin/python benchmarks/distill_speed.py --steps 6  # ~5 minutes (busy machine, 1 thread)
    .venv/bin/python benchmarks/distill_speed.py --lengths 256 --ranks 8 --steps 2   # smoke
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import RESULTS, log, machine, write_json  # noqa: E402
from evotrainer.distill.pairs import TrainingPair  # noqa: E402
from evotrainer.distill.settings import LoraSettings  # noqa: E402
from evotrainer.types import Message  # noqa: E402

LINES = (
    "Anna: Let's start with the budget for the new website, we have twelve thousand euros.",
    "Ben: I can have the first design ready by Friday if the client sends the logo.",
    "Carla: The hosting contract runs out in June, I will check the offers this week.",
    "Anna: Good. We also need to decide on the launch date and who writes the texts.",
    "Ben: I would say the first of June, and David could write the product pages.",
    "David: Fine with me, but I need the mock-ups before I start writing.",
)
INSTRUCTION = "Write the minutes of this meeting with the decisions and the action items."


def pair_of(tok, n_tokens: int, k: int) -> TrainingPair:
    """A pair of exactly ``n_tokens`` tokens (prompt and completion), a quarter completion."""
    from evotrainer.distill.pairs import prompt_ids

    n_completion = n_tokens // 4
    words = " ".join(LINES[(k + i) % len(LINES)] for i in range(200))
    completion_ids = tok(words, add_special_tokens=False)["input_ids"][: n_completion - 1]
    completion = tok.decode(completion_ids)
    transcript_ids = tok("\n".join(LINES[(k + i) % len(LINES)] for i in range(400)))["input_ids"]
    lo, hi = 0, len(transcript_ids)
    while lo < hi:  # the longest transcript whose prompt leaves room for the completion
        mid = (lo + hi + 1) // 2
        text = tok.decode(transcript_ids[:mid])
        n = len(prompt_ids(tok, [Message("user", f"{text}\n\n{INSTRUCTION}")]))
        lo, hi = (mid, hi) if n <= n_tokens - n_completion else (lo, mid - 1)
    msg = Message("user", f"{tok.decode(transcript_ids[:lo])}\n\n{INSTRUCTION}")
    return TrainingPair((msg,), completion, 1.0, f"synthetic {n_tokens}")


def serving_cost(adapter: Path, tok, threads: int, repeats: int) -> dict:
    """Seconds of one greedy answer (a 512-token prompt, 64 new tokens, llama.cpp) without and
    with the adapter, the best of ``repeats`` each, alternating."""
    from evotrainer.llm.base import SamplingParams
    from evotrainer.llm.llamacpp import LlamaCppLLM, smollm2_path

    pair = pair_of(tok, 512 + 128, 0)  # prompt of about 512 tokens
    params = SamplingParams(max_tokens=64, temperature=0.0, seed=0)
    llms = {
        "base": LlamaCppLLM(smollm2_path(), n_ctx=1024, n_threads=threads),
        "adapter": LlamaCppLLM(smollm2_path(), n_ctx=1024, n_threads=threads, lora_path=adapter),
    }
    best = dict.fromkeys(llms, float("inf"))
    tokens = {}
    for _ in range(repeats):
        for name, llm in llms.items():
            llm._llm.reset()  # no KV prefix reuse between repeats
            t = time.perf_counter()
            c = llm.complete(list(pair.messages), params)
            best[name] = min(best[name], time.perf_counter() - t)
            tokens[name] = (c.prompt_tokens, c.completion_tokens)
    return {
        "seconds_best_of": repeats,
        "base_s": round(best["base"], 2),
        "adapter_s": round(best["adapter"], 2),
        "slowdown": round(best["adapter"] / best["base"], 2),
        "prompt_and_completion_tokens": tokens,
    }


def busiest() -> list[str]:
    out = subprocess.run(
        ["ps", "-eo", "pcpu,etime,args", "--sort=-pcpu"], capture_output=True, text=True
    ).stdout.splitlines()
    return [line.strip()[:160] for line in out[1:6]]


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[256, 512, 1024])
    ap.add_argument("--ranks", type=int, nargs="+", default=[8, 16])
    ap.add_argument("--steps", type=int, default=6, help="measured steps per cell")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: idle)")
    ap.add_argument("--pairs", type=int, default=64)
    ap.add_argument("--epochs", type=float, default=2)
    ap.add_argument("--adapter-len", type=int, default=512)
    ap.add_argument("--serving-repeats", type=int, default=3, help="0: skip the serving cost")
    ap.add_argument("--out", default=str(RESULTS / "distill_speed.json"))
    return ap.parse_args()


def measure(tok, rank: int, n: int, args: argparse.Namespace, threads: int) -> tuple[dict, Any]:
    """One (rank, length) cell: ``--warmup`` + ``--steps`` steps on pairs of ``n`` tokens;
    the cell's numbers and the trained LoRA (the first one is exported)."""
    from evotrainer.distill.train import train_lora

    pairs = [pair_of(tok, n, k) for k in range(args.warmup + args.steps)]
    settings = LoraSettings(
        rank=rank,
        alpha=2 * rank,
        steps=args.warmup + args.steps,
        max_seq_len=n,
        threads=threads,
        seed=0,
    )
    stamps: list[tuple[float, int]] = []

    def progress(p, stamps=stamps):
        stamps.append((time.perf_counter(), p.step))

    start = time.perf_counter()
    lora = train_lora(pairs, settings, progress=progress)
    assert not lora.pairs_skipped, lora.pairs_skipped
    step_s = [b[0] - a[0] for a, b in zip([(start, 0), *stamps], stamps, strict=False)]
    measured = step_s[args.warmup :]
    per_step = lora.tokens / len(lora.losses)
    cell = {
        "rank": rank,
        "seq_len": n,
        "tokens_per_step": per_step,
        "step_seconds": [round(s, 3) for s in step_s],
        "tokens_per_s": round(per_step * len(measured) / sum(measured), 1),
        "median_step_s": round(statistics.median(measured), 3),
        "trainable_params": sum(p.numel() for p in lora.model.parameters() if p.requires_grad),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }
    return cell, lora


def adapter_cost(
    cells: list[dict], args: argparse.Namespace, load_s: float, export_s: float | None
) -> list[dict]:
    """Per rank, the minutes one adapter costs at ``--adapter-len``: its measured rate, plus
    loading and export."""
    adapters = []
    for rank in args.ranks:
        cell = next(
            (c for c in cells if c["rank"] == rank and c["seq_len"] == args.adapter_len), None
        )
        if cell is None:
            continue
        tokens = args.pairs * args.epochs * args.adapter_len
        train_min = tokens / cell["tokens_per_s"] / 60
        adapters.append(
            {
                "rank": rank,
                "pairs": args.pairs,
                "epochs": args.epochs,
                "seq_len": args.adapter_len,
                "tokens": tokens,
                "train_minutes": round(train_min, 1),
                "load_and_export_minutes": round((load_s + (export_s or 0)) / 60, 2),
                "total_minutes": round(train_min + (load_s + (export_s or 0)) / 60, 1),
            }
        )
    return adapters


def main() -> None:
    args = parse_args()
    from evotrainer.distill.base_model import load_base, load_tokenizer
    from evotrainer.distill.export import write_adapter
    from evotrainer.llm.llamacpp import auto_threads

    info = machine()
    info["busiest_processes_at_start"] = busiest()
    threads = args.threads or auto_threads()
    log(f"load {info['load_avg_at_start']}, torch threads {threads}")
    t0 = time.perf_counter()
    tok = load_tokenizer()
    load_base()
    load_s = time.perf_counter() - t0
    log(f"tokenizer + model loaded in {load_s:.1f} s")

    cells = []
    export_s = None
    workdir = Path(tempfile.mkdtemp(prefix="distill-speed-"))
    adapter = None
    for rank in args.ranks:
        for n in args.lengths:
            cell, lora = measure(tok, rank, n, args, threads)
            if export_s is None:
                t = time.perf_counter()
                adapter, _ = write_adapter(lora, workdir)
                export_s = time.perf_counter() - t
            cells.append(cell)
            log(
                f"rank {rank:>2} len {n:>4}: {cell['tokens_per_s']:7.1f} tokens/s "
                f"(median step {cell['median_step_s']:.2f} s), load {cell['load_avg']}"
            )
            del lora

    adapters = adapter_cost(cells, args, load_s, export_s)
    serving = None
    if args.serving_repeats and adapter is not None:
        serving = serving_cost(adapter, tok, threads, args.serving_repeats)
        serving["adapter_rank"] = args.ranks[0]
        log(
            f"serving (llama.cpp, {threads} thread(s)): {serving['base_s']} s without, "
            f"{serving['adapter_s']} s with the adapter ({serving['slowdown']}x)"
        )
    shutil.rmtree(workdir, ignore_errors=True)
    info["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    info["busiest_processes_at_end"] = busiest()
    import torch
    import transformers

    out = {
        "what": "LoRA training tokens/s (forward+backward+AdamW, float32, CPU, batch size 1) "
        "of the embedded SmolLM2-135M-Instruct, dequantised from the shipped Q4_1 GGUF; all "
        "seven projections adapted; a quarter of each sequence is completion",
        "command": "python " + " ".join(sys.argv),
        "torch_threads": threads,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "load_seconds": round(load_s, 1),
        "export_seconds": round(export_s or 0, 2),
        "cells": cells,
        "adapter_cost": adapters,
        "serving": serving,
        "machine": info,
    }
    write_json(Path(args.out), out)
    for a in adapters:
        log(
            f"one adapter, rank {a['rank']}: {a['pairs']} pairs x {a['epochs']} epochs at "
            f"{a['seq_len']} tokens = {a['total_minutes']} minutes"
        )
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
