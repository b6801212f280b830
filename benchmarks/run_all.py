"""`make bench`: the efficiency benchmark, then the quality benchmark.

    python benchmarks/run_all.py                          # quick profile (<= ~70 min in all)
    python benchmarks/run_all.py --profile full           # hours: see docs/benchmarks.md
    python benchmarks/run_all.py --skip-efficiency --budget 40 --seeds 3
    make bench BENCH_ARGS="--profile quick --threads 1"

Flags not listed here go to quality.py unchanged (see `python benchmarks/quality.py -h`);
``--model``, ``--threads`` and ``--work-dir`` go to both.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from benchmarks import efficiency, quality  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--skip-efficiency", action="store_true")
    ap.add_argument("--skip-quality", action="store_true")
    ap.add_argument("--model", default="local:smollm2")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--work-dir")
    ap.add_argument("--efficiency-out", help="default benchmarks/results/efficiency.json")
    ap.add_argument(
        "--min-seconds", help="efficiency: seconds per throughput cell (and a 1-generation run)"
    )
    args, rest = ap.parse_known_args(argv)
    shared = ["--model", args.model]
    if args.threads:
        shared += ["--threads", str(args.threads)]
    if not args.skip_efficiency:
        eff = list(shared)
        if args.work_dir:
            eff += ["--work-dir", str(Path(args.work_dir) / "efficiency")]
        if args.efficiency_out:
            eff += ["--out", args.efficiency_out]
        if args.min_seconds:
            eff += ["--min-seconds", args.min_seconds, "--engine-generations", "1"]
        C.log("== efficiency ==")
        efficiency.main(eff)
    if not args.skip_quality:
        q = [*shared, *rest]
        if args.work_dir:
            q += ["--work-dir", str(Path(args.work_dir) / "quality")]
        C.log("== quality ==")
        quality.main(q)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
