"""Read the answers behind a quality table (issue 46): for every method, over its seeds'
returned policies and the test meetings, the mean share of distinct word 4-grams (human minutes
0.99), the loop share (answers under 0.5), the mean words per answer, and ROUGE-L on the answer
with its repeated sentences dropped (``rougeL_dedup``: what the loop costs in ROUGE-L), plus a
few answers word for word.

The columns are computed by benchmarks/cells/answers.py (the summary's ``answers``). The
distinct-4 and loop columns come from the answers stored in ``test/scores.json``; the
de-duplicated ROUGE-L needs the meetings' references, so ``backfill`` scores it once from the
test data files named in ``settings.json`` and stores it beside each answer (the test
evaluation of a new run stores it as it goes).

    python benchmarks/answers.py benchmarks/results/quality-long          # backfill + table
    python benchmarks/answers.py benchmarks/results/quality-long --examples 2

``--rescore-into DIR`` copies the results directory to DIR and scores every stored answer again
with the meeting metric of this tree (the profile's s_val weights and empty-reference rule),
without a model call: what a table says under scoring rules changed since the cells ran (issue
46: a copied template blank is neither an action item nor readable). The source is not touched.

    python benchmarks/answers.py benchmarks/results/quality-readable --rescore-into /tmp/rescored

``--drop-blanks`` (with ``--rescore-into``) also applies the post-processor's ``drop_blanks``
step (the meeting task's ``strip_blanks``) to every stored answer before scoring it, for every
method alike: the step is the cut's last, so this is what the same returned policies answer with
the step on (their selection ran without it).

    python benchmarks/answers.py benchmarks/results/quality-readable-wide \
        --rescore-into /tmp/rescored --drop-blanks

``--component NAME`` also prints one of the meeting task's reward components (e.g.
``faithfulness``: are the answer's names, numbers and content words in the transcript?) as a
mean over each method's answers and over the human references written as the answer, per test
set: what the component says of the answers, measured against what it says of the references.

    python benchmarks/answers.py benchmarks/results/quality-distill-1000-answers \
        --component faithfulness
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from benchmarks import stats  # noqa: E402
from benchmarks.cells.answers import DEDUP_KEY, rouge_l_dedup  # noqa: E402
from benchmarks.cells.scoring import SCORE_KEYS  # noqa: E402
from benchmarks.cells.summary import aggregate  # noqa: E402
from evotrainer.evaluation.validation import combine_s_val  # noqa: E402
from evotrainer.tasks.meetings.rewards import component_registry  # noqa: E402
from evotrainer.tasks.meetings.task import MeetingTask  # noqa: E402


def _test_sets(compared: dict[str, Any], task: MeetingTask) -> dict[str, dict[str, Any] | None]:
    """{test set: {meeting id: instance}} from the files settings.json names; None for a set
    whose file is not here."""
    out: dict[str, dict[str, Any] | None] = {}
    for name, info in compared["data"]["test"].items():
        src = C.resolve(info["source"])
        out[name] = None if src is None or not src.is_file() else {i.id: i for i in task.load(src)}
    return out


def backfill(results: Path) -> int:
    """Store ``rougeL_dedup`` beside every stored test answer that lacks it; returns how many
    were scored."""
    compared = json.loads((results / "settings.json").read_text())["compared"]
    path = results / "test" / "scores.json"
    if not path.is_file():
        return 0
    scores = json.loads(path.read_text())
    task = MeetingTask(max_input_tokens=10**6)
    done = 0
    for name, meetings in _test_sets(compared, task).items():
        if meetings is None:
            C.log(
                f"{compared['data']['test'][name]['source']} not found: {name} keeps no {DEDUP_KEY}"
            )
            continue
        for mid, by_pid in scores.get(name, {}).items():
            inst = meetings.get(mid)
            for row in by_pid.values():
                if inst is None or DEDUP_KEY in row:
                    continue
                row[DEDUP_KEY] = (
                    None
                    if row.get("error")
                    else rouge_l_dedup(task, inst, str(row.get("output") or ""))
                )
                done += 1
    if done:
        C.write_json(path, scores)
    return done


def rescore(results: Path, into: Path, drop_blanks: bool = False) -> int:
    """Copy ``results`` to ``into`` and score every stored answer there again with this tree's
    meeting metric (``drop_blanks``: after the task's ``strip_blanks``); returns how many rows
    changed their s_val."""
    if into.exists():
        raise SystemExit(f"{into} exists: --rescore-into writes a new directory")
    shutil.copytree(results, into)
    compared = json.loads((into / "settings.json").read_text())["compared"]
    weights = compared["s_val_weights"]
    rule = compared["settings"]["empty_reference_items"]
    task = MeetingTask(max_input_tokens=10**6, empty_reference_items=rule)
    metric = task.validation_metric()
    path = into / "test" / "scores.json"
    scores = json.loads(path.read_text())
    changed = 0
    for name, meetings in _test_sets(compared, task).items():
        if meetings is None:
            source = compared["data"]["test"][name]["source"]
            raise SystemExit(f"{source} not found: test set {name} cannot be rescored")
        for mid, by_pid in scores.get(name, {}).items():
            for row in by_pid.values():
                if row.get("error"):
                    continue
                out = str(row.get("output") or "")
                if drop_blanks and (stripped := task.strip_blanks(out)) != out:
                    out = stripped
                    row["output"] = out
                    row.pop(DEDUP_KEY, None)  # scored again by backfill
                new = metric.score(meetings[mid], out, task.parse(out))
                s_val = combine_s_val(new, weights)
                changed += abs(s_val - row["s_val"]) > 1e-9
                row.update({k: new.get(k) for k in SCORE_KEYS["meetings"]}, s_val=s_val)
    C.write_json(path, scores)
    return changed


def table(summary: dict[str, Any], pooled: str = "all") -> str:
    """Markdown: per method, Δ s_val beside the answer columns, on the pooled test set."""
    lines = [
        "| method | Δ s_val [95% CI] | distinct-4 | loop share | words | ROUGE-L | ROUGE-L dedup |",
        "|---|---|---|---|---|---|---|",
    ]
    for row, rec in summary["methods"].items():
        tests = rec.get("test") or {}
        t = tests.get(pooled) or next(iter(tests.values()), None)
        a = (t or {}).get("answers")
        if not t or not a:
            continue
        dedup = a.get(DEDUP_KEY)
        lines.append(
            f"| {row} | {stats.fmt_ci(t.get('diff_s_val'))} | {a['distinct4']:.2f} | "
            f"{a['loop_share']:.0%} | {a['words']:.0f} | {t['rougeL']['mean']:.3f} | "
            + ("-" if dedup is None else f"{dedup:.3f}")
            + " |"
        )
    return "\n".join(lines)


def component_table(results: Path, summary: dict[str, Any], name: str) -> str:
    """Markdown: the reward component ``name``'s mean over each method's answers (every
    seed's returned policy, every test meeting) and over the references written as the
    answer (``reference``, on the same test meetings), per test set."""
    registry = component_registry()
    if name not in registry:
        raise SystemExit(f"--component {name}: no such component ({', '.join(registry)})")
    component = registry[name]
    compared = json.loads((results / "settings.json").read_text())["compared"]
    scores = json.loads((results / "test" / "scores.json").read_text())
    task = MeetingTask(max_input_tokens=10**6)
    sets = {n: m for n, m in _test_sets(compared, task).items() if m is not None}
    rows = {
        row: [r["policy"] for r in rec.get("runs") or []]
        for row, rec in summary["methods"].items()
        if rec.get("runs")
    }

    def mean_of(texts: list[tuple[Any, str]]) -> str:
        vals = [component.score(inst, text, task.parse(text)).score for inst, text in texts]
        return f"{sum(vals) / len(vals):.3f} ({len(vals)})" if vals else "-"

    lines = [
        f"Reward component `{name}`: mean over the answers (how many)",
        "",
        "| method | " + " | ".join(sets) + " |",
        "|---|" + "---|" * len(sets),
    ]
    for row, pids in [("reference", []), *rows.items()]:
        cells = []
        for set_name, meetings in sets.items():
            stored = scores.get(set_name, {})
            if row == "reference":
                texts = [  # the meetings the answers were scored on
                    (meetings[m], task.reference_example(meetings[m]) or "")
                    for m in stored
                    if m in meetings
                ]
            else:
                texts = [
                    (meetings[m], str(by[p].get("output") or ""))
                    for m, by in stored.items()
                    if m in meetings
                    for p in pids
                    if p in by and not by[p].get("error")
                ]
            cells.append(mean_of(texts))
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def examples(results: Path, row: str, n: int) -> list[str]:
    """``n`` test answers of ``row``'s first returned policy, word for word."""
    summary = json.loads((results / "summary.json").read_text())
    runs = (summary["methods"].get(row) or {}).get("runs") or []
    scores = json.loads((results / "test" / "scores.json").read_text())
    if not runs:
        return []
    pid = runs[0]["policy"]
    out = []
    for name, by_mid in scores.items():
        for mid, by_pid in by_mid.items():
            if pid in by_pid and len(out) < n:
                out.append(f"{name}/{mid}: {by_pid[pid].get('output')!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("results", type=Path)
    ap.add_argument("--examples", type=int, default=0, help="answers shown per method")
    ap.add_argument(
        "--rescore-into",
        type=Path,
        metavar="DIR",
        help="copy the results to DIR and score the stored answers again with this tree's metric",
    )
    ap.add_argument(
        "--drop-blanks",
        action="store_true",
        help="with --rescore-into: apply the drop_blanks step to every answer first",
    )
    ap.add_argument(
        "--component",
        metavar="NAME",
        help="also print this meeting reward component's mean per method and for the references",
    )
    args = ap.parse_args(argv)
    if args.drop_blanks and not args.rescore_into:
        ap.error("--drop-blanks needs --rescore-into DIR (the source is never changed)")
    if args.rescore_into:
        n = rescore(args.results, args.rescore_into, args.drop_blanks)
        C.log(f"{n} stored answers changed their s_val under this tree's metric")
        args.results = args.rescore_into
    n = backfill(args.results)
    C.log(f"{n} answers given their {DEDUP_KEY}")
    summary = aggregate(args.results)
    C.write_json(args.results / "summary.json", summary)
    print(table(summary))
    if args.component:
        print()
        print(component_table(args.results, summary, args.component))
    for row in summary["methods"] if args.examples else ():
        for line in examples(args.results, row, args.examples):
            print(f"- {row} {line[:700]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
