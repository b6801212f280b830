"""Reward components of the meeting-minutes task (SPEC: R = w1*R1 + w2*R2 + w3*R3 + extras).

Every component returns a ComponentScore in [0, 1] with a short feedback text that a reflective
mutation can read ("covered 2/3 topics; missing: Support team hiring"), and never raises: any
output (empty, garbage, 50 KB) is scored.

Components (``component_registry()``):

- ``completeness`` (R1): share of the meeting's ground-truth topics the minutes cover.
  Matcher: a lightweight, offline lexical model. Text is lower-cased, tokenised, and each word is
  reduced by light suffix stripping (plural -s/-es/-ies, -ing, -ed, final -e, doubled final
  consonant), so "offers"/"offer", "hiring"/"hire", "planned"/"plan" meet. A topic's terms are
  its keywords (a multi-word keyword needs all its content words; a topic without keywords uses
  its title's content words); a term word missing from the minutes may still match a minutes word
  by rapidfuzz ``fuzz.ratio`` >= 85 (words of 5+ letters: typos, British/American spellings). A
  topic counts as covered when ``need = min(3, ceil(n_terms / 2))`` of its terms match.
  Why: it is fast (microseconds per topic, the framework scores >= 500 outputs/s), deterministic,
  works offline and needs no torch/embedding model; synthetic topics come with their keywords, so
  lexical evidence is what the ground truth offers. Its blind spot (paraphrases with no shared
  word) is accepted; the validation metric (ROUGE on real references) is the external check.
  Real meetings have no ground-truth topics: the component then falls back to the share of the
  15 most salient content words of the reference summary found in the minutes (feedback says
  so); with no summary either (an unlabelled meeting) it is the share of the transcript's 15
  most salient content words (salience.py: said often, by several speakers, not a filler); with
  no transcript words either it scores 0 with feedback "no ground truth".
- ``format`` (R2): 1 if the output has a title or heading AND >= 2 bullet points, else 0.
- ``action_count`` (R3): 1 if the minutes list 2..5 action items, else 0.
- ``owner_accuracy``: F1 of predicted action items against the ground truth. Each (predicted,
  true) pair scores 0.5 * owner match + 0.5 * task similarity (owner: rapidfuzz name match, first
  or last name, AMI role such as "industrial designer"/"ID", speaker letter via
  meta.speaker_roles, synthetic speaker labels/roles via meta.participants; task: fuzzy
  content-word cosine); pairs are assigned greedily one-to-one,
  precision = sum / n_predicted, recall = sum / n_true. Ground truth is ``action_truth`` for
  synthetic meetings, else the reference action items (AMI sentences parsed into owner/task).
  A meeting annotated with no action items: 1 for empty predictions, 0 otherwise. A meeting
  without any action-item annotation (ICSI): 0 with feedback "no ground truth" (the same for
  every policy, so it does not change the ranking; disable the component on such corpora).
- ``conciseness``: 1 when the word count is inside a target band, decaying outside it; the band
  comes from the ground truth size (30 + 18/topic + 12/action item + 12/decision words, between
  x0.5 and x2, capped at 0.6 x transcript words) or the reference length; multiplied by penalties
  for copying the transcript (share of 5-grams found verbatim in it above 50 %) and for
  repetition loops (share of repeated 5-grams above 20 %).
- ``faithfulness``: share of the minutes' names (capitalised words not at sentence start) and
  numbers, plus action-item owners, that occur in the transcript (instruction words such as
  "Meeting", "Minutes", "Action" are ignored); times a grounding factor (share of content words
  found in the transcript, full credit from 60 %) so garbage scores low. Empty output: 0.
- ``privacy``: 0 if any ``meta["private_data"]`` string (e-mail, phone, IBAN...) from the
  transcript appears in the output (case-, space- and punctuation-insensitive for numbers), else 1.

``DEFAULT_WEIGHTS`` is the SPEC's initial weight vector over R1, R2, R3.
"""

from __future__ import annotations

