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
- ``non_repetition``: the answer's readability (policy/repetition.py): 1 for minutes as free of
  repetition as a person's, falling to 0 for a loop; 0 for fewer than 10 words; times the share
  of sentences without a copied template blank (placeholders.minutes_readability).
- ``faithfulness``: share of the minutes' names (capitalised words not at sentence start) and
  numbers, plus action-item owners, that occur in the transcript (instruction words such as
  "Meeting", "Minutes", "Action" are ignored); times a grounding factor (share of content words
  found in the transcript, full credit from 60 %) so garbage scores low. Empty output: 0.
- ``privacy``: 0 if any ``meta["private_data"]`` string (e-mail, phone, IBAN...) from the
  transcript appears in the output (case-, space- and punctuation-insensitive for numbers), else 1.

``DEFAULT_WEIGHTS`` is the SPEC's initial weight vector over R1, R2, R3.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from evotrainer.policy.repetition import (
    LOOP_DISTINCT4,
    MIN_CONTENT_WORDS,
    distinct_ngrams,
    readability,
    repeated_unit_share,
    words,
)
from evotrainer.private_data import leaked as leaked_private
from evotrainer.tasks.base import RewardComponent
from evotrainer.tasks.meetings.facts import (
    MeetingFeatures,
    meeting_features,
    meeting_of,
    minutes_of,
    out_features,
)
from evotrainer.tasks.meetings.matching import (
    match_action_items,
    owner_canon,
    reference_action_items,
)
from evotrainer.tasks.meetings.placeholders import blank_share
from evotrainer.tasks.meetings.schema import Meeting
from evotrainer.tasks.meetings.words import (
    GROUP_OWNERS,
    MINUTES_VOCAB,
    STOPWORDS,
    WORD_LISTS,
    has_word,
    norm_number,
    stem,
    tokens,
)
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
    "meeting_aliases",
]


DEFAULT_WEIGHTS: dict[str, float] = {"completeness": 0.5, "format": 0.2, "action_count": 0.3}


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
            # each subclass defines score; the base declares none
            cls.score = _safe(cls.name, cls.__dict__["score"])  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# --------------------------------------------------------------------------------------------
# R1 completeness


class Completeness(_Component):
    name = "completeness"
    description = "R1: share of the meeting's ground-truth topics that the minutes cover"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        meeting = meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 0.0, "no meeting in the instance")
        if not output.strip():
            return ComponentScore(self.name, 0.0, "empty output: no topic covered")
        mf = meeting_features(meeting)
        of = out_features(output)
        vocab = of.stems
        if mf.topic_terms:
            covered: list[str] = []
            missing: list[str] = []
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
        m = minutes_of(output, parsed)
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
        n = len(minutes_of(output, parsed).action_items)
        ok = self.low <= n <= self.high
        fb = f"{n} action items" + ("" if ok else f" (want {self.low}-{self.high})")
        return ComponentScore(self.name, 1.0 if ok else 0.0, fb)


class OwnerAccuracy(_Component):
    name = "owner_accuracy"
    description = "action items' owner and task against the ground truth (soft F1)"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        meeting = meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 0.0, "no meeting in the instance")
        truth = reference_action_items(meeting)
        if truth is None:
            return ComponentScore(
                self.name, 0.0, "no ground truth: the meeting has no action-item annotation"
            )
        pred = list(minutes_of(output, parsed).action_items)
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
        matches = match_action_items(pred, truth, meeting_features(meeting).aliases)
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


def _target_band(meeting: Meeting, mf: MeetingFeatures) -> tuple[float, float]:
    n_t, n_a, n_d = len(meeting.topics), len(meeting.action_truth), len(meeting.decisions)
    expected: float
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
        meeting = meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 0.0, "no meeting in the instance")
        of = out_features(output)
        if of.words == 0:
            return ComponentScore(self.name, 0.0, "empty output")
        mf = meeting_features(meeting)
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
# non-repetition


class NonRepetition(_Component):
    name = "non_repetition"
    description = (
        "minutes that do not repeat themselves: distinct word 4-grams and sentences said once, "
        "none of them a copied template blank such as '[2 paragraphs]' (the meeting task's "
        "readability; 0 for fewer than 10 words)"
    )

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        if len(words(output)) < MIN_CONTENT_WORDS:
            return ComponentScore(self.name, 0.0, "no content (fewer than 10 words)")
        # placeholders.minutes_readability, its two parts kept apart for the notes
        plain, blanks = readability(output), blank_share(output)
        value = plain * (1.0 - blanks)
        d4, rep = distinct_ngrams(output, 4), repeated_unit_share(output)
        notes = [f"{d4:.0%} distinct 4-grams"]
        if rep:
            notes.append(f"{rep:.0%} of the sentences repeat an earlier one")
        if blanks:
            notes.append(f"{blanks:.0%} of the sentences hold a template blank")
        if plain < 1.0:  # repetition, not the blanks
            notes.append("a repetition loop" if d4 < LOOP_DISTINCT4 else "repetitive")
        return ComponentScore(self.name, value, "; ".join(notes))


# --------------------------------------------------------------------------------------------
# faithfulness

_IGNORE_CAPS = frozenset(w.lower() for w in WORD_LISTS["ignore_caps"])
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
    numbers = [norm_number(m.group(1)) for m in _NUMBER.finditer(body)]
    return names, [n for n in numbers if n]


def _word_supported(word: str, mf: MeetingFeatures) -> bool:
    if word in mf.lower_tokens or stem(word) in mf.stems:
        return True
    parts = [p for p in re.split(r"[-']", word) if p]
    return len(parts) > 1 and all(p in mf.lower_tokens or stem(p) in mf.stems for p in parts)


class Faithfulness(_Component):
    name = "faithfulness"
    description = "names and numbers of the minutes occur in the transcript; content is grounded"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        meeting = meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 0.0, "no meeting in the instance")
        of = out_features(output)
        if of.words == 0:
            return ComponentScore(self.name, 0.0, "empty output: nothing grounded")
        mf = meeting_features(meeting)
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
        for a in minutes_of(output, parsed).action_items:
            if not a.owner:
                continue
            for w in tokens(a.owner):
                if w in GROUP_OWNERS or w in STOPWORDS or w in _IGNORE_CAPS or w in checked:
                    continue
                checked[w] = w in mf.lower_tokens or owner_canon(a.owner)[0] == "role"
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
        meeting = meeting_of(instance)
        if meeting is None:
            return ComponentScore(self.name, 1.0, "no meeting in the instance")
        if not words(output):  # keeping quiet is not minutes that keep a secret
            return ComponentScore(self.name, 0.0, "empty output: no minutes")
        mf = meeting_features(meeting)
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
        NonRepetition(),
        Faithfulness(),
        Privacy(),
    ]
    return {c.name: c for c in comps}


def meeting_aliases(meeting: Meeting) -> dict[str, str]:
    """The owner aliases of a meeting (cached), for ``match_action_items``."""
    return meeting_features(meeting).aliases
