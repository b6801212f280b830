"""A demo-sized co-evolution on the embedded model with batched decoding on and off (issue 12):
``configs/demo.yaml`` run twice from a fresh cache, ``model.batch_size`` 8 and 1. Wall time, the
speed-up, and whether ``summary.json`` is the same apart from timings (``wall_s`` and
``runtime.llm_seconds``: every other key, the backend counters included, must be equal).

    python benchmarks/batching_demo.py                  # configs/demo.yaml twice, ~20-25 min
    python benchmarks/batching_demo.py --quick          # efficiency.py's smaller demo, ~6 min
    python benchmarks/batching_demo.py --batch-size 16  # on = 16 prompts per batch
    python benchmarks/batching_demo.py --model local:smollm2-q4_0   # requantized weights, both
    python benchmarks/batching_demo.py --reuse-off      # time "on" only, against the last "off"

Writes benchmarks/results/batching_demo.json. Run from the repository root (the demo config's
data paths are relative to it), on an idle machine.
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
from benchmarks.efficiency import DEMO_CONFIG, DEMO_OVERRIDES, fresh_demo_run  # noqa: E402
from evotrainer.config import load_config  # noqa: E402


def run(
    work: Path, name: str, overrides: list[str], decoder_stats: dict[str, Any] | None = None
) -> dict[str, Any]:
    summary = fresh_demo_run(work, name, overrides, decoder_stats)
    C.log(f"{name}: {summary['wall_s']} s, {summary['llm_calls']} calls")
    return summary


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(a) | set(b)):
        if key == "wall_s":
            continue
        x, y = a.get(key), b.get(key)
        if key == "runtime":
            x = {k: v for k, v in (x or {}).items() if k != "llm_seconds"}
            y = {k: v for k, v in (y or {}).items() if k != "llm_seconds"}
        if x != y:
            out.append(key)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="efficiency.py's smaller demo")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--model", help="model.spec of both runs (default: the demo's)")
    ap.add_argument("--out", default=str(C.RESULTS / "batching_demo.json"))
    ap.add_argument(
        "--draft-tokens",
        type=int,
        default=0,
        help="model.draft_tokens of the 'on' run (prompt-lookup drafts; answers then differ "
        "from one at a time, docs/efficiency.md)",
    )
    ap.add_argument(
        "--reuse-off",
        action="store_true",
        help="take the 'off' arm from the last run's work directory (same settings: the 'off' "
        "path does not change with the batched decoder) and time only 'on'; valid on the same "
        "host and session only",
    )
    args = ap.parse_args(argv)
    base = (DEMO_OVERRIDES if args.quick else []) + [f"model.n_threads={args.threads}"]
    if args.model:
        base.append(f"model.spec={args.model}")
    work = C.WORK / "batching_demo"
    work.mkdir(parents=True, exist_ok=True)
    off_overrides = [*base, "model.batch_size=1"]
    off_file = work / "off" / "summary.json"
    reused = None
    if args.reuse_off and off_file.is_file():
        import json

        off = json.loads(off_file.read_text())
        want = load_config(DEMO_CONFIG, [*off_overrides, "report=false"]).model
        got = load_config(work / "off" / "config.yaml").model
        if got != want:
            raise SystemExit(f"--reuse-off: {off_file} ran with other model settings: {got}")
        reused = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(off_file.stat().st_mtime))
        C.log(f"off: reused {off_file} (written {reused}): {off['wall_s']} s")
    else:
        off = run(work, "off", off_overrides)
    on_decoder: dict[str, Any] = {}
    on_overrides = [*base, f"model.batch_size={args.batch_size}"]
    if args.draft_tokens:
        on_overrides.append(f"model.draft_tokens={args.draft_tokens}")
    on = run(work, "on", on_overrides, on_decoder)
    diff = differences(off, on)
    result = {
        "machine": C.machine(),
        "settings": vars(args),
        "off": {"wall_s": off["wall_s"], "llm_seconds": off["runtime"]["llm_seconds"]},
        "on": {"wall_s": on["wall_s"], "llm_seconds": on["runtime"]["llm_seconds"]},
        "speedup": round(off["wall_s"] / on["wall_s"], 2),
        "summary_differs_in": diff,
        "same_summary_apart_from_timings": not diff,
        "llm_calls": off["llm_calls"],
        "final_s_val": [off["final_s_val"], on["final_s_val"]],
        "off_reused_from": reused,
        "on_decoder": on_decoder or None,
    }
    C.write_json(Path(args.out), result)
    print("\n| batching | wall_s | LLM seconds |\n|---|---|---|")
    print(f"| off (batch_size 1) | {off['wall_s']:.1f} | {off['runtime']['llm_seconds']:.1f} |")
    print(
        f"| on (batch_size {args.batch_size}) | {on['wall_s']:.1f} | {on['runtime']['llm_seconds']:.1f} |"
    )
    print(
        f"\nspeed-up {result['speedup']}x; summary.json the same apart from timings: "
        f"{'yes' if not diff else 'NO, differs in ' + ', '.join(diff)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