import contextlib
import math
import re
import weakref
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from evotrainer.private_data import leaked as leaked_private
from evotrainer.private_data import normalise as normalise_private
from evotrainer.tasks.base import RewardComponent
from evotrainer.tasks.meetings.parser import (
    Minutes,
    ParsedActionItem,
    parse_action_item,
    parse_minutes,
)
from evotrainer.tasks.meetings.salience import transcript_terms
from evotrainer.tasks.meetings.schema import Meeting
from evotrainer.types import ComponentScore, Instance

__all__ = [
    "DEFAULT_WEIGHTS",
    "Completeness",
    "Format",
    "ActionCount",
    "OwnerAccuracy",
    "Conciseness",
    "Faithfulness",
    "Privacy",
    "component_registry",
    "stem",
    "content_stems",
    "has_word",
    "owner_match",
    "task_similarity",
    "reference_action_items",
    "match_action_items",
    "meeting_aliases",
]


DEFAULT_WEIGHTS: dict[str, float] = {"completeness": 0.5, "format": 0.2, "action_count": 0.3}

# --------------------------------------------------------------------------------------------
# Text normalisation

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "above",
        "after",
        "before",
        "between",
        "during",
        "through",
        "up",
        "down",
        "out",
        "off",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "doing",
        "have",
        "has",
        "had",
        "having",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "need",
        "needs",
        "it",
        "its",
        "it's",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "their",
        "theirs",
        "them",
        "they",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "we",
        "us",
        "our",
        "ours",
        "you",
        "your",
        "yours",
        "i",
        "me",
        "my",
        "mine",
        "who",
        "whom",
        "whose",
        "which",
        "what",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "just",
        "also",
        "again",
        "further",
        "once",
        "s",
        "t",
        "don",
        "now",
        "one",
        "two",
        "get",
        "got",
        "go",
        "going",
        "gonna",
        "yeah",
        "um",
        "uh",
        "okay",
        "ok",
        "oh",
        "mm",
        "hmm",
        "well",
        "right",
        "like",
        "really",
        "think",
        "know",
        "yes",
        "let's",
        "lets",
        "thing",
        "things",
        "way",
        "lot",
        "bit",
        "sure",
    ]
)
# Words every set of minutes may use without inventing anything.
MINUTES_VOCAB = frozenset(
    [
        "meeting",
        "minutes",
        "minute",
        "action",
        "actions",
        "item",
        "items",
        "topic",
        "topics",
        "decision",
        "decisions",
        "decide",
        "decided",
        "agree",
        "agreed",
        "agreement",
        "summary",
        "discuss",
        "discussed",
        "discussion",
        "next",
        "step",
        "steps",
        "owner",
        "task",
        "tasks",
        "due",
        "deadline",
        "attendee",
        "attendees",
        "participant",
        "participants",
        "date",
        "time",
        "note",
        "notes",
        "agenda",
        "key",
        "point",
        "points",
        "follow",
        "followup",
        "team",
        "member",
        "members",
        "everyone",
        "group",
        "update",
        "updates",
        "plan",
        "review",
        "status",
        "present",
        "absent",
        "title",
        "subject",
        "todo",
        "to-do",
        "overview",
        "conclusion",
        "conclusions",
        "outcome",
        "outcomes",
        "open",
        "issue",
        "issues",
        "responsible",
        "assign",
        "assigned",
        "tbd",
        "n/a",
        "none",
    ]
)
GENERIC_TASK_WORDS = frozenset(
    [
        "follow",
        "check",
        "review",
        "look",
        "make",
        "do",
        "work",
        "sure",
        "take",
        "care",
        "handle",
        "thing",
        "things",
        "stuff",
    ]
)
GROUP_OWNERS = frozenset(
    [
        "team",
        "group",
        "everyone",
        "everybody",
        "all",
        "participants",
        "members",
        "staff",
        "we",
        "they",
        "someone",
        "somebody",
        "anyone",
    ]
)

_TOKEN = re.compile(r"[a-z0-9]+(?:['.,][a-z0-9]+)*")
_DIGIT_TOKEN = re.compile(r"\d")


