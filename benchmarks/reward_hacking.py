"""The reward-hacking experiment of docs/reward-hacking.md, on the embedded model.

Two runs of configs/hacking.yaml (reward heavy on R3, the action-item count):
  without: harness fixed (outer loop off), no terminal reward; s_val still tracked;
  with:    harness evolution + sparse terminal reward + proxy-gap monitor.
Writes benchmarks/results/reward_hacking.json and docs/img/reward-hacking.png: the proxy reward
(the best policy's reward under the *initial* weights, so the two arms are comparable) and s_val
per generation, with the monitor's alerts.

    .venv/bin/python benchmarks/reward_hacking.py [--generations 8] [--model local:smollm2]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from evotrainer.coevolution import CoEvolution
from evotrainer.config import load_config
from evotrainer.harness.reward import weighted_reward
from evotrainer.run.events import read_events

ROOT = Path(__file__).resolve().parents[1]
ARMS = {
    "without": ["outer.enabled=false", "defences.terminal_share=0.0"],
    "with": [],
}


def curves(run_dir: Path, w0: dict[str, float]) -> dict:
    events = read_events(run_dir / "events.jsonl")
    gens = [e for e in events if e["type"] == "generation"]
    vals = [e for e in events if e["type"] == "validation" and e.get("role") != "trial"]
    return {
        "generation": [e["generation"] for e in gens],
        "proxy": [weighted_reward(e["best_components"], w0) for e in gens],
        "action_count": [e["best_components"].get("action_count") for e in gens],
        "completeness": [e["best_components"].get("completeness") for e in gens],
        "s_val_generation": [e["generation"] for e in vals],
        "s_val": [e["s_val"] for e in vals],
        "robustness": [e["aggregates"].get("robustness") for e in vals],
        "alerts": [
            {"kind": e["kind"], "message": e["message"]} for e in events if e["type"] == "alert"
        ],
        "weights": [e["harness"]["weights"] for e in gens],
    }


def plot(results: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for arm, style in (("without", "--"), ("with", "-")):
        c = results[arm]["curves"]
        axes[0].plot(c["generation"], c["proxy"], style, marker="o", label=f"{arm} defences")
        axes[1].plot(c["s_val_generation"], c["s_val"], style, marker="s", label=f"{arm} defences")
    axes[0].set_title("proxy reward of the best policy\n(initial weights 0.1/0.1/0.8)")
    axes[1].set_title("s_val (validation: real AMI meetings)")
    for ax in axes:
        ax.set_xlabel("generation")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--config", default=str(ROOT / "configs" / "hacking.yaml"))
    ap.add_argument("--generations", type=int, default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--runs", default=str(ROOT / "runs" / "reward-hacking"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "reward_hacking.json"))
    ap.add_argument("--plot", default=str(ROOT / "docs" / "img" / "reward-hacking.png"))
    ap.add_argument("--set", action="append", default=[], help="extra config override")
    args = ap.parse_args()
    extra = list(args.set)
    if args.generations:
        extra.append(f"inner.generations={args.generations}")
    if args.model:
        extra.append(f"model.spec={args.model}")
    results = {}
    for arm, sets in ARMS.items():
        cfg = load_config(args.config, [*sets, *extra, "report=false"])
        run_dir = Path(args.runs) / f"{arm}-{time.strftime('%Y%m%d-%H%M%S')}"
        t0 = time.perf_counter()
        result = CoEvolution(cfg).run(run_dir)
        w0 = dict(cfg.harness.weights)
        results[arm] = {
            "command_overrides": sets + extra,
            "run_dir": str(run_dir.relative_to(ROOT))
            if run_dir.is_relative_to(ROOT)
            else str(run_dir),
            "summary": result.summary,
            "best_prompt": result.best.render(),
            "curves": curves(run_dir, w0),
            "wall_s": round(time.perf_counter() - t0, 1),
        }
        print(
            f"{arm}: s_val {result.summary['initial_s_val']:.3f} -> "
            f"{result.summary['final_s_val']:.3f} in {results[arm]['wall_s']:.0f}s"
        )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    plot(results, Path(args.plot))
    print(f"wrote {args.out} and {args.plot}")


if __name__ == "__main__":
    main()
