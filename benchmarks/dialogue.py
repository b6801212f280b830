"""The dialogue profile's data, harnesses and words (issue 48; protocol in docs/dialogue.md,
"The benchmark"): the scarce-labels protocol on the dialogue task, at equal calls.

- Labels: ``n_selection`` validation items (one per MultiWOZ val dialogue, spread over the
  file) select, ``n_confirm`` more (other dialogues) confirm, the goals of every other val
  dialogue are the unlabelled training customers (the engine reads them from val.json.gz with
  ``LoadsTrainingData``, which leaves out every dialogue a validation item comes from), and
  ``n_test`` items of test-dev.json.gz test. ``Labels`` checks that no dialogue serves two
  purposes.
- Engine methods (``engine_overrides``): ``fixed`` (cooperative customers only, L 0.2, the
  task's seed weights, the harness fixed), ``evotrainer`` (co-evolution: persona mix, L, real
  share and weights), ``labels_ga`` (the GA trains on a copy of the selection items: the labels
  themselves, reward = s_val), ``uniform_mix`` (co-evolution with every persona alike: the
  ablation of the persona mix). GEPA and the seeds come from the quality benchmark as they are.

Without the MultiWOZ files every split is held-out synthetic items (and the data info says so).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

from benchmarks import common as C
from benchmarks.scarce import Labels
from benchmarks.splits import Splits
from evotrainer.tasks.dialogue.loader import dialogue_of, item_instance, read_dialogues, save_items
from evotrainer.tasks.dialogue.personas import COOPERATIVE
from evotrainer.tasks.dialogue.plugin import DATA_DIR, DEFAULT_DB, DEFAULTS, database
from evotrainer.tasks.dialogue.task import DialogueTask
from evotrainer.types import Instance

S_VAL = dict(DEFAULTS["outer"]["s_val_weights"])
SEED_R = dict(DEFAULTS["harness"]["weights"])  # the task's seed weights
LABELS_R = {"requests": 0.6, "inform": 0.2, "grounded": 0.2}  # s_val's weights, on the items
SCORE_KEYS = ("request_recall", "inform_match", "grounded")
LABELLED_SUFFIX = "#labelled"


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--dialogue-data",
        default=DATA_DIR,
        help="dialogue profile: the MultiWOZ folder (db/, val.json.gz, test-dev.json.gz)",
    )


def make_task(prof: dict[str, Any], args: argparse.Namespace) -> DialogueTask:
    folder = Path(getattr(args, "dialogue_data", DATA_DIR))
    db = database(str(folder / "db") if (folder / "db").is_dir() else DEFAULT_DB)
    return DialogueTask(db, max_turns=prof["max_turns"], max_rows=prof["max_rows"])


def task_section(prof: dict[str, Any], args: argparse.Namespace, method: str | None) -> dict:
    folder = Path(getattr(args, "dialogue_data", DATA_DIR))
    db = folder / "db"
    return {
        "name": "dialogue",
        "db": str(db) if db.is_dir() else DEFAULT_DB,
        "max_turns": prof["max_turns"],
        "max_rows": prof["max_rows"],
        "persona_mix": "uniform" if method == "uniform_mix" else "harness",
    }


# -- the labels ---------------------------------------------------------------------------
def _split(name: str, chosen: list[Instance], source: str, synthetic: bool) -> C.Split:
    message = f"{name}: {len(chosen)} items from {source}" + (
        " (held-out SYNTHETIC items: the numbers are then NOT measured on human dialogues)"
        if synthetic
        else ""
    )
    return C.Split(
        chosen,
        {
            "source": source,
            "synthetic": synthetic,
            "n": len(chosen),
            "ids": [i.id for i in chosen],
            "message": message,
        },
    )


def one_per_dialogue(items: list[Instance], n: int, skip: set[str], offset: int) -> list[Instance]:
    """``n`` items from ``n`` different dialogues spread over the file (none in ``skip``)."""
    first: dict[str, Instance] = {}
    for inst in items:
        first.setdefault(dialogue_of(inst.id), inst)
    pool = [i for d, i in first.items() if d not in skip]
    return C.spread(pool, n, offset)


def load_splits(task: DialogueTask, prof: dict[str, Any], args: argparse.Namespace) -> dict:
    """selection, confirmation, test (C.Split each), the val file the engine trains on (None
    when absent) and the label ledger."""
    folder = Path(getattr(args, "dialogue_data", DATA_DIR))
    val, test = folder / "val.json.gz", folder / "test-dev.json.gz"
    n_sel, n_conf = int(prof["n_selection"]), int(prof.get("n_confirm") or 0)
    n_test = prof["n_test"] or 300
    if val.is_file() and test.is_file():
        items = task.load(val)
        selection = one_per_dialogue(items, n_sel, set(), 0)
        used = {dialogue_of(i.id) for i in selection}
        confirmation = one_per_dialogue(items, n_conf, used, 1) if n_conf else []
        tests = C.spread(task.load(test), n_test)
        held = used | {dialogue_of(i.id) for i in confirmation}
        train = sorted(set(read_dialogues(val)) - held)  # what load_training gives the engine
        labels = Labels(
            selection=tuple(sorted(used)),
            confirmation=tuple(sorted(dialogue_of(i.id) for i in confirmation)),
            unlabelled=tuple(train),
            test=tuple(sorted({dialogue_of(i.id) for i in tests})),
        )
        labels.check()
        src = (str(val), str(test), False)
    else:
        rng = random.Random("dialogue-benchmark")
        pool = task.synthetic_validation(n_sel + n_conf + n_test, 1001)
        selection, confirmation, tests = (
            pool[:n_sel],
            pool[n_sel : n_sel + n_conf],
            pool[n_sel + n_conf :],
        )
        rng.shuffle(tests)
        labels, val = None, None
        src = ("synthetic (held out)", "synthetic (held out)", True)
    return {
        "selection": _split("selection", selection, src[0], src[2]),
        "confirmation": _split("confirmation", confirmation, src[0], src[2]) if n_conf else None,
        "tests": {"test-dev": _split("test test-dev", tests, src[1], src[2])},
        "val": val,
        "labels": labels,
    }


def splits(
    task: DialogueTask, prof: dict[str, Any], args: argparse.Namespace, work: Path
) -> Splits:
    """The profile's splits (GEPA trains and validates on the selection items) and the
    scarce-labels files: the val file the engine trains on, the labelled copy of the selection
    items, the label ledger."""
    data = load_splits(task, prof, args)
    copy = write_labelled_copy(
        data["selection"].instances, work / "dialogue" / "selection-labelled.jsonl"
    )
    return Splits(
        selection=data["selection"],
        confirmation=data["confirmation"],
        gepa_train=data["selection"],
        tests=data["tests"],
        scarce={"pool": data["val"], "labelled_copy": copy, "labels": data["labels"]},
    )


def write_labelled_copy(selection: list[Instance], path: Path) -> Path:
    """The selection items under renamed ids: the training pool of "just use your labels"
    (the engine removes validation ids from its pool, so the copy is how the GA trains on the
    items it selects on)."""
    renamed = [item_instance(i.payload) for i in selection]
    renamed = [Instance(i.id + LABELLED_SUFFIX, i.payload, i.source, kind=i.kind) for i in renamed]
    return save_items(path, renamed)


# -- what each engine method is given -------------------------------------------------------
def engine_overrides(method: str, val: Path | None, labelled_copy: Path) -> dict[str, Any]:
    """The ``harness``, ``defences`` and ``outer`` sections of ``method``'s engine run."""
    no_terminal = {"terminal_data": None, "terminal_share": 0.0, "discriminator": False}
    defences = {**no_terminal, "learned_reward": False}
    if method == "labels_ga":
        harness = {
            "real_data": str(labelled_copy),
            "real_share": 1.0,
            "weights": dict(LABELS_R),
            "switchable": [],
        }
        return {"harness": harness, "defences": defences, "outer": {"enabled": False}}
    if method == "fixed":
        harness = {
            "real_data": None,
            "real_share": 0.0,
            "difficulty": 0.2,
            "task_mix": {COOPERATIVE: 1.0},
            "weights": dict(SEED_R),
        }
        return {"harness": harness, "defences": defences, "outer": {"enabled": False}}
    if method not in ("evotrainer", "uniform_mix"):
        raise ValueError(f"not an engine method of the dialogue profile: {method!r}")
    harness = {
        "real_data": str(val) if val is not None else None,
        "real_share": 0.3 if val is not None else 0.0,
        "difficulty": 0.2,
        "task_mix": None,
        "weights": dict(SEED_R),
    }
    return {"harness": harness, "defences": defences, "outer": {"enabled": True}}


# -- what GEPA's reflection reads -------------------------------------------------------------
def feedback_text(inst: Instance, scored: Any) -> str:
    """The metric values of one reply and what the human clerk said instead."""
    if scored.error:
        return f"The call failed: {scored.error}"
    r = scored.row
    item = inst.payload
    asked = ", ".join(getattr(item, "requested", ()))
    parts = [
        f"Score {scored.score:.3f} (request recall {r.get('request_recall') or 0:.2f}; "
        f"grounded {r.get('grounded') if r.get('grounded') is not None else 'n/a'}).",
        f"The customer asked for: {asked}.",
        f"The human clerk replied: {getattr(item, 'human_reply', '')[:300]!r}",
    ]
    return " ".join(parts)