def _norm_number(tok: str) -> str:
    t = tok.replace(",", "")
    if "." in t:
        t = t.rstrip("0").rstrip(".") if re.fullmatch(r"\d+\.\d+", t) else t
    return t


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light, consistent suffix stripping (lower-cases); numbers are normalised ("21,000" ->
    "21000")."""
    w = word.lower().strip("'.,")
    if not w:
        return w
    if w[0].isdigit():
        return _norm_number(w)
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ied") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
    if len(w) > 4 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def content_stems(text: str, keep_generic: bool = True) -> list[str]:
    """Stems of the non-stopword tokens of ``text`` (all tokens' stems if none is left)."""
    toks = tokens(text)
    out = [
        stem(t)
        for t in toks
        if t not in STOPWORDS and (keep_generic or t not in GENERIC_TASK_WORDS)
    ]
    if not out:
        out = [stem(t) for t in toks if t not in STOPWORDS]
    return [s for s in out if s]


def _fuzzy_in(word: str, vocab: Iterable[str], cutoff: float = 85.0) -> bool:
    if len(word) < 5 or word[0].isdigit():
        return False
    for v in vocab:
        if abs(len(v) - len(word)) <= 2 and v[:1] == word[:1] and fuzz.ratio(word, v) >= cutoff:
            return True
    return False


def has_word(word: str, vocab: set[str] | frozenset[str]) -> bool:
    """``word`` (a stem) is in ``vocab`` exactly or as a near-miss (rapidfuzz ratio >= 85)."""
    return word in vocab or _fuzzy_in(word, vocab)


# --------------------------------------------------------------------------------------------
# Cached features of an output and of a meeting


@dataclass
class _OutFeatures:
    words: int
    toks: list[str]
    stems: frozenset[str]
    shingles: list[tuple[str, ...]]


@lru_cache(maxsize=256)
def _out_features(text: str) -> _OutFeatures:
    toks = tokens(text)
    stems = frozenset(stem(t) for t in toks)
    shingles = [tuple(toks[i : i + 5]) for i in range(max(0, len(toks) - 4))]
    return _OutFeatures(len(text.split()), toks, stems, shingles)


_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
        ]
    )
}
_TENS = {
    w: 10 * (i + 2)
    for i, w in enumerate(
        ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    )
}
_SCALE = {"hundred": 100, "thousand": 1000, "million": 1000000}
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "twentieth": 20, "thirtieth": 30,
}  # fmt: skip


def _spoken_numbers(toks: Sequence[str]) -> set[str]:
    """Values of spelled-out numbers ("twenty five" -> 25, "twelve fifty" -> 12.5 and 1250)."""
    out: set[str] = set()
    prev: int | None = None
    for t in toks:
        v = _NUMBER_WORDS.get(t, _TENS.get(t, _ORDINALS.get(t)))
        if v is None and t in _SCALE and prev is not None:
            v = prev * _SCALE[t]
            out.add(str(v))
            prev = v
            continue
        if v is None:
            prev = None
            continue
        out.add(str(v))
        if prev is not None:
            if prev >= 20 and prev % 10 == 0 and v < 10:
                out.add(str(prev + v))
            else:
                out.add(f"{prev}.{v}".rstrip("0").rstrip("."))
                out.add(f"{prev}{v:02d}" if v < 100 else f"{prev}{v}")
        prev = v
    return out


@dataclass
class _MeetingFeatures:
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


def _private_strings(value: Any) -> list[str]:
    out: list[str] = []
    if value is None:
        return out
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Mapping):
        if "value" in value:
            return _private_strings(value["value"])
        for v in value.values():
            out.extend(_private_strings(v))
        return out
    if isinstance(value, Iterable):
        for v in value:
            out.extend(_private_strings(v))
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


_FEATURE_CACHE: dict[int, tuple[weakref.ref[Meeting], _MeetingFeatures]] = {}


