"""Whether the post-processor's ``drop_blanks`` step should be on by default (issue 46,
docs/readability.md): measured on AMI *train* only, without a model call.

A run directory's ``checkpoints/validation_memo.jsonl`` holds every validated policy's answers
on the run's selection meetings (AMI train), after its loop cut. ``drop_blanks`` is the cut's
last step, so applying the meeting task's ``strip_blanks`` to a stored answer gives what the
policy would have answered with the step on. Each answer is scored both ways with the run's
own s_val weights and empty-reference rule; the report gives, per run and pooled over answers,
the mean change in s_val, ROUGE-L, action-item F1, readability and words, with a paired 95%
bootstrap interval (answers resampled), and how many answers the step changed.

    python benchmarks/blanks.py benchmarks/results/tmp/quality-quality-readable*/runs/*
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from benchmarks import stats  # noqa: E402
from evotrainer.evaluation.validation import combine_s_val  # noqa: E402
from evotrainer.policy.repetition import words  # noqa: E402
from evotrainer.tasks.meetings.task import MeetingTask  # noqa: E402

KEYS = ("s_val", "rougeL", "action_item_f1", "readability", "words")
OUT = Path(__file__).resolve().parent / "results" / "blanks.json"


def _short(run: Path) -> str:
    """``run`` from ``benchmarks/results/`` on (where the benchmarks keep their run
    directories), else as given."""
    text = str(run)
    at = text.find("benchmarks/results/")
    return text[at:] if at >= 0 else text


def _memo_answers(run: Path) -> list[tuple[str, str, str]]:
    """(policy key, meeting id, answer) of every stored validation answer of ``run``."""
    out: list[tuple[str, str, str]] = []
    path = run / "checkpoints" / "validation_memo.jsonl"
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{n}: not JSON ({exc})") from exc
        for row in rec["v"]["per_instance"]:
            if not row.get("error"):
                out.append((rec["k"], row["instance_id"], str(row.get("output") or "")))
    return out


def _score(
    task: MeetingTask, metric: Any, weights: dict[str, float], inst: Any, text: str
) -> dict[str, float]:
    s = metric.score(inst, text, task.parse(text))
    row = {k: float(s.get(k) or 0.0) for k in KEYS if k not in ("s_val", "words")}
    return {**row, "s_val": combine_s_val(s, weights), "words": float(len(words(text)))}


def measure_run(run: Path, meetings: dict[str, Any]) -> dict[str, Any]:
    """The step's effect on one run's stored answers."""
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    weights = cfg["outer"]["s_val_weights"]
    task = MeetingTask(
        max_input_tokens=10**6, empty_reference_items=cfg["task"]["empty_reference_items"]
    )
    metric = task.validation_metric()
    diffs: dict[str, list[float]] = {k: [] for k in KEYS}
    mask: list[bool] = []
    policies = set()
    for key, mid, text in _memo_answers(run):
        stripped = task.strip_blanks(text)
        mask.append(stripped != text)
        if stripped == text:
            for k in KEYS:
                diffs[k].append(0.0)
            continue
        policies.add(key)
        before = _score(task, metric, weights, meetings[mid], text)
        after = _score(task, metric, weights, meetings[mid], stripped)
        for k in KEYS:
            diffs[k].append(after[k] - before[k])
    return {
        "run": _short(run),
        "answers": len(diffs["s_val"]),
        "changed": sum(mask),
        "policies_changed": len(policies),
        "diffs": diffs,
        "mask": mask,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run directories (checkpoints inside)")
    ap.add_argument("--data", default="../shared/data/meetings/ami-train.jsonl")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    src = C.resolve(args.data)
    if src is None or not src.is_file():
        raise SystemExit(f"{args.data} not found: the step is measured on AMI train answers")
    meetings = {i.id: i for i in MeetingTask(max_input_tokens=10**6).load(src)}
    runs = [
        measure_run(r, meetings)
        for r in args.runs
        if (r / "checkpoints" / "validation_memo.jsonl").is_file()
    ]
    pooled = {k: [d for r in runs for d in r["diffs"][k]] for k in KEYS}
    result = {
        "what": "drop_blanks applied to stored AMI-train validation answers (no model call)",
        "command": "python benchmarks/blanks.py " + " ".join(_short(r) for r in args.runs),
        "runs": [
            {k: v for k, v in r.items() if k not in ("diffs", "mask")}
            | {"mean": {k: sum(v) / len(v) for k, v in r["diffs"].items() if v}}
            for r in runs
        ],
        "pooled": {k: stats.paired_bootstrap(v) for k, v in pooled.items()},
        "changed": sum(r["changed"] for r in runs),
        "answers": sum(r["answers"] for r in runs),
        "changed_only": {
            k: stats.paired_bootstrap(
                [d for r in runs for d, m in zip(r["diffs"][k], r["mask"], strict=True) if m]
            )
            for k in KEYS
        },
    }
    C.write_json(args.out, result)
    for r in result["runs"]:
        print(f"{r['run']}: {r['changed']}/{r['answers']} answers changed, mean Δ", r["mean"])
    for k in KEYS:
        print(
            f"Δ {k}: all answers {stats.fmt_ci(result['pooled'][k])}, "
            f"changed answers {stats.fmt_ci(result['changed_only'][k])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
