"""What a meeting is about, read from its transcript alone: the salient content words that
reference-free completeness (R1 on an unlabelled meeting) checks the minutes for.

A meeting without ground-truth topics (real, not synthetic) and without a reference summary
(unlabelled: the setting where labels are scarce) still has a transcript. Its topics are the
content words the participants keep coming back to: each word is reduced to its stem, and
scored by how often it is said times the square root of how many speakers say it (a word one
person repeats is less of a shared topic than one everybody uses). Stop words, the minutes'
own vocabulary, conversational fillers ("yeah", "gonna", "basically", ...) and words under four
letters are never topics. The ``k`` best stems (ties by first mention) are
the meeting's salient terms.

Pure Python and deterministic: a meeting's terms depend on its transcript only.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable
from importlib.resources import files

# words people say in any meeting (data/salience.json): backchannels, hedges, generic verbs and
# nouns, number words
FILLERS = frozenset(
    json.loads(files("evotrainer.tasks.meetings").joinpath("data", "salience.json").read_text())[
        "fillers"
    ]
)
MIN_LETTERS = 4


def transcript_terms(
    turns: Iterable[tuple[str, str]],
    tokens: Callable[[str], list[str]],
    stem: Callable[[str], str],
    excluded: frozenset[str],
    k: int = 15,
) -> list[str]:
    """The ``k`` most salient stems of a transcript given as (speaker, text) turns.
    ``tokens``/``stem`` are the reward's own tokenizer and stemmer (so the terms match the
    minutes the same way every other lexical component does); ``excluded`` are words that are
    never topics (stop words, the minutes' vocabulary)."""
    counts: Counter[str] = Counter()
    speakers: dict[str, set[str]] = {}
    first: dict[str, int] = {}
    position = 0
    for speaker, text in turns:
        for word in tokens(text):
            position += 1
            if not _content(word, excluded):
                continue
            s = stem(word)
            counts[s] += 1
            speakers.setdefault(s, set()).add(speaker)
            first.setdefault(s, position)
    ranked = sorted(counts, key=lambda s: (-counts[s] * math.sqrt(len(speakers[s])), first[s]))
    return ranked[:k]


def _content(word: str, excluded: frozenset[str]) -> bool:
    """A word that may name a topic: long enough, a word (no digits, no contraction)."""
    return (
        len(word) >= MIN_LETTERS and word.isalpha() and word not in excluded and word not in FILLERS
    )