def _meeting_features(meeting: Meeting) -> _MeetingFeatures:
    key = id(meeting)
    hit = _FEATURE_CACHE.get(key)
    if hit is not None and hit[0]() is meeting:
        return hit[1]
    text = "\n".join(f"{t.speaker}: {t.text}" for t in meeting.transcript)
    toks = tokens(text)
    numbers = {_norm_number(t) for t in toks if t[0].isdigit()}
    numbers |= _spoken_numbers(toks)
    for t in toks:  # "14th" -> "14"
        m = re.match(r"(\d+)(?:st|nd|rd|th)$", t)
        if m:
            numbers.add(m.group(1))
    private = []
    for s in _private_strings(meeting.meta.get("private_data")):
        item = normalise_private(s)
        if item:
            private.append((s, item))
    topic_terms, summary_terms = _topic_terms(meeting), _summary_terms(meeting)
    salient = []
    if not topic_terms and not summary_terms:  # unlabelled: the transcript says what matters
        turns = ((t.speaker, t.text) for t in meeting.transcript)
        salient = transcript_terms(turns, tokens, stem, STOPWORDS | MINUTES_VOCAB)
    f = _MeetingFeatures(
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


def _meeting_of(instance: Instance) -> Meeting | None:
    payload = getattr(instance, "payload", None)
    return payload if isinstance(payload, Meeting) else None


def _minutes_of(output: str, parsed: Any) -> Minutes:
    if isinstance(parsed, Minutes):
        return parsed
    return parse_minutes(output if isinstance(output, str) else "")


def _short(items: Sequence[str], n: int = 3, width: int = 60) -> str:
    out = [s if len(s) <= width else s[: width - 3] + "..." for s in items[:n]]
    more = f" (+{len(items) - n} more)" if len(items) > n else ""
    return ", ".join(out) + more


def _safe(name: str, fn: Any) -> Any:
    """Decorator body: a component never raises; a bug scores 0 and says why."""

    def wrapped(self: Any, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        try:
            return fn(self, instance, output if isinstance(output, str) else "", parsed)
        except Exception as e:  # noqa: BLE001 - the contract is "never raise"
            return ComponentScore(name, 0.0, f"scoring error: {type(e).__name__}: {e}"[:200])

    return wrapped


class _Component:
    name = "component"
    description = ""

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "score" in cls.__dict__:
            cls.score = _safe(cls.name, cls.__dict__["score"])  # type: ignore[method-assign]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# --------------------------------------------------------------------------------------------
# R1 completeness


class Completeness(_Component):
    name = "completeness"
    description = "R1: share of the meeting's ground-truth topics that the minutes cover"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        meeting = _meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 0.0, "no meeting in the instance")
        if not output.strip():
            return ComponentScore(self.name, 0.0, "empty output: no topic covered")
        mf = _meeting_features(meeting)
        of = _out_features(output)
        vocab = of.stems
        if mf.topic_terms:
            covered, missing = [], []
            for title, terms in mf.topic_terms:
                need = min(3, math.ceil(0.5 * len(terms)))
                hits = sum(1 for term in terms if all(has_word(w, vocab) for w in term))
                (covered if hits >= need else missing).append(title)
            n = len(mf.topic_terms)
            fb = f"covered {len(covered)}/{n} topics"
            if missing:
                fb += f"; missing: {_short(missing, 4)}"
            return ComponentScore(self.name, len(covered) / n, fb)
        if mf.summary_terms:
            return self._words(
                mf.summary_terms, vocab, "no ground-truth topics", "reference summary"
            )
        if mf.transcript_terms:
            return self._words(mf.transcript_terms, vocab, "unlabelled meeting", "transcript")
        return ComponentScore(self.name, 0.0, "no ground truth (no topics, no reference summary)")

    def _words(self, terms: list[str], vocab: Any, why: str, where: str) -> ComponentScore:
        """The share of ``terms`` (salient words of the ``where``) the minutes hold."""
        found = [w for w in terms if has_word(w, vocab)]
        miss = [w for w in terms if w not in found]
        fb = f"{why}: covered {len(found)}/{len(terms)} salient words of the {where}"
        if miss:
            fb += f"; missing: {_short(miss, 5)}"
        return ComponentScore(self.name, len(found) / len(terms), fb)


# --------------------------------------------------------------------------------------------
# R2 format, R3 action count


class Format(_Component):
    name = "format"
    description = "R2: basic shape of minutes: a title/heading and at least 2 bullet points (0/1)"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        m = _minutes_of(output, parsed)
        ok_head = m.has_heading
        ok_bullets = m.bullets >= 2
        if ok_head and ok_bullets:
            return ComponentScore(self.name, 1.0, f"title/heading and {m.bullets} bullet points")
        missing = []
        if not ok_head:
            missing.append("no title or heading")
        if not ok_bullets:
            missing.append(f"{m.bullets} bullet points (need >= 2)")
        return ComponentScore(self.name, 0.0, "; ".join(missing))


class ActionCount(_Component):
    name = "action_count"
    description = "R3: between 2 and 5 action items (1), else 0"

    def __init__(self, low: int = 2, high: int = 5) -> None:
        self.low, self.high = low, high

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        n = len(_minutes_of(output, parsed).action_items)
        ok = self.low <= n <= self.high
        fb = f"{n} action items" + ("" if ok else f" (want {self.low}-{self.high})")
        return ComponentScore(self.name, 1.0 if ok else 0.0, fb)


# --------------------------------------------------------------------------------------------
# Action-item matching (shared with metrics.py)

_ROLE_CANON = (
    (re.compile(r"\bproject manager\b|\bpm\b|\bmanager\b|\bchair\b"), "project manager"),
    (re.compile(r"\bindustrial\b|\bid\b"), "industrial designer"),
    (re.compile(r"\binterface\b|\bui\b|\bux\b"), "user interface"),
    (re.compile(r"\bmarketing\b"), "marketing"),
)
_TITLES = re.compile(r"^(?:the|mr|mrs|ms|dr|prof|professor)\.?\s+", re.I)


@lru_cache(maxsize=4096)
def _owner_canon(owner: str) -> tuple[str, frozenset[str], frozenset[str]]:
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
    pk, proles, pnames = _owner_canon(pred)
    tk, troles, tnames = _owner_canon(truth)
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
        if _fuzzy_in(w, rest_p):
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
    kind, roles, names = _owner_canon(truth_owner)
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


class OwnerAccuracy(_Component):
    name = "owner_accuracy"
    description = "action items' owner and task against the ground truth (soft F1)"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        meeting = _meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 0.0, "no meeting in the instance")
        truth = reference_action_items(meeting)
        if truth is None:
            return ComponentScore(
                self.name, 0.0, "no ground truth: the meeting has no action-item annotation"
            )
        pred = list(_minutes_of(output, parsed).action_items)
        if not truth:
            if not pred:
                return ComponentScore(self.name, 1.0, "correctly no action items")
            return ComponentScore(
                self.name, 0.0, f"the meeting has no action items, but {len(pred)} were listed"
            )
        if not pred:
            return ComponentScore(
                self.name,
                0.0,
                f"no action items found; expected {len(truth)}, e.g. "
                f"{_short([t.as_text() for t in truth], 2)}",
            )
        matches = match_action_items(pred, truth, _meeting_features(meeting).aliases)
        total = sum(m.soft for m in matches)
        precision = total / len(pred)
        recall = total / len(truth)
        f1 = 0.0 if total == 0 else 2 * precision * recall / (precision + recall)
        good = [m for m in matches if m.owner >= 1.0 and m.task >= 0.5]
        matched_t = {m.truth for m in good}
        matched_p = {m.pred for m in good}
        missing = [truth[j].as_text() for j in range(len(truth)) if j not in matched_t]
        wrong = [pred[i].as_text() for i in range(len(pred)) if i not in matched_p]
        fb = f"{len(good)}/{len(truth)} true action items matched with owner and task"
        if missing:
            fb += f"; missing: {_short(missing, 3)}"
        if wrong:
            fb += f"; unmatched: {_short(wrong, 3)}"
        return ComponentScore(self.name, max(0.0, min(1.0, f1)), fb)


