"""Transfer: does a warm start (``--init-from``) reach the cold start's s_val in fewer calls?

For every seed, three runs of one config (default configs/demo.yaml):

- **source**: the config trained on synthetic meetings only (``harness.real_data: null``);
- **cold**: the config as it is (training batches mix real AMI *train* meetings in);
- **warm**: the cold config, seeded from the source run's archive front (``init_from``).

The target is the cold run's final s_val (the archive's best on the selection meetings). For the
cold and the warm run: the LLM calls spent when a policy first validated at or above it
(``llm_calls`` of the ``validation`` event; requests, cache hits included, so a shared cache
cannot flatter either), and each run's final s_val and total calls. The source run's calls are
reported too: a warm start is cheaper overall only when the source run exists anyway. Selection
and confirmation both use AMI train meetings; ami-dev and ICSI are never touched.

    python benchmarks/transfer.py --seeds 0 1 2                       # embedded model, ~2 h

Resumable: a run whose directory holds a completed summary.json is read back, not run again
(rerun the same command with the same --work-dir and --resume to continue; a killed run
starts again).
    python benchmarks/transfer.py --model fake:minutes --seeds 0      # plumbing check, seconds
    python benchmarks/transfer.py --set inner.generations=4 --out docs/results/transfer.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from evotrainer.coevolution import CoEvolution  # noqa: E402
from evotrainer.config import RunConfig, load_config  # noqa: E402
from evotrainer.llm.base import LLMClient  # noqa: E402

KINDS = ("source", "cold", "warm")


def calls_to_reach(run_dir: Path, target: float) -> int | None:
    """LLM calls spent when a fully validated policy first reached ``target`` (None: never)."""
    for line in (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") != "validation" or e.get("partial") or e.get("s_val") is None:
            continue
        if e["s_val"] >= target - 1e-12 and e.get("llm_calls") is not None:
            return int(e["llm_calls"])
    return None


def configs(base: RunConfig, seed: int, work: Path, source_dir: Path) -> dict[str, RunConfig]:
    def variant(kind: str, **update: Any) -> RunConfig:
        cache = base.cache.model_copy(update={"path": str(work / f"{kind}-cache.sqlite")})
        return base.model_copy(update={"seed": seed, "cache": cache, "report": False, **update})

    return {
        "source": variant(
            "source", harness=base.harness.model_copy(update={"real_data": None, "real_share": 0.0})
        ),
        "cold": variant("cold"),
        "warm": variant("warm", init_from=str(source_dir)),
    }


def _finished(run_dir: Path) -> dict[str, Any] | None:
    """The summary of a run that completed in run_dir, else None (absent, killed or failed)."""
    path = run_dir / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(summary, dict) and summary.get("final_s_val") is not None
    return summary if ok and not summary.get("error") else None


def measure(
    base: RunConfig,
    seeds: Sequence[int],
    work: Path,
    make: Callable[[], tuple[Any, LLMClient | None]] | None = None,
) -> list[dict[str, Any]]:
    """One row per seed (see the module docstring). ``make``: a fresh (task, LLM) per run
    (fakes in tests); default: the config's task and model."""
    rows = []
    for seed in seeds:
        wdir = work / f"seed{seed}"
        dirs = {k: wdir / k for k in KINDS}
        summaries: dict[str, dict[str, Any]] = {}
        for kind, cfg in configs(base, seed, wdir, dirs["source"]).items():
            done = _finished(dirs[kind])
            if done is not None:  # resumable: a finished run is read back, not run again
                summaries[kind] = done
                C.log(f"transfer seed {seed}: {kind} run finished earlier -> {dirs[kind]}")
                continue
            if dirs[kind].exists():  # a run killed before its end starts again
                shutil.rmtree(dirs[kind])
            C.log(f"transfer seed {seed}: {kind} run -> {dirs[kind]}")
            task, llm = make() if make else (None, None)
            co = CoEvolution(cfg, task=task, llm=llm)
            summaries[kind] = co.run(dirs[kind]).summary
        target = float(summaries["cold"]["final_s_val"])
        rows.append(
            {
                "seed": seed,
                "target_s_val": target,
                "source": {
                    "final_s_val": summaries["source"]["final_s_val"],
                    "llm_calls": summaries["source"]["llm_calls"],
                },
                **{
                    kind: {
                        "calls_to_reach": calls_to_reach(dirs[kind], target),
                        "final_s_val": summaries[kind]["final_s_val"],
                        "initial_s_val": summaries[kind]["initial_s_val"],
                        "llm_calls": summaries[kind]["llm_calls"],
                    }
                    for kind in ("cold", "warm")
                },
            }
        )
    return rows


def table(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| seed | cold s_val (target) | cold: calls to reach | warm: calls to reach | warm final "
        "s_val | warm initial s_val | source calls |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        w = r["warm"]["calls_to_reach"]
        lines.append(
            f"| {r['seed']} | {r['target_s_val']:.4f} | {r['cold']['calls_to_reach']} | "
            f"{'not reached' if w is None else w} | {r['warm']['final_s_val']:.4f} | "
            f"{r['warm']['initial_s_val']:.4f} | {r['source']['llm_calls']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-c", "--config", default=str(C.REPO / "configs" / "demo.yaml"))
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--model", default=None, help="model spec (fake:minutes: no model)")
    ap.add_argument("--work-dir", default=str(C.WORK / "transfer"))
    ap.add_argument(
        "--resume",
        action="store_true",
        help="continue in a non-empty --work-dir (the same command): finished runs are read back",
    )
    ap.add_argument("--out", default=str(C.RESULTS / "transfer.json"))
    args = ap.parse_args(argv)
    values = {}
    fake = args.model == C.FAKE_SPEC
    if args.model and not fake:
        values["model.spec"] = args.model
    base = load_config(args.config, args.overrides, values)
    work = Path(args.work_dir)
    if work.exists() and any(work.iterdir()) and not args.resume:
        ap.error(
            f"--work-dir {work} is not empty: the runs need fresh directories "
            "(--resume continues there with the same command: finished runs are read back)"
        )
    rows = measure(base, args.seeds, work, (lambda: (None, C.fake_llm())) if fake else None)
    out = {
        "config": args.config,
        "overrides": args.overrides,
        "model": args.model or base.model.spec,
        "seeds": args.seeds,
        "rows": rows,
        "machine": C.machine(),
    }
    C.write_json(Path(args.out), out)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
