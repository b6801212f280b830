"""Quality at equal budget: EvoTrainer against the methods people use instead.

Every method gets the same model, the same data, the same truncation and the same number of
backend LLM calls per seed (task calls and mutation/reflection/meta-prompt calls alike); each
method and seed has its own budget and its own fresh cache. The chosen policy of every run is
then scored on held-out test meetings (outside the budget, one shared evaluator).

Methods (benchmarks/methods/, by name in registry.py):
  seeds          the hand-written seed policies A, B, C unchanged, and the best of the three on
                 the selection data ("seed_best")
  random_search  random prompt variations (1-2 operators applied to a random seed), each scored
                 on the selection meetings; the best kept
  inner_ga       EvoTrainer's inner GA alone (outer.enabled=false): harness fixed
  evotrainer     EvoTrainer with co-evolution (outer.enabled=true)
  gepa           GEPA (gepa package) with an adapter on the same task/metric/endpoint
  evoprompt_ga   promptolution's EvoPromptGA (EvoPrompt-style GA) on the same task/endpoint
  and the scarce, dialogue and distill profiles' own (fixed, labels_ga, uniform_mix,
  weights_only, sft_refs, alternation, alternation_frozen, alternation_per_scale)

Profiles (benchmarks/profiles/NAME.yaml, each with the comment that says when and why):
  quick     2 selection meetings (AMI train), 3 test meetings (AMI dev), 40 calls; one JSON
            file (--out). About 25 min on 2 idle CPU cores.
  full      5 selection meetings, all 20 AMI dev meetings, 300 calls; one JSON file.
  standard  (issue 11) selection on 12 AMI train meetings for every method; the engine also
            gets 8 further train meetings as its confirmation part (validation.confirm) and
            trains on real AMI train meetings (harness.real_data); GEPA reflects on 10 further
            ones; all disjoint. Test on all 20 AMI dev and all 61 ICSI meetings, reported
            separately and pooled, each method's paired difference to seed_best with a 95%
            bootstrap interval over meetings. 1,024-token head_tail cut, 300 calls, 3 seeds.
            Runs cell by cell (method x seed) into a results directory: resumable, see
            benchmarks/cells/. Hours on a CPU.
  long, scarce, distill, readable, readable-wide, distill-readable, dialogue: the standard
            profile's cells for issues 11, 32, 31, 46 and 48 (docs/benchmarks.md and the docs
            they name).

Without the data files (../shared/data/meetings/) every split falls back to disjoint held-out
synthetic meetings and the output says so.

    python benchmarks/quality.py --profile quick            # one JSON, < 60 min on 2 CPU cores
    python benchmarks/quality.py --profile standard         # resumable; rerun to continue
    python benchmarks/quality.py --profile standard --cells seeds,evotrainer:0   # a subset
    python benchmarks/quality.py --table benchmarks/results/quality-standard     # partial too
    python benchmarks/quality.py --profile standard --estimate   # time 3 calls, estimate
    python benchmarks/quality.py --model fake:minutes --budget 20 --seeds 2   # seconds, no model
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_profile, dialogue, result_file  # noqa: E402
from benchmarks import common as C  # noqa: E402
from benchmarks.cells import runner  # noqa: E402
from benchmarks.cells.table import table_from_dir  # noqa: E402
from benchmarks.methods import registry  # noqa: E402
from benchmarks.splits import test_set_path  # noqa: E402
from evotrainer.llm.base import SamplingParams  # noqa: E402


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The profile's run: into a results directory (a profile with ``cells``, or
    ``--results-dir``) or one JSON file (quick, full)."""
    prof = bench_profile.resolve(args)
    if prof.get("cells") or args.results_dir:
        return runner.run(args, prof)
    return result_file.run(args, prof)


