"""Efficiency against the machine's limit (budget: <= 10 minutes on 2 CPU cores).

1. throughput: policy evaluations per second, reward scoring included, with a zero-latency fake
   LLM that writes plausible minutes; how it grows with population and batch size; and a whole
   co-evolution run on the fake (validation with ROUGE included).
2. llm_share: a demo-sized run on the embedded model (configs/demo.yaml, smaller): share of
   wall time spent inside LLM calls (summary runtime.llm_seconds / wall_s).
3. warm_rerun: the same seeded config again on the now warm cache: speed-up, and whether
   summary.json is identical except wall_s and runtime.
4. tokens: prompt tokens per completion token, as requested and as really prefilled (llama.cpp
   reuses the longest shared token prefix with the previous call).
5. layout: P policies on M meetings in four arrangements: instance-major vs policy-major order,
   transcript-first (the task's layout) vs policy-first (policy as a system message before the
   transcript); wall seconds and prefilled tokens per evaluation.

    python benchmarks/efficiency.py                        # all sections, embedded model
    python benchmarks/efficiency.py --model fake:minutes   # throughput only (seconds)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from evotrainer.coevolution import CoEvolution  # noqa: E402
from evotrainer.config import CacheConfig, load_config  # noqa: E402
from evotrainer.errors import BudgetExceeded  # noqa: E402
from evotrainer.evaluation.evaluator import Evaluator  # noqa: E402
from evotrainer.evaluation.runner import SerialRunner  # noqa: E402
from evotrainer.llm.base import LLMClient, SamplingParams  # noqa: E402
from evotrainer.llm.budget import Budget  # noqa: E402
from evotrainer.llm.spec import build_stack  # noqa: E402
from evotrainer.operators.variations import seed_variations  # noqa: E402
from evotrainer.policy.genome import PolicyGenome  # noqa: E402
from evotrainer.tasks.meetings.render import render_transcript  # noqa: E402
from evotrainer.tasks.meetings.seeds import seed_policies  # noqa: E402
from evotrainer.tasks.meetings.style import VOCABULARY  # noqa: E402
from evotrainer.tasks.meetings.task import MeetingTask  # noqa: E402
from evotrainer.types import Instance, Message  # noqa: E402

DEMO_CONFIG = C.REPO / "configs" / "demo.yaml"
# configs/demo.yaml made smaller so cold run + warm rerun + layout fit in ~10 minutes.
DEMO_OVERRIDES = [
    "inner.population=4",
    "inner.elites=2",
    "inner.tasks_per_generation=2",
    "inner.generations=2",
    "outer.every=1",
    "outer.variants=1",
    "validation.limit=2",
    "task.max_input_tokens=512",
    "model.max_tokens=128",
    "model.operator_max_tokens=128",
    "model.n_ctx=4096",
]


def fresh_demo_run(
    work: Path, name: str, overrides: list[str], decoder_stats: dict[str, Any] | None = None
) -> dict[str, Any]:
    """configs/demo.yaml with ``overrides`` in WORK/NAME from a fresh run directory and a fresh
    cache (WORK/NAME.sqlite), no HTML report; its summary.json. A run stopped by a call cap
    below its first generation is logged, not fatal (its summary is written all the same).
    ``decoder_stats``, if given, receives the embedded backend's batched-decoder counters
    (seconds by phase, rows per step), when the run used it."""
    run_dir, cache = work / name, work / f"{name}.sqlite"
    shutil.rmtree(run_dir, ignore_errors=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    cfg = load_config(DEMO_CONFIG, [*overrides, f"cache.path={cache}", "report=false"])
    C.log(f"{name}: running ...")
    engine = CoEvolution(cfg)
    try:
        engine.run(run_dir)
    except BudgetExceeded as exc:
        C.log(f"{name}: {exc}")
    decoder = getattr(engine.components.stack.backend, "_decoder", None)
    if decoder_stats is not None and decoder is not None:
        decoder_stats.update(decoder.stats)
    return json.loads((run_dir / "summary.json").read_text())


# -- 1. throughput with a zero-latency fake --------------------------------------------------
def policies(n: int) -> list[PolicyGenome]:
    seeds = seed_policies()
    out = list(seeds)
    k = 0
    while len(out) < n:
        extra = seed_variations(seeds, n - len(out), C.rng_for("throughput", k), vocab=VOCABULARY)
        known = {p.id for p in out}
        out += [p for p in extra if p.id not in known]
        k += 1
        if k > 50:  # variations exhausted: number the rest
            out += [
                PolicyGenome.from_text(f"{seeds[i % 3].system} (variant {i})")
                for i in range(n - len(out))
            ]
    return out[:n]


def throughput(min_seconds: float = 0.5, engine_generations: int = 6) -> dict[str, Any]:
    task = MeetingTask(max_input_tokens=1536)
    gen = task.generator()
    rows = []
    for pop in (4, 10, 20):
        for batch in (5, 20, 50):
            insts = gen.sample(batch, 0.3, C.rng_for("throughput-batch", batch))
            pols = policies(pop)
            n = 0
            t0 = time.perf_counter()
            reps = 0
            while True:
                stack = build_stack(C.fake_llm(), CacheConfig(enabled=False), Budget())
                ev = Evaluator(task, stack.client, SamplingParams(), SerialRunner())
                ev.evaluate(pols, insts)
                for p in pols:
                    ev.fitness(
                        p.id, insts, {"completeness": 0.5, "format": 0.2, "action_count": 0.3}
                    )
                n += pop * batch
                reps += 1
                if time.perf_counter() - t0 >= min_seconds:
                    break
            dt = time.perf_counter() - t0
            rows.append(
                {
                    "population": pop,
                    "batch": batch,
                    "evaluations": n,
                    "seconds": round(dt, 3),
                    "evals_per_s": round(n / dt, 1),
                }
            )
            C.log(f"throughput P={pop} N={batch}: {n / dt:.0f} evaluations/s")
    return {"evaluator": rows, "engine": engine_throughput(engine_generations)}


def engine_throughput(generations: int = 6) -> dict[str, Any]:
    """A whole co-evolution run on the fake (SPEC sizes: population 10, 20 tasks per policy),
    validation on 8 synthetic meetings with ROUGE: everything but the LLM."""
    cfg = load_config(
        None,
        [
            f"inner.generations={generations}",
            "outer.every=3",
            "outer.variants=2",
            "validation.data=null",
            "validation.synthetic_size=8",
            "cache.enabled=false",
            "report=false",
        ],
    )
    from evotrainer.tasks.meetings import metrics

    t0 = time.perf_counter()
    metrics._rouge()  # one-time import of rouge_score (nltk, scipy): not per-evaluation cost
    import_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = CoEvolution(cfg, llm=C.fake_llm()).run()
    wall = time.perf_counter() - t0
    s = res.summary
    C.log(f"engine on the fake: {s['llm_calls'] / wall:.0f} evaluations/s")
    return {
        "rouge_import_s": round(import_s, 2),
        "config": f"defaults (population 10, 20 tasks/policy) + generations {generations}, "
        "outer every 3, 2 variants, 8 synthetic validation meetings, cache off",
        "llm_calls": s["llm_calls"],
        "wall_s": round(wall, 2),
        "evals_per_s": round(s["llm_calls"] / wall, 1),
        "generations": s["generations"],
        "outer_steps": s["outer_steps"],
    }


# -- 2-4. demo-sized run on the embedded model --------------------------------------------------
class PrefillCounter:
    """Counts the tokens llama.cpp really evaluates: the first ``eval`` of each completion is
    the prompt suffix left after prefix reuse; later ones are generated tokens."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        llm = backend._llm
        self._eval = llm.eval
        self.prefill = 0
        self.generated = 0
        self.calls = 0
        self._first = True
        self._complete = backend.complete
        llm.eval = self._count
        backend.complete = self._wrap

    def _count(self, tokens):
        if self._first:
            self.prefill += len(tokens)
            self._first = False
        else:
            self.generated += len(tokens)
        return self._eval(tokens)

    def _wrap(self, messages, params):
        self._first = True
        self.calls += 1
        return self._complete(messages, params)

    def snapshot(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "prefill_tokens": self.prefill,
            "eval_generated": self.generated,
        }