# --------------------------------------------------------------------------------------------
# conciseness


def _target_band(meeting: Meeting, mf: _MeetingFeatures) -> tuple[float, float]:
    n_t, n_a, n_d = len(meeting.topics), len(meeting.action_truth), len(meeting.decisions)
    if n_t or n_a:
        expected = 30 + 18 * n_t + 12 * n_a + 12 * n_d
    else:
        ref = sum(
            len(s.split()) for s in (*meeting.summary, *meeting.decisions, *meeting.action_items)
        )
        expected = ref if ref else min(300.0, max(60.0, 0.08 * mf.words))
    hi = min(2.0 * expected, max(80.0, 0.6 * mf.words)) if mf.words else 2.0 * expected
    lo = min(0.5 * expected, 0.5 * hi)
    return lo, hi


class Conciseness(_Component):
    name = "conciseness"
    description = (
        "length within a target band; penalises rambling, loops and copying the transcript"
    )

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        meeting = _meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 0.0, "no meeting in the instance")
        of = _out_features(output)
        if of.words == 0:
            return ComponentScore(self.name, 0.0, "empty output")
        mf = _meeting_features(meeting)
        lo, hi = _target_band(meeting, mf)
        w = of.words
        if w < lo:
            s = w / lo
        elif w > hi:
            s = (hi / w) ** 2
        else:
            s = 1.0
        notes = [f"{w} words (target {int(lo)}-{int(hi)})"]
        if of.shingles:
            copied = sum(1 for g in of.shingles if g in mf.shingles) / len(of.shingles)
            repeated = 1.0 - len(set(of.shingles)) / len(of.shingles)
            if copied > 0.5:
                s *= max(0.0, 1.0 - (copied - 0.5) / 0.4)
                notes.append(f"{copied:.0%} copied verbatim from the transcript")
            if repeated > 0.2:
                s *= max(0.0, 1.0 - (repeated - 0.2) / 0.4)
                notes.append(f"{repeated:.0%} repeated text (a loop)")
        return ComponentScore(self.name, max(0.0, min(1.0, s)), "; ".join(notes))


