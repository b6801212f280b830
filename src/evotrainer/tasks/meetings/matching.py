"""Action-item matching, shared by the meeting task's rewards (``owner_accuracy``) and its
validation metric (action-item F1): owners (names, AMI roles, speaker letters, group owners),
task similarity (fuzzy content-word cosine) and the greedy one-to-one assignment of predicted to
true action items."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from evotrainer.tasks.meetings.parser import ParsedActionItem, parse_action_item
from evotrainer.tasks.meetings.schema import Meeting
from evotrainer.tasks.meetings.words import (
    GROUP_OWNERS,
    STOPWORDS,
    content_stems,
    fuzzy_in,
    tokens,
)

_ROLE_CANON = (
    (re.compile(r"\bproject manager\b|\bpm\b|\bmanager\b|\bchair\b"), "project manager"),
    (re.compile(r"\bindustrial\b|\bid\b"), "industrial designer"),
    (re.compile(r"\binterface\b|\bui\b|\bux\b"), "user interface"),
    (re.compile(r"\bmarketing\b"), "marketing"),
)
_TITLES = re.compile(r"^(?:the|mr|mrs|ms|dr|prof|professor)\.?\s+", re.I)


@lru_cache(maxsize=4096)
def owner_canon(owner: str) -> tuple[str, frozenset[str], frozenset[str]]:
    """(kind, role set, name tokens) with kind in "group" | "role" | "name" | "none"."""
    o = owner.strip().lower()
    if not o:
        return "none", frozenset(), frozenset()
    o2 = _TITLES.sub("", o)
    o2 = re.sub(r"\([^)]*\)", " ", o2).strip()
    words = tokens(o2)
    roles = frozenset(c for rx, c in _ROLE_CANON if rx.search(o2))
    if roles:
        return "role", roles, frozenset(words)
    if words and all(w in GROUP_OWNERS or w in ("the", "whole", "and") for w in words):
        return "group", frozenset(), frozenset(words)
    names = frozenset(w for w in words if len(w) >= 2 and w not in STOPWORDS)
    return "name", frozenset(), names


def _resolve(owner: str, aliases: Mapping[str, str] | None) -> str:
    if not aliases:
        return owner
    key = owner.strip().strip(".:").lower()
    if key in aliases:
        return aliases[key]
    if key.startswith("the ") and key[4:] in aliases:
        return aliases[key[4:]]
    m = re.search(r"\(([A-Za-z])\)\s*$", key)
    if m and m.group(1) in aliases:
        return aliases[m.group(1)]
    return owner


def owner_match(
    pred: str | None, truth: str | None, aliases: Mapping[str, str] | None = None
) -> float:
    """1 for the same person/role, 0.5 for an individual where the truth is a group, else 0.
    ``aliases`` maps other names of an owner (speaker label, role, letter; lower case) to the
    name the truth uses."""
    if not pred or not truth:
        return 0.0
    pred = _resolve(pred, aliases)
    truth = _resolve(truth, aliases)
    pk, proles, pnames = owner_canon(pred)
    tk, troles, tnames = owner_canon(truth)
    if tk == "group":
        return 1.0 if pk == "group" else 0.5
    if pk == "group" or pk == "none":
        return 0.0
    if proles and troles:
        return 1.0 if proles & troles else 0.0
    if pnames & tnames:
        return 1.0
    if fuzz.token_set_ratio(pred.lower(), truth.lower()) >= 85:
        return 1.0
    for a in pnames:
        for b in tnames:
            if len(a) >= 4 and len(b) >= 4 and fuzz.ratio(a, b) >= 85:
                return 1.0
    return 0.0


def task_similarity(pred: str, truth: str) -> float:
    """Cosine of the two tasks' content-word sets, words matching exactly or by rapidfuzz >= 85."""
    p = set(content_stems(pred, keep_generic=False))
    t = set(content_stems(truth, keep_generic=False))
    if not p or not t:
        return 0.0
    inter = len(p & t)
    rest_p = p - t
    for w in t - p:
        if fuzzy_in(w, rest_p):
            inter += 1
    return min(1.0, inter / math.sqrt(len(p) * len(t)))


def reference_action_items(meeting: Meeting) -> list[ParsedActionItem] | None:
    """The meeting's true action items (structured if synthetic, parsed from the reference
    sentences otherwise); None when the meeting has no action-item annotation."""
    if meeting.action_truth:
        return [ParsedActionItem(a.owner, a.task, a.due) for a in meeting.action_truth]
    if not meeting.has_action_items:
        return None
    out = []
    for s in meeting.action_items:
        a = parse_action_item(s)
        if a is not None:
            out.append(a)
    return out


def _owner_in_text(truth_owner: str | None, text: str) -> bool:
    if not truth_owner:
        return False
    kind, roles, names = owner_canon(truth_owner)
    low = text.lower()
    if roles:
        return any(rx.search(low) for rx, c in _ROLE_CANON if c in roles)
    return any(len(n) >= 3 and re.search(rf"\b{re.escape(n)}\b", low) for n in names)


@dataclass(frozen=True)
class ActionMatch:
    pred: int
    truth: int
    owner: float
    task: float

    @property
    def soft(self) -> float:
        return 0.5 * self.owner + 0.5 * self.task


def match_action_items(
    pred: Sequence[ParsedActionItem],
    truth: Sequence[ParsedActionItem],
    aliases: Mapping[str, str] | None = None,
    strict: bool = False,
    min_task: float = 0.25,
) -> list[ActionMatch]:
    """One-to-one greedy assignment of predicted to true items, best pairs first.

    ``strict`` (validation): a pair counts only when the owner matches (or the true owner is
    unknown, or the predicted task text names the true owner) and task similarity >= min_task.
    Otherwise (reward) every pair with a positive soft score may be assigned."""
    pairs: list[ActionMatch] = []
    for i, p in enumerate(pred):
        for j, t in enumerate(truth):
            om = owner_match(p.owner, t.owner, aliases)
            if om == 0.0 and p.owner is None and _owner_in_text(t.owner, p.task):
                om = 1.0
            ts = task_similarity(p.task, t.task)
            if strict:
                owner_ok = om >= 0.5 or t.owner is None
                if not owner_ok or ts < min_task:
                    continue
            elif om == 0.0 and ts == 0.0:
                continue
            pairs.append(ActionMatch(i, j, om, ts))
    pairs.sort(key=lambda m: (-m.soft, m.pred, m.truth))
    used_p: set[int] = set()
    used_t: set[int] = set()
    out = []
    for m in pairs:
        if m.pred in used_p or m.truth in used_t:
            continue
        used_p.add(m.pred)
        used_t.add(m.truth)
        out.append(m)
    return out