def estimate(args: argparse.Namespace) -> dict[str, Any]:
    """Seconds per call at the profile's sizes (seeds A, B, C on one test meeting: one cold
    prefill, two with the transcript prefix reused) times the number of calls of a full run."""
    prof = bench_profile.resolve(args)
    task = bench_profile.meeting_task(prof)
    inst = C.load_split(task, args.test_data, 1, name="estimate", synthetic_seed=2002).instances
    backend = C.make_backend(args.model, prof["n_ctx"], args.threads, args.base_url)
    params = SamplingParams(temperature=0.0, max_tokens=prof["max_tokens"], seed=0)
    times, cpu, tokens = [], [], []
    for p in task.seed_policies():
        t0, c0 = time.perf_counter(), time.process_time()
        c = backend.complete(task.render(p.render(), inst[0])[0], params)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        tokens.append((c.prompt_tokens, c.completion_tokens))
    per_call = sum(times) / len(times)
    # CPU seconds of the (single-threaded) model ~ wall seconds on an idle core
    per_call_cpu = sum(cpu) / len(cpu)
    n_methods = len(registry.DEFAULT) - 1  # the budgeted ones
    n_test = {
        name: prof["n_test"] or C.count_lines(test_set_path(args, name), 20)
        for name in prof.get("test_sets", ["ami-dev"])
    }
    calls = {
        "seeds": 3 * prof["n_selection"],
        "budgeted": n_methods * prof["seeds"] * prof["budget"],
        "test_at_most": sum(n_test.values()) * (3 + n_methods * prof["seeds"]),
    }
    total = sum(calls.values())
    return {
        "profile": args.profile,
        "model": args.model,
        "threads": args.threads or getattr(backend, "n_threads", None),
        "seconds_per_call": [round(t, 2) for t in times],
        "cpu_seconds_per_call": [round(t, 2) for t in cpu],
        "tokens_per_call": tokens,
        "test_meetings": n_test,
        "calls": calls,
        "estimated_hours": round(total * per_call / 3600, 1),
        "estimated_hours_from_cpu_time": round(total * per_call_cpu / 3600, 1),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


def _what_and_model(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--profile", choices=bench_profile.names(), default="quick")
    ap.add_argument("--budget", type=int, help="backend LLM calls per method per seed")
    ap.add_argument(
        "--seeds",
        type=int,
        help="number of seeds (0..K-1); default 3 (a results directory records it: the grid)",
    )
    ap.add_argument("--model", default="local:smollm2", help=f"model spec, or {C.FAKE_SPEC}")
    ap.add_argument("--base-url", help="endpoint for an openai:<model> spec")
    ap.add_argument("--threads", type=int, help="CPU threads of the embedded model and server")
    ap.add_argument(
        "--methods",
        help=f"comma list of {', '.join(registry.DEFAULT)} (default all; a filter in a results "
        "directory)",
    )


def _data(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--train-data",
        default=C.DEFAULT_TRAIN,
        help="AMI train (JSONL): selection, confirmation, GEPA train and (standard) the engine's "
        "real training meetings",
    )
    ap.add_argument("--test-data", default=C.DEFAULT_TEST, help="test set ami-dev (JSONL)")
    ap.add_argument("--icsi-data", default=C.DEFAULT_ICSI, help="test set icsi (JSONL; standard)")
    dialogue.add_arguments(ap)
    ap.add_argument(
        "--n-test",
        type=int,
        help="test meetings per test set (spread over the file; standard: all)",
    )
    ap.add_argument("--n-selection", type=int, help="selection meetings")
    ap.add_argument("--max-input-tokens", type=int, help="transcript truncation (all methods)")
    ap.add_argument("--max-tokens", type=int, help="max tokens of one agent answer")
    ap.add_argument(
        "--engine-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override for the inner_ga and evotrainer runs (repeatable), e.g. "
        "defences.terminal_share=0.3",
    )
    ap.add_argument(
        "--profile-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a profile setting (repeatable; VALUE as JSON), e.g. population=4 "
        "n_confirm=2 n_gepa_train=2",
    )
    ap.add_argument("--out", help="result JSON (default benchmarks/results/quality-PROFILE.json)")


def _cells(ap: argparse.ArgumentParser) -> None:
    cells = ap.add_argument_group(
        "results directory (standard profile, or any profile with --results-dir)"
    )
    cells.add_argument(
        "--results-dir",
        help="one JSON per (method, seed) cell + test scores + summary.json "
        "(default benchmarks/results/quality-PROFILE/); a rerun skips finished cells and "
        "refuses other settings",
    )
    cells.add_argument(
        "--cells",
        help="run only these cells: comma list of METHOD or METHOD:SEED (e.g. seeds,gepa:0)",
    )
    cells.add_argument("--skip-test", action="store_true", help="run cells, no test evaluation")
    cells.add_argument(
        "--test-only", action="store_true", help="no cells: test-evaluate the finished ones"
    )
    cells.add_argument(
        "--log-every", type=int, default=5, help="test evaluation: log (and save) every N meetings"
    )
    cells.add_argument(
        "--log-every-calls",
        type=int,
        default=50,
        help="log every N backend calls inside a cell (0 = off)",
    )


def _modes(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--work-dir",
        help="caches, logs, engine run dirs (default benchmarks/results/tmp/quality-TAG, or "
        "benchmarks/results/tmp/quality-NAME for a results directory NAME)",
    )
    ap.add_argument("--tag", default="run", help="name of the default work dir")
    ap.add_argument("--no-test-cache", action="store_true", help="no shared test-set cache")
    ap.add_argument(
        "--train-cache",
        action="store_true",
        help="engine cells that distil read an identical LoRA training back from "
        "RESULTS/train-cache/ instead of running it (distill.cache_dir; its record says "
        "cache: reused and keeps the original's CPU seconds)",
    )
    ap.add_argument(
        "--table",
        metavar="JSON_OR_DIR",
        help="print the table of a result file or results directory (partial ones too) and exit",
    )
    ap.add_argument("--rescore", metavar="JSON", help="(re)score a result file on the test set")
    ap.add_argument(
        "--estimate",
        action="store_true",
        help="time 3 real calls at the profile's sizes and print the estimated total time",
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    _what_and_model(ap)
    _data(ap)
    _cells(ap)
    _modes(ap)
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.table:
        path = Path(args.table)
        if path.is_dir():
            print(table_from_dir(path))
        else:
            print(result_file.table(json.loads(path.read_text())))
        return 0
    if args.estimate:
        print(json.dumps(estimate(args), indent=2))
        return 0
    if args.rescore:
        result_file.rescore(args)
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
