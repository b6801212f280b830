"""Does llama.cpp give a token the same logits however it is batched? (issue 12)

The batched decoder's answers equal the sequential path's only where every logit is the same
float. This probe measures, on one llama_context with a KV stream per sequence (the batched
decoder's own), the largest logit difference and the number of changed greedy choices

- ``rows``: P sequences, one token each, decoded in one step against each alone (batching);
- ``tokens``: k tokens of one sequence decoded in one step against one at a time (what
  prompt-lookup drafts do);
- ``split``: the same k tokens in one step against the same k cut into two steps (a prompt's
  own tokens cut into decodes at another place).

Run it against any llama-cpp-python build: the build's flags are written to the JSON (llama.cpp's
system info, e.g. ``LLAMAFILE = 1``). docs/efficiency.md ("Why drafts and wide groups rounded
differently") has the results of the default build and of one made with ``-DGGML_LLAMAFILE=OFF``::

    python benchmarks/logit_identity.py --out benchmarks/results/logit_identity-q4_1.json
    python benchmarks/logit_identity.py --model other.gguf --threads 2
    PYTHONPATH=/path/to/other/build python benchmarks/logit_identity.py

No timings, so the machine need not be idle, unless ``--speed``: then also prompt prefill
tokens/s (2,048-token prompts, one sequence) and the cost of a step of 8 sequences with 1 and 9
tokens each, which is what a build's kernels change (run it idle).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402


def prefix_tokens(llm, data: str, n: int) -> list[int]:
    """``n`` tokens of a meeting's prompt (an AMI train meeting, or a held-out synthetic
    one without the data), repeated if it is shorter: only their being the same in every
    comparison matters."""
    from evotrainer.tasks.meetings.task import MeetingTask

    task = MeetingTask(max_input_tokens=2 * n)
    split = C.load_split(task, data, 1, name="prefix", synthetic_seed=5)
    C.log(split.info["message"])
    messages, _ = task.render("", split.instances[0])
    tokens = llm.tokenize("\n".join(m.content for m in messages).encode("utf-8"))
    return (tokens * (1 + n // len(tokens)))[:n]


def speed(llm, dec, prefix: list[int]) -> dict:
    """Prefill tokens/s (the sequential path's Llama.eval) and median ms of a step of 8
    sequences x k tokens (the batched decoder's context, after its prefix)."""
    import statistics
    import time

    import llama_cpp

    long = (prefix * (1 + 2048 // len(prefix)))[:2048]
    rates = []
    for _ in range(3):
        llm.reset()
        start = time.perf_counter()
        llm.eval(long)
        rates.append(len(long) / (time.perf_counter() - start))
    llm.reset()
    L, mem, steps = len(prefix), dec._ctx.memory, {}
    n = min(8, dec.max_sequences)
    for k in (1, 9):
        times = []
        for _ in range(15):
            entries = [
                (prefix[(7 * j + s) % L], L + j, s, True) for s in range(n) for j in range(k)
            ]
            start = time.perf_counter()
            dec._decode(entries, "steps")
            times.append(time.perf_counter() - start)
            for s in range(n):
                llama_cpp.llama_memory_seq_rm(mem, s, L, -1)
        steps[f"{n}x{k}"] = round(1000 * statistics.median(times), 1)
    return {"prefill_tokens_per_s": round(statistics.median(rates), 1), "step_ms": steps}


class Probe:
    """The batched decoder's context with the shared prefix in sequence 0, copied to every
    other sequence; decodes after the prefix are compared, then cleared."""

    def __init__(self, llm, dec, prefix: list[int], n_seq: int) -> None:
        import llama_cpp

        self.dec, self.prefix, self.n_seq = dec, prefix, n_seq
        self.ctx, self.mem, self.n_vocab = dec._ctx, dec._ctx.memory, llm._n_vocab
        self.L = len(prefix)
        for s in range(1, n_seq):
            llama_cpp.llama_memory_seq_cp(self.mem, 0, s, -1, -1)

    def logits(self, i: int):
        import numpy as np

        return np.ctypeslib.as_array(self.ctx.get_logits_ith(i), shape=(self.n_vocab,)).copy()

    def clear(self) -> None:
        import llama_cpp

        for s in range(self.n_seq):
            llama_cpp.llama_memory_seq_rm(self.mem, s, self.L, -1)

    def rows(self, p: int) -> dict:
        """P sequences, one token each (distinct tokens from the prefix), alone vs in one step."""
        dec, L = self.dec, self.L
        toks = [self.prefix[(37 * s + 11) % L] for s in range(p)]
        alone = []
        for s, t in enumerate(toks):
            dec._decode([(t, L, s, True)], "steps")
            alone.append(self.logits(0))
        self.clear()
        dec._decode([(t, L, s, True) for s, t in enumerate(toks)], "steps")
        together = [self.logits(i) for i in range(p)]
        self.clear()
        return compare(alone, together)

    def tokens(self, k: int) -> tuple[dict, dict]:
        """k tokens of one sequence, one at a time vs in one step; and the same k tokens cut
        into two steps (as another chunking of a prompt would) vs in one step."""
        dec, L = self.dec, self.L
        toks = self.prefix[L // 2 : L // 2 + k]
        alone = []
        for j, t in enumerate(toks):
            dec._decode([(t, L + j, 0, True)], "steps")
            alone.append(self.logits(0))
        self.clear()
        dec._decode([(t, L + j, 0, True) for j, t in enumerate(toks)], "steps")
        together = [self.logits(j) for j in range(k)]
        self.clear()
        half = k // 2
        dec._decode([(t, L + j, 0, True) for j, t in enumerate(toks[:half])], "steps")
        split = [self.logits(j) for j in range(half)]
        dec._decode([(t, L + j, 0, True) for j, t in enumerate(toks[half:], start=half)], "steps")
        split += [self.logits(j) for j in range(k - half)]
        self.clear()
        return compare(alone, together), compare(split, together)


def compare(alone: list, together: list) -> dict:
    import numpy as np

    diffs = [float(np.max(np.abs(a - b))) for a, b in zip(alone, together, strict=True)]
    flips = sum(int(np.argmax(a) != np.argmax(b)) for a, b in zip(alone, together, strict=True))
    return {
        "max_abs_diff": max(diffs),
        "identical": sum(d == 0.0 for d in diffs),
        "compared": len(diffs),
        "greedy_flips": flips,
        "logit_scale": float(max(np.max(np.abs(a)) for a in alone)),
    }


def print_table(out: dict) -> None:
    print(
        f"{out['model']}, llama-cpp-python {out['llama_cpp_python']}, llamafile {out['llamafile']}"
    )
    print("| decoded together | max logit difference | identical | greedy flips |")
    print("|---|---|---|---|")
    labels = (
        ("rows", "{} sequences x 1 token, against each alone"),
        ("tokens", "1 sequence x {} tokens, against one at a time"),
        ("split", "1 sequence x {} tokens, against the same in two steps"),
    )
    for kind, label in labels:
        for n, r in out[kind].items():
            print(
                f"| {label.format(n)} | {r['max_abs_diff']:.4g} (logits up to {r['logit_scale']:.1f})"
                f" | {r['identical']} of {r['compared']} | {r['greedy_flips']} |"
            )
    if "speed" in out:
        sp = out["speed"]
        print(f"prefill {sp['prefill_tokens_per_s']} tokens/s; step ms {sp['step_ms']}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--model", help="a GGUF file (default: the embedded SmolLM2 Q4_1)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prefix", type=int, default=512, help="shared prefix tokens")
    ap.add_argument("--data", default=C.DEFAULT_TRAIN, help="meetings JSONL for the prefix")
    ap.add_argument("--rows", type=int, nargs="+", default=[2, 4, 8, 16])
    ap.add_argument("--tokens", type=int, nargs="+", default=[2, 4, 9, 32])
    ap.add_argument("--speed", action="store_true", help="also time prefill and wide steps")
    ap.add_argument("--out", type=Path)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    import llama_cpp

    from evotrainer.llm.llamacpp import smollm2_path
    from evotrainer.llm.llamacpp_batch import BatchDecoder, pieces

    path = args.model or str(smollm2_path())
    llm = llama_cpp.Llama(
        model_path=path,
        n_ctx=2048,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        verbose=False,
    )
    n_seq = max(max(args.rows), 2)
    dec = BatchDecoder(llm, n_seq)
    dec._context(args.prefix + max(args.tokens) + 8)
    prefix = prefix_tokens(llm, args.data, args.prefix)
    for a, b in pieces(0, len(prefix), dec.n_batch):  # as the decoder prefills
        dec._decode([(prefix[i], i, 0, False) for i in range(a, b)], "prefill")
    probe = Probe(llm, dec, prefix, n_seq)

    results: dict = {"rows": {}, "tokens": {}, "split": {}}
    for p in args.rows:
        results["rows"][p] = probe.rows(p)
    for k in args.tokens:
        results["tokens"][k], results["split"][k] = probe.tokens(k)
    if args.speed:
        results["speed"] = speed(llm, dec, prefix)
    dec.close()

    system = llama_cpp.llama_print_system_info().decode()
    out = {
        "model": Path(path).name,
        "threads": args.threads,
        "prefix_tokens": probe.L,
        "llama_cpp_python": llama_cpp.__version__,
        "llama_cpp_module": llama_cpp.__file__,
        "llamafile": "LLAMAFILE = 1" in system,
        "system_info": system.strip(),
        **results,
    }
    print_table(out)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