# --------------------------------------------------------------------------------------------
# faithfulness

_IGNORE_CAPS = frozenset(
    w.lower()
    for w in [
        "Meeting",
        "Meetings",
        "Minutes",
        "Minute",
        "Action",
        "Actions",
        "Item",
        "Items",
        "Date",
        "Time",
        "Topics",
        "Topic",
        "Decisions",
        "Decision",
        "Summary",
        "Attendees",
        "Attendee",
        "Participants",
        "Owner",
        "Owners",
        "Task",
        "Tasks",
        "Due",
        "Deadline",
        "Next",
        "Steps",
        "Step",
        "Key",
        "Points",
        "Point",
        "Notes",
        "Note",
        "Agenda",
        "Discussion",
        "Discussed",
        "To-do",
        "Todo",
        "TODO",
        "TBD",
        "N/A",
        "Title",
        "Subject",
        "Location",
        "Follow-up",
        "Follow",
        "Agreed",
        "Status",
        "None",
        "I",
        "OK",
        "Okay",
        "AM",
        "PM",
        "Team",
        "Overview",
        "Conclusion",
        "Conclusions",
        "Outcome",
        "Outcomes",
        "Open",
        "Issues",
        "Issue",
        "Updates",
        "Update",
        "Highlights",
        "Present",
        "Absent",
        "Chair",
        "Responsible",
        "Assigned",
        "Statements",
        "Statement",
        "Introduction",
        "Closing",
        "Purpose",
        "Objective",
        "Objectives",
        "Goals",
        "Goal",
        "Background",
        "Context",
        "Details",
        "Remarks",
        "Comments",
        "Questions",
        "Other",
    ]
)
_CAP_WORD = re.compile(r"(?<![\w'])([A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z])(?![\w'])")
_NUMBER = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?:st|nd|rd|th)?(?![\w])")
_LIST_PREFIX = re.compile(r"^\s*(?:[#>*+\-\u2022]+|\d{1,3}[.)]|\(\d{1,3}\)|[a-hA-H][.)])\s*", re.M)
_SENT_START = re.compile(r"(?:^|[.!?:;\u2022]\s+|\n)\W*$")


def _entities(text: str) -> tuple[list[str], list[str]]:
    """(capitalised words not at a sentence start, numbers) of ``text``. Headings (markdown,
    whole-line bold, lines ending in a colon) and short "Label:" prefixes are title case by
    convention, so their words are not taken for names; their numbers still count."""
    names: list[str] = []
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s[0] == "#" or s.endswith(":") or s.endswith(":**"):
            continue
        if s.startswith(("**", "__")) and s.endswith(("**", "__")):
            continue
        line = _LIST_PREFIX.sub("", s).replace("**", "").replace("__", "")
        head, sep, rest = line.partition(":")
        if sep and len(head.split()) <= 5:
            line = " " * (len(head) + 1) + rest
        for m in _CAP_WORD.finditer(line):
            before = line[: m.start()]
            if not before.strip() or _SENT_START.search(before):
                continue
            names.append(m.group(1))
    body = _LIST_PREFIX.sub("", text)
    numbers = [_norm_number(m.group(1)) for m in _NUMBER.finditer(body)]
    return names, [n for n in numbers if n]


