"""The meeting record, in the JSONL format of shared/data/meetings (one object per line):

{"id": ..., "source": "AMI", "transcript": [{"speaker": ..., "text": ...}, ...],
 "references": {"summary": [...], "action_items": [...], "decisions": [...]}, "meta": {...}}

Synthetic meetings use the same format and carry their ground truth in ``meta``:
``meta.topics`` ([{"title", "keywords"}]), ``meta.action_items`` ([{"owner", "task", "due"}]),
``meta.difficulty``, ``meta.kind`` and, for hostile inputs, ``meta.private_data`` and
``meta.injection``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str


@dataclass(frozen=True)
class Topic:
    """A topic of a synthetic meeting and the words that identify it in minutes."""

    title: str
    keywords: tuple[str, ...]


@dataclass(frozen=True)
class ActionItem:
    owner: str
    task: str
    due: str | None = None

    def as_text(self) -> str:
        return f"{self.owner}: {self.task}" + (f" (due {self.due})" if self.due else "")


@dataclass(frozen=True)
class Meeting:
    id: str
    source: str
    transcript: tuple[Turn, ...]
    summary: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    action_items: tuple[str, ...] = ()  # reference action items as written by the annotator
    has_action_items: bool = True  # False when the corpus has no action-item annotation (ICSI)
    topics: tuple[Topic, ...] = ()  # ground truth, synthetic meetings only
    action_truth: tuple[ActionItem, ...] = ()  # structured ground truth, synthetic only
    meta: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def speakers(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for t in self.transcript:
            seen.setdefault(t.speaker, None)
        return tuple(seen)

    @property
    def word_count(self) -> int:
        return sum(len(t.text.split()) for t in self.transcript)

    def transcript_text(self) -> str:
        return "\n".join(f"{t.speaker}: {t.text}" for t in self.transcript)

    def to_json(self) -> dict[str, Any]:
        refs: dict[str, Any] = {"summary": list(self.summary), "decisions": list(self.decisions)}
        if self.has_action_items:
            refs["action_items"] = list(self.action_items)
        meta = dict(self.meta)
        if self.topics:
            meta["topics"] = [{"title": t.title, "keywords": list(t.keywords)} for t in self.topics]
        if self.action_truth:
            meta["action_items"] = [
                {"owner": a.owner, "task": a.task, "due": a.due} for a in self.action_truth
            ]
        return {
            "id": self.id,
            "source": self.source,
            "transcript": [{"speaker": t.speaker, "text": t.text} for t in self.transcript],
            "references": refs,
            "meta": meta,
        }
