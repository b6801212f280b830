"""Sentence and paragraph handling shared by the operators and by repair.

A policy text is read as paragraphs (separated by a blank line). A one-line paragraph is split
into sentences; a multi-line paragraph (a list, a template) is kept as its lines, so operators
move whole list items and never reflow a layout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A sentence ends with . ! or ?, optionally followed by closing quotes/brackets, then whitespace,
# then something that can start a sentence.
_SENT_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Z0-9])")
_ABBREVIATIONS = {"e.g", "i.e", "vs", "mr", "mrs", "ms", "dr", "no", "approx", "cf", "st", "fig"}
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")

# Words that make a sentence lean on the one before it (bad as a text's first sentence).
DEPENDENT_STARTS = frozenset(
    "then finally also this it they these that those afterwards next lastly however "  # noqa: SIM905
    "moreover furthermore additionally otherwise so and but or thus therefore".split()
)


def split_sentences(line: str) -> list[str]:
    """Split one line of prose into sentences (abbreviations such as "e.g." do not end one)."""
    line = line.strip()
    if not line:
        return []
    out: list[str] = []
    start = 0
    for m in _SENT_END.finditer(line):
        before = line[start : m.start()].split()
        last = before[-1].lower().rstrip(".") if before else ""
        if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha() and m.group(0) == "."):
            continue
        out.append(line[start : m.end()].strip())
        start = m.end()
    rest = line[start:].strip()
    if rest:
        out.append(rest)
    return out


def is_list_item(line: str) -> bool:
    return bool(_LIST_ITEM.match(line))


@dataclass
class Doc:
    """A text as paragraphs of units (sentences, or lines for multi-line paragraphs)."""

    paragraphs: list[list[str]]
    multiline: list[bool]

    @classmethod
    def parse(cls, text: str) -> Doc:
        paragraphs: list[list[str]] = []
        multiline: list[bool] = []
        for block in re.split(r"\n\s*\n", text.strip()):
            lines = [ln.strip() for ln in block.split("\n") if ln.strip()]
            if not lines:
                continue
            if len(lines) == 1:
                paragraphs.append(split_sentences(lines[0]))
                multiline.append(False)
            else:
                paragraphs.append(lines)
                multiline.append(True)
        return cls(paragraphs, multiline)

    def render(self) -> str:
        blocks = []
        for units, multi in zip(self.paragraphs, self.multiline, strict=True):
            units = [u for u in units if u.strip()]
            if units:
                blocks.append(("\n" if multi else " ").join(units))
        return "\n\n".join(blocks)

    def sentences(self) -> list[str]:
        return [u for p in self.paragraphs for u in p]

    def prose_indices(self) -> list[int]:
        """Indices of the one-line (prose) paragraphs."""
        return [i for i, m in enumerate(self.multiline) if not m]


def normalise(sentence: str) -> str:
    """Comparison key of a sentence: lower case letters and digits only."""
    return " ".join(re.findall(r"[a-z0-9]+", sentence.lower()))


def word_set(sentence: str) -> set[str]:
    return set(normalise(sentence).split())


def near_duplicate(a: str, b: str, threshold: float = 0.8) -> bool:
    """Same sentence up to case/punctuation, or word-set Jaccard similarity >= threshold."""
    na, nb = normalise(a), normalise(b)
    if na == nb:
        return True
    wa, wb = set(na.split()), set(nb.split())
    if not wa or not wb:
        return False
    return len(wa & wb) / len(wa | wb) >= threshold


def dedupe(sentences: list[str]) -> list[str]:
    """Drop sentences that repeat (or nearly repeat) an earlier one, keeping order."""
    kept: list[str] = []
    for s in sentences:
        if not any(near_duplicate(s, k) for k in kept):
            kept.append(s)
    return kept


def capitalise_first(text: str) -> str:
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1 :]
        if ch.isalnum():
            return text
    return text


def decapitalise_first(text: str) -> str:
    """Lower-case the first word unless it looks like a name or acronym ("I", "AI", "Owner's")."""
    words = text.split(maxsplit=1)
    if not words:
        return text
    first = words[0]
    if first == "I" or (len(first) > 1 and first[1:2].isupper()) or first.startswith("I'"):
        return text
    return first[0].lower() + text[1:]


def first_word(sentence: str) -> str:
    m = re.search(r"[A-Za-z]+", sentence)
    return m.group(0).lower() if m else ""


def ensure_period(sentence: str) -> str:
    s = sentence.rstrip()
    if not s or s[-1] in ".!?:" or re.search(r"[.!?][\"'”’)\]]+$", s):
        return s
    return s.rstrip(",;") + "."
