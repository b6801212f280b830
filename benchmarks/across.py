"""One method of the quality benchmark in two results directories: what a changed setting did.

Two directories of the same profile family (one setting changed, e.g. ``distill-1000`` and
``distill-1000-answers``: the references written as the answer) hold cells of the same method;
each returned policy was test-scored on the same test meetings. This prints, per test set and
pooled, the paired s_val difference (B - A; each side averaged over its seeds per meeting, the
meetings resampled; and with the seeds resampled too) and each side's answers: action-item F1
(meetings whose reference has items), action items read per answer, distinct-4, loop share,
words. No model call: it reads ``cells/*.json`` and ``test/scores.json``.

    python benchmarks/across.py benchmarks/results/quality-distill-1000 \\
        benchmarks/results/quality-distill-1000-answers --method sft_refs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(REPO))

from benchmarks import stats  # noqa: E402
from benchmarks.cells.comparisons import mean, vector  # noqa: E402
from evotrainer.policy.repetition import degeneracy  # noqa: E402


def returned(results: Path, method: str) -> dict[int, str]:
    """{seed: returned policy id} of ``method``'s finished cells in ``results``."""
    out = {}
    for path in sorted((results / "cells").glob(f"{method}-seed*.json")):
        cell = json.loads(path.read_text())
        if cell.get("status") == "ok" and cell.get("method") == method:
            out[int(cell["seed"])] = cell["rows"][method]["best_policy"]["id"]
    return out


def side(scores: dict, meetings: list[tuple[str, str]], pids: list[str]) -> dict[str, Any]:
    """One directory's answers on ``meetings``: per-seed s_val vectors and the answer columns."""
    rows = [scores[s][m][p] for s, m in meetings for p in pids if p in scores[s].get(m, {})]
    deg = degeneracy(r.get("output") or "" for r in rows).to_json()
    return {
        "vectors": [vector(scores, meetings, p, "s_val") for p in pids],
        "answers": len(rows),
        "s_val": mean([r.get("s_val") for r in rows]),
        "action_item_f1": mean([r.get("action_item_f1") for r in rows]),
        "items": mean([r.get("n_action_items") for r in rows]),
        **{k: deg[k] for k in ("distinct4", "loop_share", "words")},
    }


def compare(a: Path, b: Path, method: str) -> dict[str, Any]:
    """``method`` in ``b`` against ``method`` in ``a`` on the test meetings both scored."""
    ra, rb = returned(a, method), returned(b, method)
    if not ra or not rb:
        raise SystemExit(f"{method}: no finished cell in {a if not ra else b}")
    sa = json.loads((a / "test" / "scores.json").read_text())
    sb = json.loads((b / "test" / "scores.json").read_text())
    out: dict[str, Any] = {"method": method, "seeds": [sorted(ra), sorted(rb)], "sets": {}}
    pa, pb = list(ra.values()), list(rb.values())
    names = [n for n in sa if n in sb]
    for name in [*names, "all"]:
        meetings = [  # scored for every returned policy of both sides
            (s, m)
            for s in (names if name == "all" else [name])
            for m in sorted(sa[s])
            if set(pa) <= set(sa[s][m]) and set(pb) <= set(sb[s].get(m, {}))
        ]
        left, right = side(sa, meetings, pa), side(sb, meetings, pb)
        base = [mean(col) for col in zip(*left["vectors"], strict=True)]
        out["sets"][name] = {
            "meetings": len(meetings),
            "diff": stats.paired_difference(right["vectors"], base),
            "diff_seeds": stats.seeds_and_meetings_difference(right["vectors"], left["vectors"]),
            "a": {k: v for k, v in left.items() if k != "vectors"},
            "b": {k: v for k, v in right.items() if k != "vectors"},
        }
    return out


def table(doc: dict[str, Any], a: str, b: str) -> str:
    def f(x: float | None, d: int = 3) -> str:
        return "n/a" if x is None else f"{x:.{d}f}"

    lines = [
        f"{doc['method']}: B ({b}, seeds {doc['seeds'][1]}) - A ({a}, seeds {doc['seeds'][0]})",
        "",
        "| test set | meetings | Δ s_val B - A [95% CI] | seeds resampled | s_val A / B "
        "| action-item F1 A / B | items A / B | distinct-4 A / B | loop share A / B "
        "| words A / B |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in doc["sets"].items():
        x, y = r["a"], r["b"]
        lines.append(
            f"| {name} | {r['meetings']} | {stats.fmt_ci(r['diff'])} "
            f"| {stats.fmt_ci(r['diff_seeds'])} | {f(x['s_val'])} / {f(y['s_val'])} "
            f"| {f(x['action_item_f1'])} / {f(y['action_item_f1'])} "
            f"| {f(x['items'], 2)} / {f(y['items'], 2)} "
            f"| {x['distinct4']:.2f} / {y['distinct4']:.2f} "
            f"| {x['loop_share']:.0%} / {y['loop_share']:.0%} | {x['words']:.0f} / {y['words']:.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path, help="results directory A (the baseline)")
    ap.add_argument("b", type=Path, help="results directory B (the setting changed)")
    ap.add_argument("--method", required=True, help="the method (a row of both directories)")
    ap.add_argument("--json", type=Path, help="also write the comparison here")
    args = ap.parse_args(argv)
    doc = compare(args.a, args.b, args.method)
    print(table(doc, args.a.name, args.b.name))
    if args.json:
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
