"""The data a run trains and validates on, identified by content: a sha256 of the loaded
records (every field of every instance, in order), one per part: the validation set's selection
and confirmation parts, the real training pool and the terminal-reward pool. A checkpoint
records them; a resume refuses data that changed, even under the same ids (a file whose
transcripts and references were replaced must not mix old validation results with new ones).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any

from evotrainer.errors import CheckpointError
from evotrainer.types import Instance

WHAT = {
    "selection": "the validation set changed since the run started: its selection part",
    "confirmation": "the validation set changed since the run started: its confirmation part",
    "training": "the real training data changed since the run started",
    "terminal": "the terminal-reward data changed since the run started",
}
SETTING = {
    "selection": "validation.data",
    "confirmation": "validation.data",
    "training": "harness.real_data",
    "terminal": "defences.terminal_data",
}


def instances_sha256(instances: Sequence[Instance]) -> str:
    """sha256 of the instances' content, in order (ids, payloads, sources, kinds ...)."""
    h = hashlib.sha256()
    for inst in instances:
        h.update(json.dumps(_plain(inst), sort_keys=True, default=str).encode("ascii"))
        h.update(b"\n")
    return h.hexdigest()


def _plain(inst: Instance) -> dict[str, Any]:
    payload = inst.payload
    if hasattr(payload, "to_json"):
        payload = payload.to_json()
    elif is_dataclass(payload) and not isinstance(payload, type):
        payload = asdict(payload)
    return {
        "id": inst.id,
        "source": inst.source,
        "difficulty": inst.difficulty,
        "kind": inst.kind,
        "length_bucket": inst.length_bucket,
        "payload": payload,
    }


def check_same_data(recorded: Any, now: Mapping[str, str], sources: Mapping[str, str]) -> None:
    """CheckpointError naming the part, its source and the setting when a part's sha256 differs
    from the one ``recorded`` in the checkpoint (older checkpoints have none: not checked)."""
    if not isinstance(recorded, Mapping):
        return
    for part, digest in now.items():
        before = recorded.get(part)
        if before is not None and before != digest:
            raise CheckpointError(
                f"{WHAT[part]} ({sources.get(part) or 'none'}): its content is not the same "
                f"(sha256 {str(before)[:12]}... then, {digest[:12]}... now), even where its "
                f"ids are. Resume where {SETTING[part]} is the data the run started with, or "
                "start a new run."
            )
