"""Issue 32's picture of why: over outer steps, how well each harness's reward ranks policies no
selection saw, for the fixed and the evolved harnesses.

The panel is `benchmarks/reward_ranking.py`'s: 23 policies answering 12 developer meetings of
AMI train (outside the scarce profile's 16 labelled meetings; no ami-dev, no ICSI), each answer
scored by every reward component on the meeting *without* its references and by s_val against
the reference. A harness's reward on the panel is its weights applied to those scores (no model
call); its quality is Spearman's rho between that reward and s_val over the 23 policies (each
averaged over the 12 meetings), and the mean of the rho within each meeting.

The harnesses: the fixed one (the seed's R) and, for every co-evolution cell of a scarce results
directory, the harness its run chose at each outer step (events.jsonl). The learned reward has no
score on the panel (its model lives in the run); a weight on it is left out and the other
weights renormalised, which is said in the output. The in-run version of the picture, learned
reward included, is each run's `rank_picture` (docs/scarce-labels.md).

    python benchmarks/rank_picture.py benchmarks/results/quality-scarce
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from benchmarks.scarce import SEED_R  # noqa: E402
from evotrainer.evaluation.surrogate import spearman  # noqa: E402
from evotrainer.harness.reward import weighted_reward  # noqa: E402


def panel_rho(rows: list[dict[str, Any]], weights: dict[str, float]) -> dict[str, Any]:
    """Spearman's rho of ``weights``' reward against s_val over the panel's policies, and the
    mean rho within its meetings."""
    pols = sorted({r["policy"] for r in rows})
    meetings = sorted({r["meeting"] for r in rows})

    def reward(r: dict[str, Any]) -> float:
        return weighted_reward(r["components"], weights)

    by_pol = [statistics.fmean(reward(r) for r in rows if r["policy"] == p) for p in pols]
    s_pol = [statistics.fmean(r["s_val"] for r in rows if r["policy"] == p) for p in pols]
    within = [
        spearman([reward(r) for r in mr], [r["s_val"] for r in mr])
        for m in meetings
        if (mr := [r for r in rows if r["meeting"] == m])
    ]
    within = [w for w in within if w is not None]
    return {
        "over_policies": spearman(by_pol, s_pol),
        "within_meetings": statistics.fmean(within) if within else None,
    }


def chosen_harnesses(run_dir: Path) -> list[dict[str, Any]]:
    """The harness each outer step of a run chose (its weights), in order."""
    events = run_dir / "events.jsonl"
    out = []
    for line in events.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") == "outer_step":
            chosen = e.get("chosen") or {}
            out.append(
                {
                    "outer_step": e.get("outer_step"),
                    "generation": e.get("generation"),
                    "how": e.get("selection"),
                    "weights": chosen.get("weights") or {},
                }
            )
    return out


def picture(results: Path, panel: Path) -> dict[str, Any]:
    rows = json.loads(panel.read_text())["rows"]
    doc: dict[str, Any] = {
        "panel": str(panel),
        "fixed": {"weights": SEED_R, **panel_rho(rows, SEED_R)},
        "cells": {},
    }
    work = C.WORK / f"quality-{results.name}" / "runs"
    for run_dir in sorted(work.glob("evotrainer-seed*")):
        steps = []
        for h in chosen_harnesses(run_dir):
            weights = {k: w for k, w in h["weights"].items() if k != "learned"}
            left_out = h["weights"].get("learned", 0.0)
            steps.append({**h, **panel_rho(rows, weights), "learned_weight_left_out": left_out})
        doc["cells"][run_dir.name] = steps
    return doc


def table(doc: dict[str, Any]) -> str:
    f = doc["fixed"]
    out = [
        "| harness | outer step | rho over policies | mean rho within meetings | learned weight "
        "left out |",
        "|---|---|---|---|---|",
        f"| fixed (seed R) | - | {_f(f['over_policies'])} | {_f(f['within_meetings'])} | - |",
    ]
    for cell, steps in doc["cells"].items():
        for s in steps:
            out.append(
                f"| {cell} | {s['outer_step']} ({s['how']}) | {_f(s['over_policies'])} | "
                f"{_f(s['within_meetings'])} | {s['learned_weight_left_out']:.2f} |"
            )
    return "\n".join(out)


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("results", type=Path, help="a scarce results directory")
    ap.add_argument("--panel", type=Path, default=C.RESULTS / "reward_ranking.json")
    ap.add_argument("--out", type=Path, default=None, help="default RESULTS/rank_picture.json")
    args = ap.parse_args(argv)
    doc = picture(args.results, args.panel)
    C.write_json(args.out or args.results / "rank_picture.json", doc)
    print(table(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
