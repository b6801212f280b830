"""How repetitive a text is: the one definition behind the loop cut (policy/postprocess.py),
the non-repetition reward, the readability objective, the return rule's loop share and every
table's degeneracy columns (docs/readability.md).

A text is read as words (runs of letters and digits, lower-cased) and as *units*: its lines, and the
sentences inside each line. Measures:

- ``distinct_ngrams(text, n)``: distinct word n-grams / all word n-grams (human minutes of AMI
  and ICSI: 0.99-1.00 at n = 4; a repetition loop: 0.1-0.3);
- ``repeated_unit_share(text)``: the share of units (of at least ``MIN_UNIT_WORDS`` words) that
  repeat an earlier unit word for word;
- ``repetition_free(text)``: min(distinct 4-grams, 1 - repeated share);
- ``readability(text)``: ``repetition_free`` over ``READABLE`` (0.9), capped at 1: 1 for a text
  as free of repetition as human minutes, falling linearly to 0 for a text that only repeats
  itself, so that nothing gains by being shorter once it reads like a person's text; 0 for a
  text of fewer than ``MIN_CONTENT_WORDS`` words: an answer with no content is not readable
  minutes, it is no minutes;
- ``is_loop(text)``: distinct 4-grams below ``LOOP_DISTINCT4`` (0.5): the loop share of a set
  of answers is the share of answers that are loops.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")  # letters and digits of any script
SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
LOOP_DISTINCT4 = 0.5
READABLE = 0.9
MIN_CONTENT_WORDS = 10
MIN_UNIT_WORDS = 3


def words(text: str) -> list[str]:
    """The words of ``text``, lower-cased: runs of letters and digits (an apostrophe inside)."""
    return [w.lower() for w in WORD.findall(text)]


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def distinct_ngrams(text: str, n: int = 4) -> float:
    """Distinct word n-grams over all word n-grams; 0.0 without words, 1.0 for a text shorter
    than n words (nothing in it can repeat)."""
    w = words(text)
    if not w:
        return 0.0
    grams = ngrams(w, n)
    return len(set(grams)) / len(grams) if grams else 1.0


def units(text: str) -> list[str]:
    """The lines of ``text``, each cut into its sentences, blank ones left out."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(s for s in SENTENCE_END.split(line.strip()) if s.strip())
    return out


def unit_key(unit: str) -> str:
    """What two units are compared by: their words, in order."""
    return " ".join(words(unit))


def repeated_unit_share(text: str) -> float:
    """The share of units (of at least MIN_UNIT_WORDS words) that repeat an earlier one."""
    seen: set[str] = set()
    counted = repeated = 0
    for u in units(text):
        key = unit_key(u)
        if len(key.split()) < MIN_UNIT_WORDS:
            continue
        counted += 1
        if key in seen:
            repeated += 1
        seen.add(key)
    return repeated / counted if counted else 0.0


def repetition_free(text: str) -> float:
    """min(distinct 4-grams, 1 - repeated unit share)."""
    return min(distinct_ngrams(text, 4), 1.0 - repeated_unit_share(text))


def readability(text: str) -> float:
    """min(1, repetition_free / READABLE); 0 for fewer than MIN_CONTENT_WORDS words."""
    if len(words(text)) < MIN_CONTENT_WORDS:
        return 0.0
    return min(1.0, repetition_free(text) / READABLE)


def is_loop(text: str) -> bool:
    """A repetition loop: fewer than LOOP_DISTINCT4 of its word 4-grams are distinct."""
    return distinct_ngrams(text, 4) < LOOP_DISTINCT4


@dataclass(frozen=True)
class Degeneracy:
    """The degeneracy columns of a set of answers (every table of results shows them)."""

    n: int
    distinct4: float  # mean share of distinct word 4-grams
    loop_share: float  # share of answers with distinct-4 < LOOP_DISTINCT4
    repeated_units: float  # mean share of repeated sentences and lines
    words: float  # mean words per answer

    def to_json(self) -> dict[str, float | int]:
        return {
            "n": self.n,
            "distinct4": round(self.distinct4, 4),
            "loop_share": round(self.loop_share, 4),
            "repeated_units": round(self.repeated_units, 4),
            "words": round(self.words, 1),
        }


def degeneracy(texts: Iterable[str]) -> Degeneracy:
    """The degeneracy columns of ``texts`` (an empty answer counts: distinct-4 0, a loop)."""
    rows = [
        (distinct_ngrams(t, 4), repeated_unit_share(t), len(words(t)))
        for t in (x if isinstance(x, str) else "" for x in texts)
    ]
    n = len(rows)
    if not n:
        return Degeneracy(0, 0.0, 0.0, 0.0, 0.0)
    return Degeneracy(
        n=n,
        distinct4=sum(r[0] for r in rows) / n,
        loop_share=sum(1 for r in rows if r[0] < LOOP_DISTINCT4) / n,
        repeated_units=sum(r[1] for r in rows) / n,
        words=sum(r[2] for r in rows) / n,
    )
