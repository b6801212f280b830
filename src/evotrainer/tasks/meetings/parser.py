"""Turn free-form model output into structured minutes.

``parse_minutes(text) -> Minutes`` never raises. It reads the output line by line:

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

__all__ = ["Minutes", "ParsedActionItem", "parse_minutes", "parse_action_item", "strip_markdown"]


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

_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(.*?)\s*#*\s*$")
_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*(:?)\s*$")
_BOLD_LABEL = re.compile(
    r"^\s*(?:\*\*|__)([^*_]{1,60}?)(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:)\s*(.*)$"
)
_HEADING_NUMBER = re.compile(r"^\s*(?:\d{1,2}|[ivxIVX]{1,4})[.)]\s+")
_SETEXT = re.compile(r"^\s*(?:={3,}|-{3,})\s*$")
_HRULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$")
_BULLET = re.compile(
    r"^\s*(?:[-*+\u2022\u00b7\u2023\u25e6\u25aa\u25cf\u2013\u2014>]|\d{1,3}[.)]|\(\d{1,3}\)|[a-hA-H][.)])"
    r"\s+(.*)$"
)
_CHECKBOX = re.compile(r"^\[( |x|X|\u2713)?\]\s*(.*)$")
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_TABLE_SEP = re.compile(r"^[\s|:\-]+$")
_LABEL = re.compile(r"^([A-Za-z][A-Za-z /&'\-]{0,40}?)\s*:\s*(.*)$")
_MARKUP = re.compile(r"\*\*|__|`|~~|\*")
_SPACES = re.compile(r"\s+")
_SENT_SPLIT = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9\"'(])")
_DECISION_HINT = re.compile(
    r"\b(?:agreed|decided|decision|approved|settled on|resolved|we will go with|will go with)\b",
    re.I,
)

_ACTION_WORDS = re.compile(
    r"\b(?:action|actions|to-?dos?|todo list|tasks?|next steps?|follow[- ]?ups?|assignments?|"
    r"who does what|open items|deliverables)\b",
    re.I,
)
_DECISION_WORDS = re.compile(
    r"\b(?:decisions?|decided|agreed|agreements?|resolutions?|conclusions?|outcomes?)\b", re.I
)
_META_WORDS = re.compile(
    r"^(?:date|time|when|attendees|participants|present|absent|location|place|venue|chair|"
    r"facilitator|minutes taken by|note taker|scribe|recorder|next meeting|duration|"
    r"meeting date|date and time|attendance)\b",
    re.I,
)
_TOPIC_WORDS = re.compile(
    r"\b(?:topics?|agenda|discussion|discussed|key points|main points|points|highlights|summary|"
    r"overview|key statements|statements|notes|items discussed|issues|updates?)\b",
    re.I,
)
_TITLE_LABEL = re.compile(r"^(?:title|subject|minutes|meeting title|meeting|re)$", re.I)
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
_PLACEHOLDER_OWNER = frozenset(
    {"name", "owner", "person", "who", "[name]", "<name>", "x", "someone"}
)
_PLACEHOLDER_TASK = frozenset(
    {"task", "action", "todo", "to-do", "[task]", "<task>", "description", "item", "action item"}
)


def strip_markdown(s: str) -> str:
    """Drop emphasis markers and collapse whitespace."""
    if "*" in s or "_" in s or "`" in s or "~" in s:
        s = _MARKUP.sub("", s)
    return _SPACES.sub(" ", s).strip()


def _clean(s: str) -> str:
    return strip_markdown(s).strip(" \t:;,-\u2013\u2014")


def _section_kind(heading: str) -> str:
    h = heading.strip().lower()
    if _ACTION_WORDS.search(h):
        return "action"
    if _DECISION_WORDS.search(h):
        return "decision"
    if _META_WORDS.match(h):
        return "meta"
    if _TOPIC_WORDS.search(h):
        return "topic"
    return "other"


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


def _next_is_list(lines: list[str], i: int) -> bool:
    for j in range(i + 1, min(i + 4, len(lines))):
        s = lines[j].strip()
        if s:
            return bool(_BULLET.match(s)) or s.startswith("|")
    return False


def parse_action_item(text: str) -> ParsedActionItem | None:
    """Owner, task and due date of one action-item text; None for an empty or placeholder item."""
    return _parse_action_item(text) if len(text) <= 2000 else _parse_action_item.__wrapped__(text)


@lru_cache(maxsize=4096)
def _parse_action_item(text: str) -> ParsedActionItem | None:
    s = strip_markdown(text)
    m = _BULLET.match(s)
    if m:
        s = m.group(1)
    m = _CHECKBOX.match(s)
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
    if task.lower() in _PLACEHOLDER_TASK and (owner is None or owner.lower() in _PLACEHOLDER_OWNER):
        return None
    if owner is not None and owner.lower() in ("name", "owner", "[name]", "<name>"):
        owner = None
    return ParsedActionItem(owner=owner or None, task=task, due=due or None)


# --------------------------------------------------------------------------------------------


def _split_cells(row: str) -> list[str]:
    return [_clean(c) for c in row.split("|")]


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
        if owner and owner.lower() in _PLACEHOLDER_OWNER:
            owner = None
        if not task or task.lower() in _PLACEHOLDER_TASK:
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


def parse_minutes(text: str) -> Minutes:
    """Structure of free-form minutes. Never raises; empty input gives empty Minutes."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    lines = text.splitlines()
    title: str | None = None
    sections: list[str] = []
    topics: list[str] = []
    decisions: list[str] = []
    actions: list[ParsedActionItem] = []
    fallback_actions: list[ParsedActionItem] = []
    items: list[str] = []
    untyped_bullets: list[str] = []
    other_headings: list[str] = []
    bullets = 0
    kind = "none"  # kind of the current section
    has_action_section = False
    table: list[list[str]] = []
    table_in_action = False

    def flush_table() -> None:
        nonlocal table
        if table:
            t_items, t_texts = _table_items(table, table_in_action)
            actions.extend(t_items)
            items.extend(t_texts)
            if not t_items and kind == "decision":
                decisions.extend(t_texts)
            elif not t_items and kind == "topic":
                topics.extend(t_texts)
            elif not t_items and kind in ("none", "other"):
                untyped_bullets.extend(t_texts)
            table = []

    def open_section(heading: str, is_title_candidate: bool) -> None:
        nonlocal kind, title, has_action_section
        heading = _clean(_HEADING_NUMBER.sub("", heading))
        if not heading:
            return
        sections.append(heading)
        kind = _section_kind(heading)
        if kind == "action":
            has_action_section = True
        if kind == "other":
            if is_title_candidate and title is None:
                title = heading
            else:
                other_headings.append(heading)

    def add_item(body: str, is_bullet: bool) -> None:
        body_clean = strip_markdown(body)
        nested = _BULLET.match(body_clean)
        if nested:  # "1. - [ ] task": a bullet inside a bullet
            body_clean = nested.group(1).strip()
        if not body_clean:
            return
        if is_bullet:
            items.append(body_clean)
        # labelled items ("Decision: X", "Action: Y", "Date: Z") override the section
        m = _LABEL.match(body_clean)
        if m:
            label = m.group(1).strip().lower()
            value = m.group(2).strip()
            if not value and len(label.split()) <= 5 and _section_kind(label) != "other":
                open_section(m.group(1), False)  # a bullet used as a heading: "- Action items:"
                return
            if _TITLE_LABEL.match(label):
                return
            if label in ("topic", "topics", "subject", "agenda item", "issue"):
                if value:
                    topics.append(value)
                return
            if _DECISION_LABEL.match(label):
                if value:
                    decisions.append(value)
                return
            if _ACTION_LABEL.match(label) and kind != "action":
                if value:
                    a = parse_action_item(value)
                    if a:
                        actions.append(a)
                return
            if _META_WORDS.match(label) and kind != "action":
                return
        cb = _CHECKBOX.match(body_clean)
        if kind == "action" or cb:
            a = parse_action_item(body_clean)
            if a:
                actions.append(a)
            return
        if kind == "decision":
            decisions.append(body_clean)
            return
        if kind == "meta":
            return
        if kind == "topic":
            topics.append(body_clean)
            if _DECISION_HINT.search(body_clean):
                decisions.extend(
                    x.strip() for x in _SENT_SPLIT.split(body_clean) if _DECISION_HINT.search(x)
                )
            return
        if is_bullet:
            untyped_bullets.append(body_clean)
            m = _OWNER_PREFIX.match(body_clean)
            if m and _is_name_like(m.group(1)) and _looks_like_task(m.group(2)):
                a = parse_action_item(body_clean)
                if a and a.owner:
                    fallback_actions.append(a)
        if _DECISION_HINT.search(body_clean):
            for s in _SENT_SPLIT.split(body_clean):
                if _DECISION_HINT.search(s):
                    decisions.append(s.strip())

    n = len(lines)
    for i, raw in enumerate(lines):
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            flush_table()
            continue
        # tables
        if stripped[0] == "|" and _TABLE_ROW.match(stripped):
            inner = stripped.strip("|")
            if _TABLE_SEP.match(inner):
                continue
            if not table:
                table_in_action = kind == "action"
            table.append(_split_cells(inner))
            continue
        flush_table()
        # setext underline of the previous line (handled when we saw that line)
        if _SETEXT.match(stripped):
            continue
        if _HRULE.match(stripped):
            continue
        # markdown heading
        if stripped[0] == "#":
            m = _MD_HEADING.match(stripped)
            if m:
                heading = m.group(1)
                lm = _LABEL.match(strip_markdown(heading))
                if lm and lm.group(2) and _TITLE_LABEL.match(lm.group(1).strip()):
                    heading = lm.group(2)
                open_section(heading, True)
                continue
        # setext heading: next line is === or --- and this line is not a bullet
        if i + 1 < n and _SETEXT.match(lines[i + 1]) and not _BULLET.match(line):
            open_section(stripped, True)
            continue
        # whole-line bold
        if stripped[0] in "*_":
            m = _BOLD_LINE.match(stripped)
            if m and len(m.group(1).split()) <= 12 and "**" not in m.group(1):
                inner = m.group(1).strip()
                lm = _LABEL.match(inner)
                if lm and lm.group(2):
                    label, value = lm.group(1).strip(), lm.group(2).strip()
                    if _TITLE_LABEL.match(label):
                        if title is None:
                            title = _clean(value)
                        sections.append(_clean(label))
                        continue
                    open_section(label, False)
                    add_item(value, False)
                    continue
                open_section(inner.rstrip(":"), True)
                continue
            m = _BOLD_LABEL.match(stripped)
            if m and not _BULLET.match(stripped):
                label, value = m.group(1).strip(), m.group(2).strip()
                if _TITLE_LABEL.match(label) and value:
                    if title is None:
                        title = _clean(value)
                    sections.append(_clean(label))
                    continue
                if _META_WORDS.match(label):
                    sections.append(_clean(label))
                    kind = "meta"
                    continue
                if len(label.split()) <= 6:
                    open_section(label, False)
                    if value:
                        add_item(value, False)
                    continue
        # bullets
        m = _BULLET.match(line)
        if m:
            bullets += 1
            add_item(m.group(1), True)
            continue
        # label lines: "Action items:" / "Title: X" / "Decisions: we keep X"
        plain = strip_markdown(stripped)
        m = _LABEL.match(plain)
        if m:
            label, value = m.group(1).strip(), m.group(2).strip()
            if _TITLE_LABEL.match(label) and value and len(value.split()) <= 15:
                if title is None:
                    title = _clean(value)
                sections.append(label)
                continue
            k = _section_kind(label)
            if not value and len(label.split()) <= 6 and (k != "other" or _next_is_list(lines, i)):
                open_section(label, False)
                continue
            if k in ("action", "decision", "meta", "topic") and len(label.split()) <= 4:
                open_section(label, False)
                if k == "action":
                    for part in re.split(r";\s*|(?<=[.!?])\s+", value):
                        if part.strip():
                            add_item(part, False)
                elif k != "meta":
                    add_item(value, False)
                continue
        # prose
        if kind == "action":
            for s in _SENT_SPLIT.split(plain):
                if s.strip():
                    add_item(s, False)
            continue
        if kind == "decision":
            decisions.append(plain)
            continue
        if kind == "topic" and len(plain.split()) <= 25:
            topics.append(plain)
            continue
        if _DECISION_HINT.search(plain):
            for s in _SENT_SPLIT.split(plain):
                if _DECISION_HINT.search(s):
                    decisions.append(s.strip())
    flush_table()

    if not has_action_section:
        actions = actions + fallback_actions
    # dedupe action items (a looping model repeats them)
    seen: set[tuple[str, str]] = set()
    uniq: list[ParsedActionItem] = []
    for a in actions:
        key = ((a.owner or "").lower(), a.task.lower())
        if key not in seen:
            seen.add(key)
            uniq.append(a)
    topics = other_headings + (topics or untyped_bullets)
    return Minutes(
        title=title or None,
        topics=_dedupe(topics),
        decisions=_dedupe([d for d in decisions if d]),
        action_items=tuple(uniq),
        bullets=bullets,
        sections=tuple(sections),
        text=text,
        items=tuple(items),
    )
