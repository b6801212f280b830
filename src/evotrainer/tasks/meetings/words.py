"""The words of minutes, as the meeting task's rewards and metrics read them: tokens, a light
stemmer (plural -s/-es/-ies, -ing, -ed, final -e, doubled final consonant: "offers"/"offer",
"hiring"/"hire", "planned"/"plan"), content stems, near-miss matching (rapidfuzz ratio >= 85) and
spelled-out numbers. The word lists are data (data/rewards.json: each list's "about" says what
it is for)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib.resources import files

from rapidfuzz import fuzz

WORD_LISTS = json.loads(
    files("evotrainer.tasks.meetings").joinpath("data", "rewards.json").read_text(encoding="utf-8")
)["data"]

STOPWORDS = frozenset(WORD_LISTS["stopwords"])
MINUTES_VOCAB = frozenset(WORD_LISTS["minutes_vocab"])
GENERIC_TASK_WORDS = frozenset(WORD_LISTS["generic_task_words"])
GROUP_OWNERS = frozenset(WORD_LISTS["group_owners"])

_TOKEN = re.compile(r"[a-z0-9]+(?:['.,][a-z0-9]+)*")
_DIGIT_TOKEN = re.compile(r"\d")


def norm_number(tok: str) -> str:
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
        return norm_number(w)
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


def fuzzy_in(word: str, vocab: Iterable[str], cutoff: float = 85.0) -> bool:
    if len(word) < 5 or word[0].isdigit():
        return False
    for v in vocab:
        if abs(len(v) - len(word)) <= 2 and v[:1] == word[:1] and fuzz.ratio(word, v) >= cutoff:
            return True
    return False


def has_word(word: str, vocab: set[str] | frozenset[str]) -> bool:
    """``word`` (a stem) is in ``vocab`` exactly or as a near-miss (rapidfuzz ratio >= 85)."""
    return word in vocab or fuzzy_in(word, vocab)


_NUMBER_WORDS = {w: i for i, w in enumerate(WORD_LISTS["number_words"])}
_TENS = {w: 10 * (i + 2) for i, w in enumerate(WORD_LISTS["tens"])}
_SCALE = dict(WORD_LISTS["scale"])
_ORDINALS = dict(WORD_LISTS["ordinals"])


def spoken_numbers(toks: Sequence[str]) -> set[str]:
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
