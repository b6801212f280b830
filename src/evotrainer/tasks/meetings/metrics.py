"""Validation metric of the meeting-minutes task: judges minutes against human references.

Row keys (``MinutesMetric.keys``):

- ``rouge1``, ``rouge2``, ``rougeL``: F-measure (rouge-score package, Porter stemming) against
  the reference text = summary + decisions + action items, one per line ("*NA*" placeholders are
  dropped by the loader). None when the meeting has no reference text.
- ``action_item_precision`` / ``action_item_recall`` / ``action_item_f1``: one-to-one fuzzy
  matching of the minutes' action items to the reference items (``rewards.match_action_items``
  in strict mode). A pair matches when the owner matches and the task similarity (content-word
  cosine with light stemming and rapidfuzz near-misses) is >= 0.25. The AMI references are
  sentences such as "The industrial designer will work on the working design" or "The team will
  decide how the user interface will work": they are parsed into owner ("industrial designer",
  "team") and task; owners match by role ("Industrial Designer (C)", "ID", "the industrial
  designer", a speaker letter via meta.speaker_roles), by name (first/last name, rapidfuzz), a
  group reference ("the team", "they", "all participants") is matched by a group owner, and an
  owner-less predicted item counts when its task text names the reference owner. None when the
  meeting has no action-item annotation (``has_action_items`` False, e.g. ICSI). Empty reference
  list (``empty_reference``): "skip" (default): None, as without annotation; "abstain": 1.0 for
  minutes that list no item (and have content: at least 10 words), a non-empty prediction
  scores precision 0 (recall 1, F1 0).
- ``decision_recall``: share of reference decisions matched by some decision, topic, bullet,
  table row or sentence of the minutes: >= 60 % of the decision's content words (stemmed, with
  rapidfuzz near-misses) occur in one such line. None when the meeting has no reference decisions.
- ``n_action_items``: the number of action items found in the minutes.
- ``readability``: 1 for minutes as free of repetition as a person's, down to 0 for a loop, 0 for
  fewer than 10 words (policy/repetition.py), times the share of sentences without a copied
  template blank such as "[2 paragraphs]" (placeholders.minutes_readability); s_val weighs it,
  so a looped answer scores lower than its de-looped version. ``distinct4`` (share of distinct word 4-grams) and ``words`` are
  reported beside it.

``aggregate(rows)`` is the mean of each key over the rows where it is not None. ``s_val`` combines
aggregates into one number with weights.

ROUGE costs 10-40 ms per output (ROUGE-L's LCS in pure Python); it only runs on validation.
Outputs longer than ROUGE_MAX_CHARS are cut before ROUGE.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from evotrainer.policy.repetition import MIN_CONTENT_WORDS, distinct_ngrams, words
from evotrainer.tasks.base import combine_s_val
from evotrainer.tasks.meetings.lines import strip_markdown
from evotrainer.tasks.meetings.matching import match_action_items, reference_action_items
from evotrainer.tasks.meetings.parser import Minutes, parse_minutes
from evotrainer.tasks.meetings.placeholders import minutes_readability
from evotrainer.tasks.meetings.rewards import meeting_aliases
from evotrainer.tasks.meetings.schema import Meeting
from evotrainer.tasks.meetings.words import content_stems, has_word
from evotrainer.types import Instance

# one implementation of s_val for the engine and the task: the engine's
s_val = combine_s_val

__all__ = ["MinutesMetric", "s_val", "reference_text", "DEFAULT_SVAL_WEIGHTS"]

KEYS = (
    "rouge1",
    "rouge2",
    "rougeL",
    "action_item_precision",
    "action_item_recall",
    "action_item_f1",
    "decision_recall",
    "n_action_items",
    "readability",
    "distinct4",
    "words",
)

# A reasonable default for s_val (the harness config may override it).
DEFAULT_SVAL_WEIGHTS: dict[str, float] = {
    "rouge1": 0.15,
    "rouge2": 0.1,
    "rougeL": 0.15,
    "action_item_f1": 0.25,
    "decision_recall": 0.15,
    "readability": 0.2,
}

# ROUGE-L is quadratic: a runaway output is cut to this many characters before ROUGE (a 384-token
# answer is ~1,500 characters, so real outputs are never cut).
ROUGE_MAX_CHARS = 20_000
_LINE_SPLIT = re.compile(r"\n+|(?<=[.!?;])\s+")
_scorer_lock = threading.Lock()
_scorer: Any = None


def _rouge() -> Any:
    global _scorer
    if _scorer is None:
        with _scorer_lock:
            if _scorer is None:
                # lazy: start-up time (rouge_score loads nltk, about 1.5 s)
                from rouge_score import rouge_scorer

                _scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    return _scorer


def reference_text(meeting: Meeting) -> str:
    """The reference minutes for ROUGE: summary, decisions and action items, one per line."""
    parts = [*meeting.summary, *meeting.decisions]
    if meeting.action_truth and not meeting.action_items:
        parts += [a.as_text() for a in meeting.action_truth]
    else:
        parts += list(meeting.action_items)
    return "\n".join(p.strip() for p in parts if p and p.strip())


def _candidate_lines(m: Minutes) -> list[str]:
    lines = [*m.decisions, *m.topics, *m.items]
    for chunk in _LINE_SPLIT.split(m.text):
        chunk = strip_markdown(chunk)
        if len(chunk) > 3:
            lines.append(chunk)
    return lines


def _decision_matched(decision: str, cand_stems: list[frozenset[str]], need: float = 0.6) -> bool:
    words = set(content_stems(decision))
    if not words:
        return False
    n = len(words)
    for cs in cand_stems:
        exact = words & cs
        if not exact:
            continue
        if len(exact) / n >= need:
            return True
        hit = len(exact) + sum(1 for w in words - exact if has_word(w, cs))
        if hit / n >= need:
            return True
    return False


EMPTY_REFERENCE_ITEMS = ("abstain", "skip")  # action-item scores where the reference has none


class MinutesMetric:
    """ROUGE, action-item P/R/F1 and decision recall of minutes against human references."""

    keys: tuple[str, ...] = KEYS
    reference_free_keys: tuple[str, ...] = ("n_action_items", "readability", "distinct4", "words")

    def __init__(
        self,
        min_task_similarity: float = 0.25,
        decision_match: float = 0.6,
        empty_reference: str = "skip",
    ) -> None:
        if empty_reference not in EMPTY_REFERENCE_ITEMS:
            raise ValueError(f"empty_reference must be one of {EMPTY_REFERENCE_ITEMS}")
        self.min_task_similarity = min_task_similarity
        self.decision_match = decision_match
        self.empty_reference = empty_reference

    def score(self, instance: Instance, output: str, parsed: Any) -> dict[str, float | None]:
        row: dict[str, float | None] = dict.fromkeys(self.keys)
        meeting = getattr(instance, "payload", None)
        if not isinstance(meeting, Meeting):
            return row
        text = output if isinstance(output, str) else ""
        m = parsed if isinstance(parsed, Minutes) else parse_minutes(text)
        row["n_action_items"] = float(len(m.action_items))
        row["readability"] = minutes_readability(text)
        row["distinct4"] = distinct_ngrams(text, 4)
        row["words"] = float(len(words(text)))
        content = len(words(text)) >= MIN_CONTENT_WORDS

        ref = reference_text(meeting)
        if ref:
            if text.strip():
                sc = _rouge().score(ref, text[:ROUGE_MAX_CHARS])
                row["rouge1"] = sc["rouge1"].fmeasure
                row["rouge2"] = sc["rouge2"].fmeasure
                row["rougeL"] = sc["rougeL"].fmeasure
            else:
                row["rouge1"] = row["rouge2"] = row["rougeL"] = 0.0

        truth = reference_action_items(meeting)
        if truth is not None and (truth or self.empty_reference == "abstain"):
            pred = list(m.action_items)
            if not truth:  # abstaining counts only for minutes with content
                p = 1.0 if not pred and content else 0.0
                row["action_item_precision"] = p
                row["action_item_recall"] = 1.0
                row["action_item_f1"] = p
            elif not pred:
                row["action_item_precision"] = 0.0
                row["action_item_recall"] = 0.0
                row["action_item_f1"] = 0.0
            else:
                matches = match_action_items(
                    pred,
                    truth,
                    meeting_aliases(meeting),
                    strict=True,
                    min_task=self.min_task_similarity,
                )
                precision = len(matches) / len(pred)
                recall = len(matches) / len(truth)
                f1 = 0.0 if not matches else 2 * precision * recall / (precision + recall)
                row["action_item_precision"] = precision
                row["action_item_recall"] = recall
                row["action_item_f1"] = f1

        if meeting.decisions:
            if text.strip():
                cands = [frozenset(content_stems(c)) for c in _candidate_lines(m)]
                cands = [c for c in cands if c]
                hits = sum(
                    1 for d in meeting.decisions if _decision_matched(d, cands, self.decision_match)
                )
                row["decision_recall"] = hits / len(meeting.decisions)
            else:
                row["decision_recall"] = 0.0
        return row

    def aggregate(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        out: dict[str, float] = {}
        for k in self.keys:
            vals = [float(r[k]) for r in rows if r.get(k) is not None]
            if vals:
                out[k] = sum(vals) / len(vals)
        return out
