"""The dialogue task's check of itself (issue 48): the rule-based reference clerk, which reads
the rows it is shown and answers exactly, against the same clerk making up every phone number,
postcode, address, reference and train ID it gives. Both run as fake models (``fake:clerk``,
``fake:inventing-clerk``) through the library's own evaluator and validation, on

- the validation items of val.json.gz (the meta-objective) and of test-dev.json.gz;
- test-dev's goals, each a conversation with the fixed cooperative customer (the second
  objective: success);
- synthetic goals at L 0.2, 0.5 and 0.8 with each persona.

A simulator, rewards and metric that are right give the reference clerk high success and
request recall and the inventing clerk low scores. Writes
benchmarks/results/dialogue-reference.json (docs/dialogue.md's table). Seconds on a CPU.

    python benchmarks/dialogue_reference.py [--val-data FILE] [--test-data FILE] [--db DIR]

Without the MultiWOZ files it scores held-out synthetic items and goals on the invented
database instead, and says so.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from evotrainer.evaluation.evaluator import Evaluator  # noqa: E402
from evotrainer.evaluation.runner import SerialRunner  # noqa: E402
from evotrainer.evaluation.validation import Validator  # noqa: E402
from evotrainer.llm.base import LLMClient, SamplingParams  # noqa: E402
from evotrainer.policy.genome import PolicyGenome  # noqa: E402
from evotrainer.tasks.dialogue.clerk import inventing_clerk, reference_clerk  # noqa: E402
from evotrainer.tasks.dialogue.generator import DialogueGenerator  # noqa: E402
from evotrainer.tasks.dialogue.invented_db import invented_database  # noqa: E402
from evotrainer.tasks.dialogue.personas import KINDS  # noqa: E402
from evotrainer.tasks.dialogue.plugin import DATA_DIR, DEFAULT_DB, DEFAULTS, database  # noqa: E402
from evotrainer.tasks.dialogue.task import DialogueTask  # noqa: E402
from evotrainer.types import Instance  # noqa: E402

S_VAL = DEFAULTS["outer"]["s_val_weights"]
CLERKS = {"reference": reference_clerk, "inventing": inventing_clerk}
POLICY = PolicyGenome.from_text("Answer from the rows shown.", name="clerk")


def scores(task: DialogueTask, clerk: LLMClient, instances: list[Instance], source: str) -> dict:
    """The library's validation of the clerk on ``instances``: aggregates, s_val, outcomes."""
    ev = Evaluator(task, clerk, SamplingParams(), SerialRunner())
    res = Validator(task, ev, instances, S_VAL, source).validate([POLICY])[POLICY.id]
    turns = [len(r.get("turns") or [1]) for r in res.per_instance]
    return {
        "n": res.n,
        "s_val": round(res.s_val, 4),
        **{k: round(v, 4) if v is not None else None for k, v in res.aggregates.items()},
        "mean_replies": round(sum(turns) / len(turns), 2) if turns else None,
        "examples": [
            {
                "id": r["instance_id"],
                "output": r["output"][:200],
                "human": (r["reference"] or "")[:200],
            }
            for r in res.per_instance[:3]
        ],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The sets and both clerks' scores on them; without the MultiWOZ files, held-out
    synthetic items and goals on the invented database (the log and the set names say so)."""
    val, test = Path(args.val_data), Path(args.test_data)
    real = val.is_file() and test.is_file()
    db = database(args.db) if real else invented_database()
    items = DialogueTask(db, max_turns=args.max_turns)
    goals = DialogueTask(db, max_turns=args.max_turns, validate_on="goals")
    if real:
        sets = {
            "val items (meta-objective)": (items, items.load(val)),
            "test-dev items": (items, items.load(test)),
            "test-dev goals, cooperative customer (success)": (goals, goals.load(test)),
        }
    else:
        C.log(f"{val} or {test} not found: SYNTHETIC items on the invented database instead")
        sets = {"synthetic items (no MultiWOZ data)": (items, items.synthetic_validation(300, 0))}
    gen = DialogueGenerator(db)
    for persona in KINDS:
        rng = random.Random(f"reference-{persona}")
        synthetic = [i for L in (0.2, 0.5, 0.8) for i in gen.sample(20, L, rng, {persona: 1.0})]
        sets[f"synthetic goals, {persona}"] = (items, synthetic)
    out: dict[str, Any] = {}
    for name, (task, instances) in sets.items():
        out[name] = {}
        for clerk_name, make in CLERKS.items():
            t0 = time.perf_counter()
            out[name][clerk_name] = scores(task, make(), instances, name)
            out[name][clerk_name]["wall_s"] = round(time.perf_counter() - t0, 1)
            C.log(f"{name}: {clerk_name} {out[name][clerk_name]['s_val']}")
    return out


def table(results: dict[str, Any]) -> str:
    keys = ("request_recall", "inform_match", "grounded", "success", "s_val")
    lines = ["| set | clerk | n | " + " | ".join(keys) + " |", "|---|---|---|" + "---|" * len(keys)]
    for name, by_clerk in results.items():
        for clerk, r in by_clerk.items():
            cells = [f"{r[k]:.3f}" if isinstance(r.get(k), float | int) else "-" for k in keys]
            lines.append(f"| {name} | {clerk} | {r['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--val-data", default=f"{DATA_DIR}/val.json.gz", help="validation items")
    ap.add_argument("--test-data", default=f"{DATA_DIR}/test-dev.json.gz", help="test items, goals")
    ap.add_argument("--db", default=DEFAULT_DB, help="the MultiWOZ databases (db/)")
    ap.add_argument("--max-turns", type=int, default=8, help="clerk replies per conversation")
    ap.add_argument("--out", default=str(C.RESULTS / "dialogue-reference.json"))
    args = ap.parse_args(argv)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    results = run(args)
    doc = {
        "benchmark": "dialogue_reference",
        "commit": commit.stdout.strip() or None,
        "machine": C.machine(),
        "max_turns": args.max_turns,
        "s_val_weights": S_VAL,
        "results": results,
    }
    C.write_json(Path(args.out), doc)
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