def demo_runs(backend: LLMClient, counter: PrefillCounter | None, work: Path) -> dict[str, Any]:
    cache = work / "demo-cache.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    overrides = [*DEMO_OVERRIDES, f"cache.path={cache}"]
    val = C.resolve(C.DEFAULT_TEST)
    if val is not None and val.is_file():  # configs/demo.yaml's path is relative to the repo
        overrides.append(f"validation.data={val}")
    cfg = load_config(DEMO_CONFIG, overrides)
    out: dict[str, Any] = {"config": f"{DEMO_CONFIG.name} + " + " ".join(DEMO_OVERRIDES)}
    summaries = []
    for label in ("cold", "warm"):
        run_dir = work / f"demo-{label}"
        shutil.rmtree(run_dir, ignore_errors=True)
        before = counter.snapshot() if counter else {}
        t0 = time.perf_counter()
        res = CoEvolution(cfg, llm=backend).run(run_dir)
        total = time.perf_counter() - t0
        s = json.loads((run_dir / "summary.json").read_text())
        summaries.append(s)
        rt = s["runtime"]
        rec = {
            "wall_s": s["wall_s"],
            "total_s_incl_report": round(total, 2),
            "llm_seconds": rt["llm_seconds"],
            "llm_share_of_wall": round(rt["llm_seconds"] / s["wall_s"], 4) if s["wall_s"] else None,
            "llm_share_incl_report": round(rt["llm_seconds"] / total, 4),
            "backend_calls": rt["backend_calls"],
            "cache_hits": rt["cache_hits"],
            "llm_calls": s["llm_calls"],
            "prompt_tokens": s["prompt_tokens"],
            "completion_tokens": s["completion_tokens"],
            "stopped": s["stopped"],
            "s_val": [s["initial_s_val"], s["final_s_val"]],
            "best_policy": res.best.id,
        }
        if counter:
            after = counter.snapshot()
            rec["prefilled_tokens"] = after["prefill_tokens"] - before.get("prefill_tokens", 0)
        out[label] = rec
        C.log(
            f"demo {label}: wall {s['wall_s']:.1f}s, llm {rt['llm_seconds']:.1f}s "
            f"({rec['llm_share_of_wall']:.1%}), {rt['backend_calls']} backend calls"
        )
    cold, warm = summaries
    ignore = {"wall_s", "runtime"}
    diff = sorted(
        k for k in set(cold) | set(warm) if k not in ignore and cold.get(k) != warm.get(k)
    )
    out["warm_rerun"] = {
        "speedup": round(cold["wall_s"] / warm["wall_s"], 1) if warm["wall_s"] else None,
        "summary_identical_except_wall_and_runtime": not diff,
        "differing_keys": diff,
        "warm_backend_calls": warm["runtime"]["backend_calls"],
    }
    c = out["cold"]
    out["tokens"] = {
        "prompt_per_completion_token_requested": round(
            c["prompt_tokens"] / max(1, c["completion_tokens"]), 2
        ),
        "prompt_per_completion_token_prefilled": round(
            c.get("prefilled_tokens", 0) / max(1, c["completion_tokens"]), 2
        )
        if counter
        else None,
        "prefix_reuse_saving": round(
            1 - c.get("prefilled_tokens", 0) / max(1, c["prompt_tokens"]), 3
        )
        if counter
        else None,
    }
    return out


