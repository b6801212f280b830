"""Sentence reordering and restructuring.

One edit per child, drawn among those that apply: swap two sentences, move one to the front or
the end, split a long sentence at ", and" / "; " / ", then", join two short ones, or swap two
paragraphs. A sentence that leans on the one before it ("Then ...", "This ...") is never moved
to the front.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from evotrainer.operators.base import BaseOperator, OperatorContext
from evotrainer.operators.text import (
    DEPENDENT_STARTS,
    Doc,
    capitalise_first,
    decapitalise_first,
    ensure_period,
    first_word,
)
from evotrainer.policy.genome import PolicyGenome

# Split points; the connective words after "and" ("then", "finally") stay with the new sentence.
_SPLIT_AT = re.compile(r",\s+and\s+|;\s+|,\s+(?=then\s)")
_ROLE = re.compile(r"^(?:you are|you're|as an? |act as)", re.I)
_LONG = 90  # a sentence this long may be split
_SHORT = 70  # two sentences this short may be joined
_MIN_PART_WORDS = 3

_DETERMINISTIC = frozenset({"split", "join"})

Edit = Callable[[Doc, random.Random], str | None]


def _starts_ok(units: list[str], before: list[str]) -> bool:
    """The first unit does not lean on another, and a leading role sentence ("You are ...")
    keeps the lead."""
    if not units or first_word(units[0]) in DEPENDENT_STARTS:
        return False
    return not (before and _ROLE.match(before[0])) or units[0] == before[0]


def _fixed_head(units: list[str]) -> int:
    """1 when the first unit is a role sentence that must stay first, else 0."""
    return 1 if units and _ROLE.match(units[0]) else 0


def _movable(doc: Doc) -> list[int]:
    """Paragraphs with at least two units that may change places."""
    return [i for i, p in enumerate(doc.paragraphs) if len(p) - _fixed_head(p) >= 2]


def _swap(doc: Doc, rng: random.Random) -> str | None:
    idx = _movable(doc)
    if not idx:
        return None
    p = rng.choice(idx)
    units = doc.paragraphs[p]
    i, j = sorted(rng.sample(range(_fixed_head(units), len(units)), 2))
    new = units[:]
    new[i], new[j] = new[j], new[i]
    if not _starts_ok(new, units):
        return None
    doc.paragraphs[p] = new
    return f"swap sentences {i + 1} and {j + 1}"


def _move(doc: Doc, rng: random.Random) -> str | None:
    idx = _movable(doc)
    if not idx:
        return None
    p = rng.choice(idx)
    units = doc.paragraphs[p][:]
    head = _fixed_head(units)
    to_front = rng.random() < 0.5
    i = rng.randrange(head + 1, len(units)) if to_front else rng.randrange(head, len(units) - 1)
    unit = units.pop(i)
    if to_front:
        units.insert(head, unit)
    else:
        units.append(unit)
    if not _starts_ok(units, doc.paragraphs[p]):
        return None
    doc.paragraphs[p] = units
    where = "front" if to_front else "end"
    return f"move sentence {i + 1} to the {where}"


def _split(doc: Doc, rng: random.Random) -> str | None:
    spots = []
    for p in doc.prose_indices():
        for i, s in enumerate(doc.paragraphs[p]):
            if len(s) < _LONG:
                continue
            for m in _SPLIT_AT.finditer(s):
                head, tail = s[: m.start()], s[m.end() :]
                if len(head.split()) >= _MIN_PART_WORDS and len(tail.split()) >= _MIN_PART_WORDS:
                    spots.append((p, i, m.start(), m.end()))
    if not spots:
        return None
    p, i, a, b = rng.choice(spots)
    s = doc.paragraphs[p][i]
    head = ensure_period(s[:a].rstrip())
    tail = capitalise_first(s[b:].lstrip())
    doc.paragraphs[p][i : i + 1] = [head, tail]
    return f"split sentence {i + 1} at {s[a:b].strip()!r}"


def _join(doc: Doc, rng: random.Random) -> str | None:
    spots = []
    for p in doc.prose_indices():
        units = doc.paragraphs[p]
        for i in range(len(units) - 1):
            a, b = units[i], units[i + 1]
            short = len(a) <= _SHORT and len(b) <= _SHORT
            if (
                short
                and a.endswith(".")
                and first_word(b) not in DEPENDENT_STARTS
                and not (_ROLE.match(a) or _ROLE.match(b))  # "You are X" + an order: no
                and ", and " not in a + b  # no chains "X, and Y, and Z"
            ):
                spots.append((p, i))
    if not spots:
        return None
    p, i = rng.choice(spots)
    a, b = doc.paragraphs[p][i], doc.paragraphs[p][i + 1]
    joined = f"{a[:-1]}, and {decapitalise_first(b)}"
    doc.paragraphs[p][i : i + 2] = [joined]
    return f"join sentences {i + 1} and {i + 2}"


def _swap_paragraphs(doc: Doc, rng: random.Random) -> str | None:
    if len(doc.paragraphs) < 2:
        return None
    i, j = sorted(rng.sample(range(len(doc.paragraphs)), 2))
    first = doc.paragraphs[0]
    doc.paragraphs[i], doc.paragraphs[j] = doc.paragraphs[j], doc.paragraphs[i]
    doc.multiline[i], doc.multiline[j] = doc.multiline[j], doc.multiline[i]
    if not _starts_ok(doc.paragraphs[0], first):
        return None
    return f"swap paragraphs {i + 1} and {j + 1}"


EDITS: dict[str, Edit] = {
    "swap": _swap,
    "move": _move,
    "split": _split,
    "join": _join,
    "swap_paragraphs": _swap_paragraphs,
}


class ReorderOperator(BaseOperator):
    """Reorder or restructure the sentences of the system instruction."""

    name = "reorder"
    arity = 1
    uses_llm = False
    targets = ("system",)

    def __init__(self, tries: int = 6) -> None:
        self.tries = tries

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        text = parent.components["system"]
        names = list(EDITS)
        for _ in range(self.tries):
            if not names:
                break
            edit_name = ctx.rng.choice(names)
            doc = Doc.parse(text)
            what = EDITS[edit_name](doc, ctx.rng)
            if what is None:
                if edit_name in _DETERMINISTIC:  # not applicable to this text: don't retry
                    names.remove(edit_name)
                continue
            new = doc.render()
            if new == text:
                continue
            child = self.child(parents, {**parent.components, "system": new}, ctx, what)
            if child is not None:
                return child
        return None
