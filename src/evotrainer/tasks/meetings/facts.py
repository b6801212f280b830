"""What the meeting task's reward components read of a meeting and of an output, computed once
and cached: an output's tokens, stems and 5-gram shingles (``out_features``); a meeting's topic
terms, owner aliases, salient summary words, numbers and private data (``meeting_features``)."""

from __future__ import annotations

import contextlib
import re
import weakref
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from evotrainer.private_data import normalise as normalise_private
from evotrainer.tasks.meetings.parser import Minutes, parse_minutes
from evotrainer.tasks.meetings.salience import transcript_terms
from evotrainer.tasks.meetings.schema import Meeting
from evotrainer.tasks.meetings.words import (
    MINUTES_VOCAB,
    STOPWORDS,
    content_stems,
    norm_number,
    spoken_numbers,
    stem,
    tokens,
)
from evotrainer.types import Instance


@dataclass
class OutFeatures:
    words: int
    toks: list[str]
    stems: frozenset[str]
    shingles: list[tuple[str, ...]]


@lru_cache(maxsize=256)
def out_features(text: str) -> OutFeatures:
    toks = tokens(text)
    stems = frozenset(stem(t) for t in toks)
    shingles = [tuple(toks[i : i + 5]) for i in range(max(0, len(toks) - 4))]
    return OutFeatures(len(text.split()), toks, stems, shingles)


@dataclass
class MeetingFeatures:
    words: int
    lower_tokens: frozenset[str]
    stems: frozenset[str]
    numbers: frozenset[str]
    shingles: frozenset[tuple[str, ...]]
    topic_terms: list[tuple[str, list[list[str]]]] = field(default_factory=list)
    summary_terms: list[str] = field(default_factory=list)
    transcript_terms: list[str] = field(default_factory=list)  # only without the two above
    private: list[tuple[str, str]] = field(default_factory=list)  # (raw, normalised)
    aliases: dict[str, str] = field(default_factory=dict)


def private_strings(value: Any) -> list[str]:
    out: list[str] = []
    if value is None:
        return out
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Mapping):
        if "value" in value:
            return private_strings(value["value"])
        for v in value.values():
            out.extend(private_strings(v))
        return out
    if isinstance(value, Iterable):
        for v in value:
            out.extend(private_strings(v))
    return out


def _topic_terms(meeting: Meeting) -> list[tuple[str, list[list[str]]]]:
    """Per topic: its keywords as stem lists (title content words when it has no keywords)."""
    out = []
    for t in meeting.topics:
        terms: list[list[str]] = []
        seen: set[tuple[str, ...]] = set()
        for kw in t.keywords:
            st = content_stems(kw)
            if st and tuple(st) not in seen:
                seen.add(tuple(st))
                terms.append(st)
        if not terms:
            for w in tokens(t.title):
                if w in STOPWORDS or w in MINUTES_VOCAB:
                    continue
                s = stem(w)
                if (s,) not in seen:
                    seen.add((s,))
                    terms.append([s])
        if not terms:
            terms = [[stem(w)] for w in tokens(t.title)] or [[t.title.lower()]]
        out.append((t.title, terms))
    return out


def _aliases(meeting: Meeting) -> dict[str, str]:
    """Other ways to name an owner -> the name the ground truth uses: synthetic participants'
    speaker labels, roles and label letters; AMI speaker letters -> roles (meta.speaker_roles)."""
    out: dict[str, str] = {}
    meta = meeting.meta if isinstance(meeting.meta, dict) else {}
    parts = meta.get("participants")
    if isinstance(parts, list):
        roles: Counter[str] = Counter(
            p.get("role", "").lower() for p in parts if isinstance(p, dict) and p.get("role")
        )
        for p in parts:
            if not isinstance(p, dict) or not isinstance(p.get("name"), str):
                continue
            name = p["name"]
            label = p.get("label")
            if isinstance(label, str) and label:
                out[label.lower()] = name
                m = re.search(r"\(([A-Za-z])\)\s*$", label)
                if m:
                    out[m.group(1).lower()] = name
            role = p.get("role")
            if isinstance(role, str) and role and roles[role.lower()] == 1:
                out[role.lower()] = name
    sr = meta.get("speaker_roles")
    if isinstance(sr, dict):
        for letter, role in sr.items():
            if isinstance(letter, str) and isinstance(role, str):
                out.setdefault(letter.lower(), role)
                out.setdefault(f"{role} ({letter})".lower(), role)
    return out


def _summary_terms(meeting: Meeting, k: int = 15) -> list[str]:
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for i, w in enumerate(tokens(" ".join(meeting.summary))):
        if w in STOPWORDS or w in MINUTES_VOCAB or len(w) < 4 or w[0].isdigit():
            continue
        s = stem(w)
        counts[s] += 1
        first.setdefault(s, i)
    ranked = sorted(counts, key=lambda s: (-counts[s], first[s]))
    return ranked[:k]


_FEATURE_CACHE: dict[int, tuple[weakref.ref[Meeting], MeetingFeatures]] = {}


def meeting_features(meeting: Meeting) -> MeetingFeatures:
    key = id(meeting)
    hit = _FEATURE_CACHE.get(key)
    if hit is not None and hit[0]() is meeting:
        return hit[1]
    text = "\n".join(f"{t.speaker}: {t.text}" for t in meeting.transcript)
    toks = tokens(text)
    numbers = {norm_number(t) for t in toks if t[0].isdigit()}
    numbers |= spoken_numbers(toks)
    for t in toks:  # "14th" -> "14"
        m = re.match(r"(\d+)(?:st|nd|rd|th)$", t)
        if m:
            numbers.add(m.group(1))
    private = []
    for s in private_strings(meeting.meta.get("private_data")):
        item = normalise_private(s)
        if item:
            private.append((s, item))
    topic_terms, summary_terms = _topic_terms(meeting), _summary_terms(meeting)
    salient = []
    if not topic_terms and not summary_terms:  # unlabelled: the transcript says what matters
        turns = ((t.speaker, t.text) for t in meeting.transcript)
        salient = transcript_terms(turns, tokens, stem, STOPWORDS | MINUTES_VOCAB)
    f = MeetingFeatures(
        words=len(text.split()) - len(meeting.transcript),
        lower_tokens=frozenset(toks),
        stems=frozenset(stem(t) for t in toks),
        numbers=frozenset(numbers),
        shingles=frozenset(tuple(toks[i : i + 5]) for i in range(max(0, len(toks) - 4))),
        topic_terms=topic_terms,
        summary_terms=summary_terms,
        transcript_terms=salient,
        private=private,
        aliases=_aliases(meeting),
    )
    if len(_FEATURE_CACHE) > 256:
        _FEATURE_CACHE.clear()
    with contextlib.suppress(TypeError):  # not weak-referenceable: just do not cache
        _FEATURE_CACHE[key] = (weakref.ref(meeting), f)
    return f


def meeting_of(instance: Instance) -> Meeting | None:
    payload = getattr(instance, "payload", None)
    return payload if isinstance(payload, Meeting) else None


def minutes_of(output: str, parsed: Any) -> Minutes:
    if isinstance(parsed, Minutes):
        return parsed
    return parse_minutes(output if isinstance(output, str) else "")
