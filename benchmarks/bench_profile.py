"""The quality benchmark's profiles: data files, ``benchmarks/profiles/<name>.yaml``.

A profile is a flat mapping of settings (budget, seeds, split sizes, cut, engine sizes, the
methods it compares ...). ``extends: <name>`` starts from another profile's settings and
replaces those the file names (a shallow merge, as ``{**parent, **child}``). Each file's comment
says when and why it was decided: it is part of the record, keep it with the settings.

Where a new profile goes: a new YAML file here (docs/benchmarks.md, "Adding a profile, a
method or a test set"). What a profile measures is recorded in its results directory's
settings.json; a changed profile refuses to mix with the cells it ran before.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from benchmarks import common as C
from evotrainer.config import config_from_dict
from evotrainer.policy.decoding import DecodingGenes
from evotrainer.policy.postprocess import LoopCut
from evotrainer.policy.seeds import seed_genes
from evotrainer.tasks.meetings.task import MeetingTask

PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
# command-line flags that replace a profile setting of the same name
OVERRIDE_FLAGS = ("budget", "seeds", "n_test", "n_selection", "max_input_tokens", "max_tokens")


def names() -> list[str]:
    """Every profile, by name (the YAML files' stems), sorted."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def load(name: str, _seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """The settings of profile ``name``, its ``extends`` chain resolved."""
    path = PROFILE_DIR / f"{name}.yaml"
    if not path.is_file():
        raise SystemExit(f"unknown profile {name!r}; known: {', '.join(names())}")
    if name in _seen:
        raise SystemExit(f"profile {name!r} extends itself: {' -> '.join((*_seen, name))}")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise SystemExit(f"{path}: a profile is a mapping of settings")
    parent = data.pop("extends", None)
    return {**load(parent, (*_seen, name)), **data} if parent else data


def resolve(args: argparse.Namespace) -> dict[str, Any]:
    """The profile's settings with the command line's flags and ``--profile-set`` applied."""
    prof = load(args.profile)
    for key in OVERRIDE_FLAGS:
        if getattr(args, key) is not None:
            prof[key] = getattr(args, key)
    for assignment in args.profile_set:
        key, sep, raw = assignment.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in prof:
            raise SystemExit(
                f"--profile-set {assignment!r}: expected KEY=VALUE with KEY one of "
                f"{', '.join(sorted(prof))}"
            )
        try:
            prof[key] = json.loads(raw)
        except json.JSONDecodeError:
            prof[key] = raw
    return prof


def genes(prof: dict[str, Any]) -> tuple[DecodingGenes, LoopCut]:
    """The decoding and loop-cut genes every method's policies carry: the meeting task's seed
    genes (``genes: task``, issue 46's profiles) or none (the profiles measured before)."""
    if prof.get("genes") == "task":
        return seed_genes(config_from_dict({}).inner)
    return DecodingGenes(), LoopCut()


def weights(prof: dict[str, Any]) -> dict[str, float]:
    """s_val's weights: the meeting task's (``s_val_weights: task``) or the engine's default
    before issue 46 (0.5 ROUGE-L + 0.5 action-item F1)."""
    if prof.get("s_val_weights") == "task":
        return dict(config_from_dict({}).outer.s_val_weights)
    return dict(C.S_VAL_WEIGHTS)


def meeting_task(prof: dict[str, Any]) -> MeetingTask:
    """The meeting task every method renders and scores with: the profile's cut and rule."""
    return MeetingTask(
        max_input_tokens=prof["max_input_tokens"],
        truncation="head_tail",
        empty_reference_items=prof["empty_reference_items"],
    )
