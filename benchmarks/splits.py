"""The meeting profiles' data: which AMI train meetings select, confirm and teach GEPA, the
test sets, and (scarce profile) the unlabelled pool and the labelled copy of the selection
meetings. All disjoint; without the data files every split is held-out synthetic meetings and
its info says so (common.load_split).

Where a new test set goes: a name and its file in ``TEST_SETS`` (with a command-line flag for
the path in quality.py), then a profile's ``test_sets`` lists it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import common as C
from benchmarks import scarce
from evotrainer.tasks.meetings.task import MeetingTask

# test set name -> the command-line argument that names its JSONL file
TEST_SETS = {"ami-dev": "test_data", "icsi": "icsi_data"}


@dataclass
class Splits:
    """A profile's data by purpose. ``gepa_train`` is ``selection`` when the profile gives GEPA
    no meetings of its own; ``scarce``: the scarce-labels files and the label ledger
    (``pool``, ``labelled_copy``, ``labels``), None in the other profiles."""

    selection: C.Split
    confirmation: C.Split | None
    gepa_train: C.Split
    tests: dict[str, C.Split]
    scarce: dict[str, Any] | None = None


def test_set_path(args: argparse.Namespace, name: str) -> str | None:
    """The JSONL file of a named test set."""
    if name not in TEST_SETS:
        raise SystemExit(f"unknown test set {name!r}; known: {', '.join(TEST_SETS)}")
    return getattr(args, TEST_SETS[name])


def meeting_splits(
    task: MeetingTask, args: argparse.Namespace, prof: dict[str, Any], work: Path
) -> Splits:
    """Selection, confirmation (``n_confirm``: the engine's validation.confirm part) and GEPA's
    train set from AMI train, disjoint; the profile's test sets; the scarce profile's files."""
    with_items = prof["selection_with_action_items"]
    selection = C.load_split(
        task,
        args.train_data,
        prof["n_selection"],
        name="selection",
        synthetic_seed=1001,
        with_action_items=with_items,
    )
    used = set(selection.info["ids"])
    confirmation = None
    if prof.get("n_confirm"):
        confirmation = C.load_split(
            task,
            args.train_data,
            prof["n_confirm"],
            name="confirmation",
            synthetic_seed=1003,
            exclude=used,
            offset=2,
            with_action_items=with_items,
        )
        used |= set(confirmation.info["ids"])
    gepa_train = selection  # GEPA learns from the selection meetings themselves (scarce)
    if prof["n_gepa_train"]:
        gepa_train = C.load_split(
            task,
            args.train_data,
            prof["n_gepa_train"],
            name="gepa-train",
            synthetic_seed=1002,
            exclude=used,
            offset=1,
            with_action_items=with_items,
        )
    tests: dict[str, C.Split] = {}
    for i, name in enumerate(prof.get("test_sets", ["ami-dev"])):
        path = test_set_path(args, name)
        tests[name] = C.load_split(
            task,
            path,
            prof["n_test"] if prof["n_test"] is not None else C.count_lines(path, 20),
            name=f"test {name}",
            synthetic_seed=2002 + i,
        )
    out = Splits(selection, confirmation, gepa_train, tests)
    if prof.get("scarce"):
        out.scarce = scarce_files(task, args, out, used, work)
    return out


def scarce_files(
    task: MeetingTask, args: argparse.Namespace, splits: Splits, labelled: set[str], work: Path
) -> dict[str, Any]:
    """The scarce profile's files: the unlabelled pool and the labelled copy of the selection
    meetings (benchmarks/scarce.py), and the meeting ids of every purpose."""
    train = C.resolve(args.train_data)
    if train is None or not train.is_file():
        raise SystemExit(f"the scarce profile needs the AMI train file ({train})")
    pool, pool_ids = scarce.write_unlabelled(
        task.load(train), labelled, work / "scarce" / "unlabelled-pool.jsonl"
    )
    copy = scarce.write_labelled_copy(
        splits.selection.instances, work / "scarce" / "selection-labelled.jsonl"
    )
    labels = scarce.Labels(
        selection=tuple(splits.selection.info["ids"]),
        confirmation=tuple(splits.confirmation.info["ids"]) if splits.confirmation else (),
        unlabelled=pool_ids,
        test=tuple(i for s in splits.tests.values() for i in s.info["ids"]),
    )
    labels.check()
    if not scarce.holds_no_reference(pool):
        raise RuntimeError(f"{pool}: the unlabelled pool holds a reference")
    return {"pool": pool, "labelled_copy": copy, "labels": labels}