ARRANGEMENTS = (
    (False, "instance-major"),
    (False, "policy-major"),
    (True, "instance-major"),
    (True, "policy-major"),
)


# -- 5. prompt layout --------------------------------------------------------------------------
def layout(
    backend: Any,
    counter: PrefillCounter,
    instances: list[Instance],
    n_policies: int,
    max_tokens: int,
    max_input_tokens: int = 512,
    arrangements: tuple[tuple[bool, str], ...] = ARRANGEMENTS,
) -> dict[str, Any]:
    """``arrangements``: (policy_first, order) pairs to measure."""
    task = MeetingTask(max_input_tokens=max_input_tokens)
    pols = policies(n_policies)
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens, seed=0)

    def messages(p: PolicyGenome, inst: Instance, policy_first: bool) -> list[Message]:
        if not policy_first:
            return task.render(p.render(), inst)[0]
        block, _ = render_transcript(inst.payload, task.max_input_tokens, task.truncation)
        return [Message("system", p.render()), Message("user", block)]

    rows = []
    for policy_first, order in arrangements:
        if order == "instance-major":
            jobs = [(p, i) for i in instances for p in pols]
        else:
            jobs = [(p, i) for p in pols for i in instances]
        backend._llm.reset()  # start cold: no prefix from the previous arrangement
        before = counter.snapshot()
        t0 = time.perf_counter()
        completion = 0
        for p, i in jobs:
            completion += backend.complete(messages(p, i, policy_first), params).completion_tokens
        dt = time.perf_counter() - t0
        pre = counter.snapshot()["prefill_tokens"] - before["prefill_tokens"]
        rows.append(
            {
                "layout": "policy-first (system message)" if policy_first else "transcript-first",
                "order": order,
                "evaluations": len(jobs),
                "s_per_evaluation": round(dt / len(jobs), 3),
                "prefilled_tokens_per_evaluation": round(pre / len(jobs), 1),
                "completion_tokens_per_evaluation": round(completion / len(jobs), 1),
            }
        )
        C.log(
            f"layout {rows[-1]['layout']}, {order}: {dt / len(jobs):.2f} s/eval, "
            f"{pre / len(jobs):.0f} prefilled tokens/eval"
        )
    return {
        "policies": n_policies,
        "meetings": [i.id for i in instances],
        "max_input_tokens": max_input_tokens,
        "max_tokens": max_tokens,
        "rows": rows,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    t0 = time.perf_counter()
    work = Path(args.work_dir) if args.work_dir else C.WORK / "efficiency"
    work.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {
        "benchmark": "efficiency",
        "command": "python " + " ".join([sys.argv[0], *args.argv]),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": C.machine(),
        "model": args.model,
    }
    out_path = Path(args.out) if args.out else C.RESULTS / "efficiency.json"
    doc["throughput"] = throughput(args.min_seconds, args.engine_generations)
    C.write_json(out_path, doc)
    if args.model != C.FAKE_SPEC:
        t = time.perf_counter()
        backend = C.make_backend(args.model, 4096, args.threads)
        doc["model_load_s"] = round(time.perf_counter() - t, 2)
        doc["threads"] = getattr(backend, "n_threads", None)
        counter = PrefillCounter(backend) if hasattr(backend, "_llm") else None
        if not args.skip_demo:
            doc["demo"] = demo_runs(backend, counter, work)
            C.write_json(out_path, doc)
        if counter is not None:
            task = MeetingTask(max_input_tokens=args.layout_input_tokens)
            split = C.load_split(
                task, args.data, args.layout_meetings, name="layout", synthetic_seed=3003
            )
            doc["layout"] = layout(
                backend,
                counter,
                split.instances,
                args.layout_policies,
                args.layout_max_tokens,
                args.layout_input_tokens,
            )
            doc["layout"]["data"] = split.info["source"]
    doc["elapsed_s"] = round(time.perf_counter() - t0, 1)
    C.write_json(out_path, doc)
    C.log(f"wrote {out_path} ({doc['elapsed_s']:.0f} s)")
    return doc


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="local:smollm2", help=f"model spec, or {C.FAKE_SPEC}")
    ap.add_argument("--threads", type=int, help="CPU threads of the embedded model")
    ap.add_argument("--out", help="result JSON (default benchmarks/results/efficiency.json)")
    ap.add_argument("--work-dir", help="run directories and caches")
    ap.add_argument("--data", default=C.DEFAULT_TRAIN, help="meetings for the layout test")
    ap.add_argument("--min-seconds", type=float, default=0.5, help="per throughput cell")
    ap.add_argument("--engine-generations", type=int, default=6, help="fake engine run")
    ap.add_argument("--layout-policies", type=int, default=4)
    ap.add_argument("--layout-meetings", type=int, default=2)
    ap.add_argument("--layout-max-tokens", type=int, default=32)
    ap.add_argument("--layout-input-tokens", type=int, default=512)
    ap.add_argument("--skip-demo", action="store_true", help="no demo-sized run (layout only)")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def main(argv: list[str] | None = None) -> int:
    run(parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
