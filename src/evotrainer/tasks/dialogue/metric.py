"""The dialogue task's validation metric. On the validation items (one reply to a human
MultiWOZ context) it is request recall, inform match and groundedness (items.py); on
conversations with the fixed cooperative customer (``task.validate_on: goals``, the second,
separately labelled objective) the same keys over the conversation and task success.

Every key is defined on every item, so that s_val weighs them over the same items: a reply that
names no place and gives no value informs nothing (inform_match 0) and invents nothing
(grounded 1). (The reward components leave such a reply out of those two instead.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evotrainer.tasks.dialogue.scoring import Episodes
from evotrainer.types import Instance

KEYS = ("request_recall", "inform_match", "grounded", "success")


class DialogueMetric:
    keys: tuple[str, ...] = KEYS

    def __init__(self, episodes: Episodes) -> None:
        self.episodes = episodes

    def score(self, instance: Instance, output: str, parsed: Any) -> dict[str, float | None]:
        e = self.episodes.of(instance, output, parsed)
        return {
            "request_recall": e.requests,
            "inform_match": e.inform if e.inform is not None else 0.0,
            "grounded": e.grounded if e.grounded is not None else 1.0,
            "success": e.success,
        }

    def aggregate(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        out: dict[str, float] = {}
        for key in self.keys:
            values = [float(r[key]) for r in rows if isinstance(r.get(key), int | float)]
            if values:
                out[key] = sum(values) / len(values)
        return out
