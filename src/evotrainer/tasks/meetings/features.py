"""What the learned defences know of the meeting task's outputs (its capabilities,
tasks/base.py): the output features of a text of minutes (``MINUTES_FEATURES``, the learned
reward model's), and human reference texts for the discriminator's "human" class
(``human_reference_pool``)."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotrainer.tasks.base import OutputFeatures
from evotrainer.tasks.meetings.generator import MeetingGenerator
from evotrainer.tasks.meetings.loader import load_meetings
from evotrainer.tasks.meetings.metrics import reference_text
from evotrainer.tasks.meetings.parser import parse_minutes

OUTPUT_FEATURES: tuple[str, ...] = (
    "out:log_words",
    "out:log_lines",
    "out:action_items",
    "out:owned_share",
    "out:bullets",
    "out:decisions",
    "out:topics",
    "out:has_heading",
    "out:distinct_ratio",
)
MAX_CHARS = 20_000


def minutes_features(output: Any) -> list[float]:
    """The output-only features (``OUTPUT_FEATURES`` order) of one output."""
    text = output[:MAX_CHARS] if isinstance(output, str) else ""
    m = parse_minutes(text)
    words = re.findall(r"\w+", text.lower())
    lines = [ln for ln in text.splitlines() if ln.strip()]
    n_items = len(m.action_items)
    owned = sum(1 for a in m.action_items if a.owner) / n_items if n_items else 0.0
    return [
        math.log1p(len(words)),
        math.log1p(len(lines)),
        float(min(n_items, 50)),
        owned,
        float(min(m.bullets, 200)),
        float(min(len(m.decisions), 50)),
        float(min(len(m.topics), 50)),
        1.0 if m.has_heading else 0.0,
        len(set(words)) / len(words) if words else 0.0,
    ]


MINUTES_FEATURES = OutputFeatures(OUTPUT_FEATURES, minutes_features)


@dataclass(frozen=True)
class ReferencePool:
    """Human reference texts, where they came from (``"file:<path>"`` or ``"synthetic"``) and,
    for a synthetic pool, why the file was not used."""

    texts: list[str]
    source: str
    note: str = ""


def human_reference_pool(
    path: str | Path | None,
    n: int,
    seed: int = 0,
    exclude_ids: Collection[str] = (),
) -> ReferencePool:
    """Up to ``n`` human reference texts (``reference_text`` of each meeting) for the
    discriminator's "human" class, drawn with ``seed``.

    If ``path`` names an existing JSONL file of meetings (the ami-train format), its meetings
    are used, minus ``exclude_ids`` (pass the validation set's ids to rule out any overlap) and
    minus meetings without reference text; a malformed file raises ``DataError``. Otherwise
    (None, missing file, or no usable reference in it) references of synthetic meetings from
    ``MeetingGenerator`` (seed stream ``discriminator-human-<seed>``, difficulty spread over
    0..1) are used. Pass a TRAINING file only: never the validation set.

    Match the domain of the training instances: a discriminator trained on AMI references
    against outputs on synthetic meetings learns the domain (remote controls vs. hiring), not
    quality; good minutes of synthetic meetings then score ~0.35 against AMI references."""
    n = max(0, int(n))
    rng = random.Random(f"discriminator-human-{seed}")
    note = ""
    if path is not None and Path(path).is_file():
        excluded = set(exclude_ids)
        texts = [
            t
            for m in load_meetings(path)
            if m.id not in excluded and (t := reference_text(m).strip())
        ]
        if texts:
            rng.shuffle(texts)
            return ReferencePool(texts[:n], f"file:{path}")
        note = f"no usable references in {path}"
    elif path is not None:
        note = f"{path} not found"

    gen = MeetingGenerator()
    out: list[str] = []
    for i in range(n):
        difficulty = i / (n - 1) if n > 1 else 0.5
        out.append(reference_text(gen.meeting(round(difficulty, 4), rng)))
    return ReferencePool(out, "synthetic", note)
