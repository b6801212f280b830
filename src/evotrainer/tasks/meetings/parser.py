"""Turn free-form model output into structured minutes.

``parse_minutes(text) -> Minutes`` never raises. It reads the output line by line: lines.py
classifies each line on its own, and a small state machine (``_MinutesBuilder``) reads the
classified lines in order, keeping the kind of the current section and any open table:

- headings: markdown ``#``..``######``, a whole-line ``**bold**``/``__bold__`` line, a setext
  heading (a line underlined with ``===``/``---``), a short label line ending in a colon
  ("Action items:"), and label lines with inline content ("Decisions: we keep the date");
  "Title:/Subject:/Minutes:" lines give the title;
- bullets: ``-``, ``*``, ``+``, ``•`` and friends, numbered ``1.``/``1)``, lettered ``a)``, and
  checkboxes ``- [ ]``/``- [x]``;
- tables (``| owner | task | due |``): rows become action items when the header names an owner
  and a task column or the table sits in an action section, else plain items;
- prose paragraphs: sentences that mention an agreement/decision become decisions; inside an
  action section each sentence is an action item.

Each heading opens a section whose kind comes from its words: "action" (action items, to-do,
next steps, tasks, follow-up, assignments), "decision" (decisions, agreed, resolutions,
conclusions, outcomes), "meta" (date, attendees, location...), "topic" (topics, agenda,
discussion, key points, summary...), or "other".

Action items: every bullet/row/sentence of an action section, any checkbox item, any line
labelled "Action:"/"TODO:"; and when the output has no action section at all, bullets of the
form "Owner: task" whose task does not read like dialogue (first person, questions). Plain
"Speaker: text" lines outside action sections are treated as dialogue, not action items: a
135M model often continues the transcript instead of writing minutes (see
tests/fixtures/smollm2_outputs.jsonl). Owners are found in "Owner: task", "**Owner**: task",
"- [ ] task (@owner)", "Owner will/to/should task", "task - Owner", "task (Owner)",
"task (owner: X)"; due dates in "(due X)", "Due: X", "by <date>". Template placeholders such as
"Name: task" are dropped and duplicates (a looping model) are kept once.

Speed: regexes are compiled once; a typical 300-word output parses in well under 0.5 ms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from evotrainer.tasks.meetings.lines import (
    BULLET,
    CHECKBOX,
    HEADING_NUMBER,
    LABEL,
    META_WORDS,
    TITLE_LABEL,
    Line,
    classify_line,
    clean,
    section_kind,
    strip_markdown,
)
from evotrainer.tasks.meetings.placeholders import (
    bracketed_or_label_owner,
    is_placeholder,
    is_placeholder_owner,
)

__all__ = ["Minutes", "ParsedActionItem", "parse_minutes", "parse_action_item"]


@dataclass(frozen=True)
class ParsedActionItem:
    owner: str | None
    task: str
    due: str | None = None

    def as_text(self) -> str:
        head = f"{self.owner}: {self.task}" if self.owner else self.task
        return head + (f" (due {self.due})" if self.due else "")


@dataclass(frozen=True)
class Minutes:
    title: str | None
    topics: tuple[str, ...]
    decisions: tuple[str, ...]
    action_items: tuple[ParsedActionItem, ...]
    bullets: int
    sections: tuple[str, ...]
    text: str
    items: tuple[str, ...] = ()  # the text of every bullet and table row, in order

    @property
    def has_heading(self) -> bool:
        return self.title is not None or bool(self.sections)


# --------------------------------------------------------------------------------------------
# Regexes (compiled once)

_SENT_SPLIT = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9\"'(])")
_DECISION_HINT = re.compile(
    r"\b(?:agreed|decided|decision|approved|settled on|resolved|we will go with|will go with)\b",
    re.I,
)

_ACTION_LABEL = re.compile(r"^(?:action(?: item)?|todo|to-do|ai|task|follow[- ]?up)$", re.I)
_DECISION_LABEL = re.compile(r"^(?:decision|decided|agreed|agreement|resolution|outcome)$", re.I)

# inside an action item
_DUE_PAREN = re.compile(
    r"\s*[(\[]\s*(?:due(?: date)?|deadline|by|until|before)\s*:?\s*([^()\[\]]{1,40})[)\]]", re.I
)
_DUE_LABEL = re.compile(
    r"[\s,;.\-\u2013\u2014|]*\b(?:due(?: date)?|deadline)\s*[:\-]?\s+(.{1,40})$", re.I
)
_DATE_WORD = (
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow|today|tonight|next\s+\w+|this\s+\w+|"
    r"end of\s+(?:the\s+)?\w+|eod|eow|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)"
    r"[a-z]*\.?\s*\d{0,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*|\d{1,4}[./-]\d{1,2}(?:[./-]\d{1,4})?|"
    r"the\s+(?:next|following)\s+\w+|(?:the\s+)?week\s+after|friday"
)
_DUE_BY = re.compile(
    r"[\s,]+\b(?:by|before|until|no later than)\s+((?:" + _DATE_WORD + r")[^.;]{0,20})[.;]?\s*$",
    re.I,
)
_DUE_BY_HINT = re.compile(r"\b(?:by|before|until|no later than)\s", re.I)
_OWNER_TAG_HINT = re.compile(r"owner|assign|responsible|who|lead")
_OWNER_AT = re.compile(r"\s*\(?@([\w.\-]+(?:\s+[A-Z][\w.\-]*)?)\)?")
_OWNER_TAG = re.compile(
    r"[\s,;.\-\u2013\u2014]*[(\[]?\s*(?:owner|assigned to|assignee|responsible|who|lead)\s*[:\-]\s*"
    r"([^()\[\];,]{1,40}?)\s*[)\]]?\s*$",
    re.I,
)
_NAME = (
    r"(?:[A-Z][\w.'\-]*|[A-Z]{2,})(?:\s+(?:[A-Z][\w.'\-]*|&|and|van|von|de|der|da|al))?"
    r"(?:\s+[A-Z][\w.'\-]*){0,2}"
)
_GROUP = (
    r"(?:the\s+)?(?:whole\s+)?(?:team|group|everyone|everybody|all(?:\s+(?:participants|members|staff))?|"
    r"participants|members|we|they)"
)
_ROLE = (
    r"(?:the\s+)?(?:(?:project|product|marketing|industrial|user interface|ui|interface|technical|"
    r"sales|it|hr|finance|qa)\s+)?(?:manager|designer|expert|executive|specialist|lead|engineer|"
    r"team|department|pm|id|ui|me)"
)
_OWNER_PREFIX = re.compile(
    r"^("
    + _NAME
    + r"|"
    + _GROUP
    + r"|"
    + _ROLE
    + r")\s*(?:\([^)]{0,20}\))?\s*(?::|\s[-\u2013\u2014]\s)\s*(.+)$"
)
_OWNER_WILL = re.compile(
    r"^("
    + _NAME
    + r"|"
    + _GROUP
    + r"|"
    + _ROLE
    + r")\s+(?:will|shall|should|must|needs? to|has to|"
    r"have to|is to|are to|is going to|are going to|to|agreed to|volunteered to|offered to|"
    r"promised to|is responsible for|are responsible for)\s+(.+)$",
    re.I,
)
_OWNER_SUFFIX = re.compile(r"^(.+?)\s+(?:[-\u2013\u2014]{1,2}|\u2192|->)\s+(" + _NAME + r")\s*\.?$")
_OWNER_PAREN = re.compile(r"^(.+?)\s*\((" + _NAME + r")\)\s*\.?$")
_FIRST_PERSON = re.compile(
    r"(?:^|\s)(?:i|i'm|i'll|i've|i'd|we|we're|we'll|we've|my|me|us|our|you|you're|let's|"
    r"hi|hello|thanks|thank you|good morning|okay|ok|yes|yeah|no|um|uh)(?=[\s,.!?']|$)",
    re.I,
)
_NOT_OWNER = frozenset(
    [
        "task",
        "tasks",
        "action",
        "actions",
        "item",
        "items",
        "note",
        "notes",
        "due",
        "deadline",
        "topic",
        "topics",
        "decision",
        "decisions",
        "status",
        "date",
        "time",
        "summary",
        "agenda",
        "owner",
        "who",
        "what",
        "when",
        "where",
        "why",
        "how",
        "meeting",
        "minutes",
        "title",
        "subject",
        "result",
        "results",
        "outcome",
        "next",
        "step",
        "steps",
        "priority",
        "description",
        "details",
        "goal",
        "comment",
        "comments",
        "update",
        "updates",
        "issue",
        "issues",
        "question",
        "questions",
        "answer",
        "location",
        "attendees",
        "participants",
        "present",
        "absent",
        "key",
        "point",
        "points",
        "total",
        "budget",
        "cost",
        "price",
    ]
)


def _is_name_like(owner: str) -> bool:
    words = owner.split()
    if not words or len(words) > 4:
        return False
    if words[0].lower().strip(".") in _NOT_OWNER:
        return False
    return not any(w.lower() in _NOT_OWNER for w in words[-1:])


def _looks_like_task(task: str) -> bool:
    """A plausible task after "Owner:" outside an action section: not dialogue (first person, a
    question, a greeting) and not just another name."""
    words = task.split()
    if not words or task.endswith("?") or _FIRST_PERSON.search(task[:60]):
        return False
    return any(w[:1].islower() for w in words)


def parse_action_item(text: str) -> ParsedActionItem | None:
    """Owner, task and due date of one action-item text; None for an empty or placeholder item."""
    return _parse_action_item(text) if len(text) <= 2000 else _parse_action_item.__wrapped__(text)


@lru_cache(maxsize=4096)
def _parse_action_item(text: str) -> ParsedActionItem | None:
    s = strip_markdown(text)
    m = BULLET.match(s)
    if m:
        s = m.group(1)
    m = CHECKBOX.match(s)
    if m:
        s = m.group(2)
    s = s.strip(" \t;,")
    if not s:
        return None
    low = s.lower()
    due = None
    owner = None
    if "due" in low or "deadline" in low or "(" in s or "[" in s:
        m = _DUE_PAREN.search(s)
        if m:
            due = m.group(1).strip()
            s = (s[: m.start()] + s[m.end() :]).strip()
        elif "due" in low or "deadline" in low:
            m = _DUE_LABEL.search(s)
            if m:
                due = m.group(1).strip(" .;")
                s = s[: m.start()].strip()
    if "@" in s:
        m = _OWNER_AT.search(s)
        if m:
            owner = m.group(1).strip()
            s = (s[: m.start()] + " " + s[m.end() :]).strip()
    if owner is None and _OWNER_TAG_HINT.search(low):
        m = _OWNER_TAG.search(s)
        if m and m.start() > 0:
            owner = m.group(1).strip()
            s = s[: m.start()].strip()
    if owner is None:
        owner, s = bracketed_or_label_owner(s, _is_name_like)
    if owner is None:
        m = _OWNER_PREFIX.match(s)
        if m and _is_name_like(m.group(1)):
            owner, s = m.group(1).strip(), m.group(2).strip()
    if owner is None:
        m = _OWNER_WILL.match(s)
        if m and m.group(1).split()[0].lower() not in _NOT_OWNER:
            owner, s = m.group(1).strip(), m.group(2).strip()
    if owner is None and (" -" in s or "\u2013" in s or "\u2014" in s or "\u2192" in s or ")" in s):
        m = _OWNER_SUFFIX.match(s) or _OWNER_PAREN.match(s)
        if m and _is_name_like(m.group(2)):
            s, owner = m.group(1).strip(), m.group(2).strip()
    if due is None and _DUE_BY_HINT.search(s):
        m = _DUE_BY.search(s)
        if m:
            due = m.group(1).strip(" .;")
            s = s[: m.start()].strip()
    task = s.strip(" \t.;,:-\u2013\u2014")
    if task.lower().startswith("to "):
        task = task[3:]
    if owner is not None:
        owner = owner.strip(" .:,;")
        if owner.lower() in ("the team", "the group"):
            owner = owner[4:]
    if not task:
        if owner is None:
            return None
        task = ""
    if is_placeholder(task, owner):
        return None
    if owner is not None and is_placeholder_owner(owner):
        owner = None
    return ParsedActionItem(owner=owner or None, task=task, due=due or None)


# --------------------------------------------------------------------------------------------


def _table_items(
    rows: list[list[str]], in_action: bool
) -> tuple[list[ParsedActionItem], list[str]]:
    if not rows:
        return [], []
    header = [c.lower() for c in rows[0]]

    def col(*words: str) -> int | None:
        for i, h in enumerate(header):
            if any(w in h for w in words):
                return i
        return None

    owner_c = col("owner", "who", "responsible", "assignee", "assigned", "person", "name")
    task_c = col("task", "action", "to do", "todo", "what", "item", "description")
    due_c = col("due", "deadline", "when", "date", "by")
    if due_c is not None and due_c in (owner_c, task_c):
        due_c = None
    is_action = (
        in_action or owner_c is not None or col("task", "action", "to do", "todo") is not None
    )
    body = rows[1:]
    texts = [" | ".join(c for c in r if c) for r in body]
    if not is_action:
        return [], texts
    if task_c is None and owner_c is None:  # no header: first column owner, second task
        body = rows
        owner_c, task_c = (0, 1) if len(rows[0]) >= 2 else (None, 0)
        texts = [" | ".join(c for c in r if c) for r in body]
    if task_c is None:
        return [], texts
    items = []
    for r in body:
        task = r[task_c] if task_c < len(r) else ""
        owner = r[owner_c] if owner_c is not None and owner_c < len(r) else None
        due = r[due_c] if due_c is not None and due_c < len(r) and due_c != task_c else None
        if owner and is_placeholder_owner(owner):
            owner = None
        if not task or is_placeholder(task, owner):
            continue
        items.append(ParsedActionItem(owner=owner or None, task=task, due=due or None))
    return items, texts


def _dedupe(xs: list[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    out = []
    for x in xs:
        k = x.lower()
        if x and k not in seen:
            seen.add(k)
            out.append(x)
    return tuple(out)


# --------------------------------------------------------------------------------------------
# The state machine: classified lines in, Minutes out


def _decision_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT_SPLIT.split(text) if _DECISION_HINT.search(s)]


class _MinutesBuilder:
    """The parser's state: the current section's kind, an open table, what was found so far."""

    def __init__(self) -> None:
        self.title: str | None = None
        self.sections: list[str] = []
        self.topics: list[str] = []
        self.decisions: list[str] = []
        self.actions: list[ParsedActionItem] = []
        self.fallback_actions: list[ParsedActionItem] = []
        self.items: list[str] = []
        self.untyped_bullets: list[str] = []
        self.other_headings: list[str] = []
        self.bullets = 0
        self.kind = "none"  # kind of the current section
        self.has_action_section = False
        self.table: list[list[str]] = []
        self.table_in_action = False

    def feed(self, line: Line) -> None:
        """Take one classified line."""
        kind = line.kind
        if kind == "table_sep":
            return
        if kind == "table_row":
            if not self.table:
                self.table_in_action = self.kind == "action"
            self.table.append(list(line.cells))
            return
        self.flush_table()
        if kind == "section":
            self.open_section(line.text, line.title_candidate)
            for value in line.values:
                self.add_item(value, False)
        elif kind == "title":
            if self.title is None:
                self.title = line.text
            self.sections.append(line.label)
        elif kind == "meta":
            self.sections.append(line.label)
            self.kind = "meta"
        elif kind == "bullet":
            self.bullets += 1
            self.add_item(line.text, True)
        elif kind == "prose":
            self.add_prose(line.text)

    def flush_table(self) -> None:
        if not self.table:
            return
        t_items, t_texts = _table_items(self.table, self.table_in_action)
        self.actions.extend(t_items)
        self.items.extend(t_texts)
        if not t_items and self.kind == "decision":
            self.decisions.extend(t_texts)
        elif not t_items and self.kind == "topic":
            self.topics.extend(t_texts)
        elif not t_items and self.kind in ("none", "other"):
            self.untyped_bullets.extend(t_texts)
        self.table = []

    def open_section(self, heading: str, is_title_candidate: bool) -> None:
        heading = clean(HEADING_NUMBER.sub("", heading))
        if not heading:
            return
        self.sections.append(heading)
        self.kind = section_kind(heading)
        if self.kind == "action":
            self.has_action_section = True
        if self.kind == "other":
            if is_title_candidate and self.title is None:
                self.title = heading
            else:
                self.other_headings.append(heading)

    def add_prose(self, plain: str) -> None:
        if self.kind == "action":
            for s in _SENT_SPLIT.split(plain):
                if s.strip():
                    self.add_item(s, False)
        elif self.kind == "decision":
            self.decisions.append(plain)
        elif self.kind == "topic" and len(plain.split()) <= 25:
            self.topics.append(plain)
        elif _DECISION_HINT.search(plain):
            self.decisions.extend(_decision_sentences(plain))

    def add_item(self, body: str, is_bullet: bool) -> None:
        """One bullet, or an item a heading line carries inline."""
        body_clean = strip_markdown(body)
        nested = BULLET.match(body_clean)
        if nested:  # "1. - [ ] task": a bullet inside a bullet
            body_clean = nested.group(1).strip()
        if not body_clean:
            return
        if is_bullet:
            self.items.append(body_clean)
        # labelled items ("Decision: X", "Action: Y", "Date: Z") override the section
        m = LABEL.match(body_clean)
        if m and self.add_labelled_item(m.group(1), m.group(2).strip()):
            return
        if self.kind == "action" or CHECKBOX.match(body_clean):
            self.add_action(body_clean)
        elif self.kind == "decision":
            self.decisions.append(body_clean)
        elif self.kind == "meta":
            return
        elif self.kind == "topic":
            self.topics.append(body_clean)
            if _DECISION_HINT.search(body_clean):
                self.decisions.extend(_decision_sentences(body_clean))
        else:
            if is_bullet:
                self.add_untyped_bullet(body_clean)
            if _DECISION_HINT.search(body_clean):
                self.decisions.extend(_decision_sentences(body_clean))

    def add_labelled_item(self, raw_label: str, value: str) -> bool:
        """A "Label: value" item; False when the label says nothing and the item reads on."""
        label = raw_label.strip().lower()
        if not value and len(label.split()) <= 5 and section_kind(label) != "other":
            self.open_section(raw_label, False)  # a bullet used as a heading: "- Action items:"
            return True
        if TITLE_LABEL.match(label):
            return True
        if label in ("topic", "topics", "subject", "agenda item", "issue"):
            if value:
                self.topics.append(value)
            return True
        if _DECISION_LABEL.match(label):
            if value:
                self.decisions.append(value)
            return True
        if _ACTION_LABEL.match(label) and self.kind != "action":
            if value:
                self.add_action(value)
            return True
        return bool(META_WORDS.match(label) and self.kind != "action")

    def add_action(self, text: str) -> None:
        a = parse_action_item(text)
        if a:
            self.actions.append(a)

    def add_untyped_bullet(self, body: str) -> None:
        """A bullet outside any typed section; "Owner: task" is an action item should the
        output have no action section at all."""
        self.untyped_bullets.append(body)
        m = _OWNER_PREFIX.match(body)
        if m and _is_name_like(m.group(1)) and _looks_like_task(m.group(2)):
            a = parse_action_item(body)
            if a and a.owner:
                self.fallback_actions.append(a)

    def minutes(self, text: str) -> Minutes:
        self.flush_table()
        actions = self.actions
        if not self.has_action_section:
            actions = actions + self.fallback_actions
        # dedupe action items (a looping model repeats them)
        seen: set[tuple[str, str]] = set()
        uniq: list[ParsedActionItem] = []
        for a in actions:
            key = ((a.owner or "").lower(), a.task.lower())
            if key not in seen:
                seen.add(key)
                uniq.append(a)
        topics = self.other_headings + (self.topics or self.untyped_bullets)
        return Minutes(
            title=self.title or None,
            topics=_dedupe(topics),
            decisions=_dedupe([d for d in self.decisions if d]),
            action_items=tuple(uniq),
            bullets=self.bullets,
            sections=tuple(self.sections),
            text=text,
            items=tuple(self.items),
        )


def parse_minutes(text: str) -> Minutes:
    """Structure of free-form minutes. Never raises; empty input gives empty Minutes.

    Each line is classified on its own (lines.classify_line); a small state machine
    (_MinutesBuilder) reads the classified lines in order."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    lines = text.splitlines()
    builder = _MinutesBuilder()
    for i in range(len(lines)):
        builder.feed(classify_line(lines, i))
    return builder.minutes(text)