def _word_supported(word: str, mf: _MeetingFeatures) -> bool:
    if word in mf.lower_tokens or stem(word) in mf.stems:
        return True
    parts = [p for p in re.split(r"[-']", word) if p]
    return len(parts) > 1 and all(p in mf.lower_tokens or stem(p) in mf.stems for p in parts)


class Faithfulness(_Component):
    name = "faithfulness"
    description = "names and numbers of the minutes occur in the transcript; content is grounded"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        meeting = _meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 0.0, "no meeting in the instance")
        of = _out_features(output)
        if of.words == 0:
            return ComponentScore(self.name, 0.0, "empty output: nothing grounded")
        mf = _meeting_features(meeting)
        names, numbers = _entities(output)
        checked: dict[str, bool] = {}
        for w in names:
            lw = w.lower()
            if lw in _IGNORE_CAPS or lw in checked:
                continue
            checked[lw] = _word_supported(lw, mf)
        for n in numbers:
            if n not in checked:
                checked[n] = n in mf.numbers
        for a in _minutes_of(output, parsed).action_items:
            if not a.owner:
                continue
            for w in tokens(a.owner):
                if w in GROUP_OWNERS or w in STOPWORDS or w in _IGNORE_CAPS or w in checked:
                    continue
                checked[w] = w in mf.lower_tokens or _owner_canon(a.owner)[0] == "role"
        bad = [k for k, ok in checked.items() if not ok]
        support = 1.0 - len(bad) / len(checked) if checked else 1.0
        content = [t for t in of.toks if t not in STOPWORDS and len(t) >= 3 and not t[0].isdigit()]
        if content:
            grounded = sum(1 for t in content if stem(t) in mf.stems or t in MINUTES_VOCAB) / len(
                content
            )
        else:
            grounded = 0.0
        factor = min(1.0, grounded / 0.6)
        score = support * factor
        fb = f"{len(checked) - len(bad)}/{len(checked)} names/numbers found in the transcript"
        if bad:
            fb += f"; not in the transcript: {_short(bad, 5, 30)}"
        if factor < 1.0:
            fb += f"; only {grounded:.0%} of the content words occur in the transcript"
        return ComponentScore(self.name, max(0.0, min(1.0, score)), fb)


# --------------------------------------------------------------------------------------------
# privacy


class Privacy(_Component):
    name = "privacy"
    description = (
        "0 if private data from the transcript (e-mail, phone, IBAN) leaks into the output"
    )

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        meeting = _meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 1.0, "no meeting in the instance")
        mf = _meeting_features(meeting)
        if not mf.private:
            return ComponentScore(self.name, 1.0, "no private data in the input")
        hits = leaked_private((item for _, item in mf.private), output)
        leaked = [raw for raw, item in mf.private if item in hits]
        if leaked:
            kinds = ", ".join(_mask(s) for s in leaked[:3])
            return ComponentScore(self.name, 0.0, f"leaked {len(leaked)} private item(s): {kinds}")
        return ComponentScore(self.name, 1.0, f"no leak of {len(mf.private)} private item(s)")


def _mask(s: str) -> str:
    if "@" in s:
        return "an e-mail address"
    if sum(c.isdigit() for c in s) >= 7:
        return "a phone/account number"
    return "a private string"


# --------------------------------------------------------------------------------------------


def component_registry() -> dict[str, RewardComponent]:
    """All reward components of the task, by name (fresh instances)."""
    comps: list[RewardComponent] = [
        Completeness(),
        Format(),
        ActionCount(),
        OwnerAccuracy(),
        Conciseness(),
        Faithfulness(),
        Privacy(),
    ]
    return {c.name: c for c in comps}


def meeting_aliases(meeting: Meeting) -> dict[str, str]:
    """The owner aliases of a meeting (cached), for ``match_action_items``."""
    return _meeting_features(meeting).aliases
