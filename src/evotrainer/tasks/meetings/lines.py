"""The line classifier of the minutes parser (parser.py runs the state machine over its lines).

``classify_line(lines, i)`` says what one line of model output is, from the line and the few
after it alone (a setext underline, a list under a label): blank, a table row or separator, a
rule, a section heading (markdown ``#``, setext, a whole-line bold, a bold label, a label line
ending in a colon, a label with inline content), a title field, a meta label, a bullet, or
prose. What a line *means* also depends on the section it sits in; that is the state machine's
part. Regexes are compiled once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Line", "classify_line", "section_kind", "strip_markdown"]

_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(.*?)\s*#*\s*$")
_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)(.+?)(?:\*\*|__)\s*(:?)\s*$")
_BOLD_LABEL = re.compile(
    r"^\s*(?:\*\*|__)([^*_]{1,60}?)(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:)\s*(.*)$"
)
HEADING_NUMBER = re.compile(r"^\s*(?:\d{1,2}|[ivxIVX]{1,4})[.)]\s+")
_SETEXT = re.compile(r"^\s*(?:={3,}|-{3,})\s*$")
_HRULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$")
BULLET = re.compile(
    r"^\s*(?:[-*+\u2022\u00b7\u2023\u25e6\u25aa\u25cf\u2013\u2014>]|\d{1,3}[.)]|\(\d{1,3}\)|[a-hA-H][.)])"
    r"\s+(.*)$"
)
CHECKBOX = re.compile(r"^\[( |x|X|\u2713)?\]\s*(.*)$")
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_TABLE_SEP = re.compile(r"^[\s|:\-]+$")
LABEL = re.compile(r"^([A-Za-z][A-Za-z /&'\-]{0,40}?)\s*:\s*(.*)$")
_MARKUP = re.compile(r"\*\*|__|`|~~|\*")
_SPACES = re.compile(r"\s+")
_ACTION_PARTS = re.compile(r";\s*|(?<=[.!?])\s+")

_ACTION_WORDS = re.compile(
    r"\b(?:action|actions|to-?dos?|todo list|tasks?|next steps?|follow[- ]?ups?|assignments?|"
    r"who does what|open items|deliverables)\b",
    re.I,
)
_DECISION_WORDS = re.compile(
    r"\b(?:decisions?|decided|agreed|agreements?|resolutions?|conclusions?|outcomes?)\b", re.I
)
META_WORDS = re.compile(
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
TITLE_LABEL = re.compile(r"^(?:title|subject|minutes|meeting title|meeting|re)$", re.I)


def strip_markdown(s: str) -> str:
    """Drop emphasis markers and collapse whitespace."""
    if "*" in s or "_" in s or "`" in s or "~" in s:
        s = _MARKUP.sub("", s)
    return _SPACES.sub(" ", s).strip()


def clean(s: str) -> str:
    return strip_markdown(s).strip(" \t:;,-\u2013\u2014")


def section_kind(heading: str) -> str:
    """ "action", "decision", "meta", "topic" or "other", from a heading's words."""
    h = heading.strip().lower()
    if _ACTION_WORDS.search(h):
        return "action"
    if _DECISION_WORDS.search(h):
        return "decision"
    if META_WORDS.match(h):
        return "meta"
    if _TOPIC_WORDS.search(h):
        return "topic"
    return "other"


@dataclass(frozen=True)
class Line:
    """One classified line.

    kind and its fields:

    - "blank", "rule" (a setext underline or a horizontal rule), "table_sep": no fields;
    - "table_row": ``cells``;
    - "section": ``text`` the heading, ``title_candidate`` whether an "other" heading may be
      the title, ``values`` the items the heading line carries inline ("Decisions: X");
    - "title": ``text`` the title, ``label`` what goes into the sections;
    - "meta": ``label`` (a bold meta label such as "**Date:** 12 March");
    - "bullet": ``text`` the bullet's body;
    - "prose": ``text`` the line without markup.
    """

    kind: str
    text: str = ""
    label: str = ""
    title_candidate: bool = False
    values: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()


