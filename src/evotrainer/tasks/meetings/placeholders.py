"""A template's blanks in a model's answer: the slots an output template or the model's own
habit puts where an action item's owner or task should be ("<owner>: <task>", "[insert action
item here]", "Owner: task"), or where a paragraph should be ("[2 paragraphs]", "<one paragraph:
summary of the meeting>"). The parser (parser.py) drops an action item that is only a blank,
so a copied template earns no action-item credit; the meeting task's readability counts the
sentences that hold a blank as unread (``blank_share``; issue 46)."""

from __future__ import annotations

import re
from collections.abc import Callable

from evotrainer.policy.postprocess import split_sentences, squeeze_blank_lines
from evotrainer.policy.repetition import readability, units, words
from evotrainer.tasks.meetings.words import WORD_LISTS

PLACEHOLDER_OWNER = frozenset(
    {"name", "owner", "person", "who", "[name]", "<name>", "x", "someone"}
)
PLACEHOLDER_TASK = frozenset(
    {"task", "action", "todo", "to-do", "[task]", "<task>", "description", "item", "action item"}
)
# a template's blank copied into the answer: "<owner>: <task>", "[Name] - [Task]", "{task}"
_BRACKETED = re.compile(r"<[^<>]{1,60}>|\[[^\[\]]{1,60}\]|\{[^{}]{1,60}\}")
# "[insert action item here]", "Insert task here", "(add more action items as needed)"
_INSERT_HERE = re.compile(
    r"^\W*(insert|enter|fill in|add more)\b.{0,40}\b(action items?|tasks?|items?|names?|owners?|"
    r"details|text)\b.{0,20}\b(here|as needed)\W*$",
    re.I,
)
# the words a slot is written in (data/rewards.json's template_slot_words): "[1 paragraph]",
# "<action item 1>", "[date]", "<one paragraph: summary of the meeting>" (a bracketed span of
# these words and numbers only is a blank; "[1]", "[12:05]", "[Mike]" are not)
_SLOT_WORDS = PLACEHOLDER_OWNER | PLACEHOLDER_TASK | frozenset(WORD_LISTS["template_slot_words"])
_SLOT_START = re.compile(r"^\W*(insert|enter|fill in|add|write|put)\b", re.I)
# "Owner: task", "Name - Action item": a template's labels with nothing filled in
# "[Mike]: book the room", "<Kate>: check prices", "[Owner]: send the slides" (a template's label)
_OWNER_BRACKETED = re.compile(r"^[\[<]([^\[\]<>]{1,40})[\]>]\s*:\s*(.+)$")
# "Owner: draft the plan": a template's owner label left unfilled before the task
_LABEL_PREFIX = re.compile(r"^(\w+)\s*:\s*(.+)$")
_LABELS_ONLY = re.compile(r"^(\w+)\s*[:\-\u2013\u2014]\s*(\w+(?: \w+)?)$")
# a slot written as a label with something after it: "- <owner>: Johno", "[Task]: send slides"
_LABEL_SLOT = re.compile(r"<([^<>]{1,60})>\s*:(?=\s*\w)|\[([^\[\]]{1,60})\]\s*:(?=\s*\w)")


def is_placeholder_owner(owner: str) -> bool:
    """An owner that is a template's label, not a person: "Name", "owner", "[Owner]", "<who>"."""
    o = owner.strip().lower()
    return o in PLACEHOLDER_OWNER or o.strip("<>[]{}() ") in PLACEHOLDER_OWNER


def is_placeholder(task: str, owner: str | None = None) -> bool:
    """A template's blank, not an action item: a placeholder task without a real owner
    ("Name: task"), only bracketed slots and punctuation, "insert ... here", or unfilled labels
    ("Owner: task"). Issue 46: evolved templates made the model copy "1. [insert action item
    here]" into its answers, which counted as action items."""
    if task.lower() in PLACEHOLDER_TASK and (owner is None or is_placeholder_owner(owner)):
        return True
    if _INSERT_HERE.match(task):
        return True
    m = _LABELS_ONLY.match(task)
    if m and m.group(1).lower() in PLACEHOLDER_OWNER and m.group(2).lower() in PLACEHOLDER_TASK:
        return True
    rest = _BRACKETED.sub("", task)
    return rest != task and not any(ch.isalnum() for ch in rest)


def is_blank_span(inner: str) -> bool:
    """The inside of a bracketed span is a template's slot: "insert/add/write ..." or only slot
    words and numbers with at least one slot word ("1 paragraph", "action item 1", "date").
    A one-letter span is not one: "- [x] task" is a checked box."""
    if _SLOT_START.match(inner):
        return True
    w = words(inner)
    if len(w) == 1 and len(w[0]) == 1:
        return False
    return (
        bool(w)
        and all(x in _SLOT_WORDS or x.isdigit() for x in w)
        and not all(x.isdigit() for x in w)
    )


def has_blank(unit: str) -> bool:
    """A sentence or line that holds a template's blank: a bracketed slot or "insert ... here"."""
    if _INSERT_HERE.match(unit):
        return True
    return any(is_blank_span(m.group(0)[1:-1]) for m in _BRACKETED.finditer(unit))


def blank_share(text: str) -> float:
    """The share of the sentences and lines of ``text`` that hold a template's blank (0 for a
    text without any)."""
    us = units(text)
    return sum(1 for u in us if has_blank(u)) / len(us) if us else 0.0


def minutes_readability(text: str) -> float:
    """The meeting task's readability: policy/repetition.py's ``readability`` times the share of
    sentences and lines without a template's blank, so minutes that copy "[2 paragraphs]" or
    "- <owner>: <task>" from their template score lower than the same minutes without them."""
    return readability(text) * (1.0 - blank_share(text))


def strip_blanks(text: str) -> str:
    """``text`` without its template's blanks (the post-processor's ``drop_blanks`` step,
    policy/postprocess.py): a slot used as a label before what fills it keeps its words
    ("- <owner>: Johno" -> "- Owner: Johno"); a sentence or line that still holds a blank goes
    ("- <action item 1>:", "Summary: [insert key statement here]"). Lines are kept otherwise as
    written."""
    out: list[str] = []
    for line in text.split("\n"):
        line = _LABEL_SLOT.sub(_label_words, line)
        if not has_blank(line):
            out.append(line)
            continue
        kept = "".join(s for s in split_sentences(line) if not has_blank(s)).rstrip()
        if words(kept):
            out.append(kept)
    return squeeze_blank_lines("\n".join(out))


def _label_words(m: re.Match[str]) -> str:
    inner = m.group(1) if m.group(1) is not None else m.group(2)
    if not is_blank_span(inner):
        return m.group(0)
    return inner.strip().capitalize() + ":"


def bracketed_or_label_owner(s: str, is_name_like: Callable[[str], bool]) -> tuple[str | None, str]:
    """(owner, the rest) of an item that starts with a bracketed owner ("[Mike]: book the
    room"); a template's label before the task ("[Owner]: ...", "Owner: ...") is taken off
    with no owner (the parser's action items; ``is_name_like``: its test of an owner's
    words). (None, ``s``) otherwise."""
    m = _OWNER_BRACKETED.match(s)
    if m:
        name = m.group(1).strip()
        if is_placeholder_owner(name) or is_blank_span(name):
            return None, m.group(2).strip()
        if is_name_like(name) and name[:1].isupper():
            return name, m.group(2).strip()
    m = _LABEL_PREFIX.match(s)
    if m and is_placeholder_owner(m.group(1)):
        return None, m.group(2).strip()
    return None, s
