"""The scarce profile's data and harnesses (issue 32; protocol in docs/benchmarks.md, "Scarce
profile"): 8 labelled selection meetings, 8 labelled confirmation meetings, the rest of AMI
train without references as the unlabelled pool, and what each method's engine run is given.

- ``Labels``: the meeting ids of each purpose (selection, confirmation, unlabelled pool, test),
  checked so that no labelled meeting serves two purposes and the pool file holds no reference.
- ``write_unlabelled``: the pool file, transcripts only (references removed before any method
  sees them).
- ``write_labelled_copy``: the 8 selection meetings with their references under renamed ids, the
  training pool of "just use your labels" (the engine removes validation ids from its pool, so
  the copy is how the GA trains on the meetings it selects on).
- ``engine_overrides``: the harness and defences of each engine method.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evotrainer.tasks.meetings.loader import save_meetings
from evotrainer.tasks.meetings.schema import Meeting
from evotrainer.types import Instance

SEED_R = {"completeness": 0.5, "format": 0.2, "action_count": 0.3}  # the SPEC's R1, R2, R3
LABELS_R = {"ref_rougeL": 0.5, "ref_action_item_f1": 0.5}  # s_val itself
LABELLED_SUFFIX = "#labelled"
REFERENCE_FREE_SWITCHABLE = ["owner_accuracy", "conciseness", "faithfulness"]
ENGINE_METHODS = ("fixed", "evotrainer", "labels_ga")
CO_EVOLUTION_VARIANTS = 6  # harness variants per outer step (judged by rank: they cost no call)


def unlabelled(meeting: Meeting) -> Meeting:
    """The meeting as an unlabelled input: the transcript (and its meta), no reference."""
    return replace(meeting, summary=(), decisions=(), action_items=(), has_action_items=False)


@dataclass(frozen=True)
class Labels:
    """Meeting ids by purpose. Each labelled id has exactly one purpose."""

    selection: tuple[str, ...]
    confirmation: tuple[str, ...]
    unlabelled: tuple[str, ...]
    test: tuple[str, ...]

    def check(self) -> None:
        parts = {
            "selection": set(self.selection),
            "confirmation": set(self.confirmation),
            "unlabelled pool": set(self.unlabelled),
            "test": set(self.test),
        }
        names = list(parts)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                both = parts[a] & parts[b]
                if both:
                    raise ValueError(f"meetings in both {a} and {b}: {sorted(both)[:5]}")

    def to_json(self) -> dict[str, list[str]]:
        return {
            "selection": list(self.selection),
            "confirmation": list(self.confirmation),
            "unlabelled_pool": list(self.unlabelled),
            "test": list(self.test),
        }


def write_unlabelled(
    train: Sequence[Instance], held_out: Iterable[str], path: Path
) -> tuple[Path, tuple[str, ...]]:
    """Every training meeting not held out, without references, to ``path``: (path, ids)."""
    skip = set(held_out)
    meetings = [unlabelled(i.payload) for i in train if i.id not in skip]
    save_meetings(path, meetings)
    return path, tuple(m.id for m in meetings)


def write_labelled_copy(selection: Sequence[Instance], path: Path) -> Path:
    """The selection meetings with their references, ids suffixed (``LABELLED_SUFFIX``)."""
    save_meetings(path, [replace(i.payload, id=i.id + LABELLED_SUFFIX) for i in selection])
    return path


def holds_no_reference(path: Path) -> bool:
    """Whether no record of the JSONL file at ``path`` carries a reference."""
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line) if line.strip() else {}
        refs = rec.get("references") or {}
        if any(refs.get(k) for k in ("summary", "action_items", "decisions", "minutes")):
            return False
        if rec.get("minutes"):
            return False
    return True


def engine_overrides(method: str, pool: Path, labelled_copy: Path) -> dict[str, Any]:
    """The ``harness``, ``defences`` (and for evotrainer ``outer``) sections of ``method``'s
    engine run (merged over the profile's). fixed and evotrainer: the seed's R on the
    unlabelled pool, no reference component, no terminal reward; evotrainer adds the learned
    reward (fitted on the selection answers) and judges its harness variants by rank
    (``outer.trials: rank``). labels_ga: s_val on the labelled copy of the selection
    meetings."""
    no_terminal = {"terminal_data": None, "terminal_share": 0.0, "discriminator": False}
    if method == "labels_ga":
        harness = {
            "real_data": str(labelled_copy),
            "real_share": 1.0,
            "weights": dict(LABELS_R),
            "reference_components": ["rougeL", "action_item_f1"],
            "switchable": [],
        }
        return {"harness": harness, "defences": {**no_terminal, "learned_reward": False}}
    if method not in ("fixed", "evotrainer"):
        raise ValueError(f"not an engine method of the scarce profile: {method!r}")
    harness = {
        "real_data": str(pool),
        "weights": dict(SEED_R),
        "reference_components": [],
        "switchable": list(REFERENCE_FREE_SWITCHABLE),
    }
    if method == "fixed":
        return {"harness": harness, "defences": {**no_terminal, "learned_reward": False}}
    # co-evolution: variants judged by how their reward ranks the validated policies (no trial
    # run, no call), a learned reward fitted on the selection answers
    learned = {"learned_reward": True, "learned_reward_data": "selection"}
    outer = {"trials": "rank", "variants": CO_EVOLUTION_VARIANTS}
    return {"harness": harness, "defences": {**no_terminal, **learned}, "outer": outer}