_BLANK = Line("blank")
_RULE = Line("rule")
_TABLE_SEP_LINE = Line("table_sep")


def classify_line(lines: list[str], i: int) -> Line:
    """What ``lines[i]`` is; the lines after it only settle setext headings and label lists."""
    line = lines[i].rstrip()
    stripped = line.strip()
    if not stripped:
        return _BLANK
    if stripped[0] == "|" and _TABLE_ROW.match(stripped):
        inner = stripped.strip("|")
        if _TABLE_SEP.match(inner):
            return _TABLE_SEP_LINE
        return Line("table_row", cells=tuple(clean(c) for c in inner.split("|")))
    if _SETEXT.match(stripped) or _HRULE.match(stripped):
        return _RULE
    found = _heading(lines, i, line, stripped) or _bold(stripped)
    if found is not None:
        return found
    m = BULLET.match(line)
    if m:
        return Line("bullet", text=m.group(1))
    plain = strip_markdown(stripped)
    return _label(plain, lines, i) or Line("prose", text=plain)


def _heading(lines: list[str], i: int, line: str, stripped: str) -> Line | None:
    """A markdown ``#`` heading or a setext heading (the next line ``===``/``---``)."""
    if stripped[0] == "#":
        m = _MD_HEADING.match(stripped)
        if m:
            heading = m.group(1)
            lm = LABEL.match(strip_markdown(heading))
            if lm and lm.group(2) and TITLE_LABEL.match(lm.group(1).strip()):
                heading = lm.group(2)
            return Line("section", text=heading, title_candidate=True)
    if i + 1 < len(lines) and _SETEXT.match(lines[i + 1]) and not BULLET.match(line):
        return Line("section", text=stripped, title_candidate=True)
    return None


def _bold(stripped: str) -> Line | None:
    """A whole-line bold heading ("**Decisions**") or a bold label ("**Date:** 12 March")."""
    if stripped[0] not in "*_":
        return None
    m = _BOLD_LINE.match(stripped)
    if m and len(m.group(1).split()) <= 12 and "**" not in m.group(1):
        inner = m.group(1).strip()
        lm = LABEL.match(inner)
        if lm and lm.group(2):
            label, value = lm.group(1).strip(), lm.group(2).strip()
            if TITLE_LABEL.match(label):
                return Line("title", text=clean(value), label=clean(label))
            return Line("section", text=label, values=(value,))
        return Line("section", text=inner.rstrip(":"), title_candidate=True)
    m = _BOLD_LABEL.match(stripped)
    if m and not BULLET.match(stripped):
        label, value = m.group(1).strip(), m.group(2).strip()
        if TITLE_LABEL.match(label) and value:
            return Line("title", text=clean(value), label=clean(label))
        if META_WORDS.match(label):
            return Line("meta", label=clean(label))
        if len(label.split()) <= 6:
            return Line("section", text=label, values=(value,) if value else ())
    return None


def _label(plain: str, lines: list[str], i: int) -> Line | None:
    """A label line: "Action items:", "Title: X", "Decisions: we keep X"."""
    m = LABEL.match(plain)
    if not m:
        return None
    label, value = m.group(1).strip(), m.group(2).strip()
    if TITLE_LABEL.match(label) and value and len(value.split()) <= 15:
        return Line("title", text=clean(value), label=label)
    k = section_kind(label)
    if not value and len(label.split()) <= 6 and (k != "other" or _next_is_list(lines, i)):
        return Line("section", text=label)
    if k in ("action", "decision", "meta", "topic") and len(label.split()) <= 4:
        if k == "action":
            values = tuple(part for part in _ACTION_PARTS.split(value) if part.strip())
        else:
            values = () if k == "meta" else (value,)
        return Line("section", text=label, values=values)
    return None


def _next_is_list(lines: list[str], i: int) -> bool:
    for j in range(i + 1, min(i + 4, len(lines))):
        s = lines[j].strip()
        if s:
            return bool(BULLET.match(s)) or s.startswith("|")
    return False
