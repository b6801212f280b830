"""Read and write meeting files in the JSONL format of shared/data/meetings.

One JSON object per line (blank lines are skipped)::

    {"id": "ES2003a", "source": "AMI",
     "transcript": [{"speaker": "Project Manager (B)", "text": "..."}, ...],
     "references": {"summary": [...], "action_items": [...], "decisions": [...]},
     "meta": {...}}

Rules:
- ``id`` and ``transcript`` are required; ``source`` defaults to the file's stem, ``references``
  and ``meta`` to empty objects. Reference fields may be a list of strings or one string.
- ``transcript`` may also be one text of "Speaker: text" lines (a line without a speaker
  continues the turn before it), split into turns as a table's ``:turns`` column is.
- Free-form reference minutes, ``references.minutes`` (or a top-level ``minutes``), one text or
  a list of lines, are the most common reference people have: their non-empty lines are read as
  ``summary`` lines (ROUGE compares against them; action-item and decision metrics need the
  structured fields).
- ``has_action_items`` is ``"action_items" in references`` (ICSI has none, AMI has them).
- AMI writes "*NA*" / "NA." when a meeting has no action items or decisions; such placeholders are
  dropped, so the reference list is empty but ``has_action_items`` stays True.
- Synthetic files carry ground truth in ``meta.topics`` ([{"title", "keywords"}]) and
  ``meta.action_items`` ([{"owner", "task", "due"}]); these are read back into ``Meeting.topics``
  and ``Meeting.action_truth`` (and left out of ``Meeting.meta``, as ``Meeting.to_json`` puts
  them back).
- ``load_instances`` wraps each meeting with the generator's ``meeting_instance`` (difficulty and
  kind from ``meta`` when present, length bucket from the word count).
- Any malformed record raises ``DataError`` naming the file, the line number and the problem; a
  missing file raises ``DataError`` naming the path.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evotrainer.errors import DataError
from evotrainer.tasks.meetings.generator import meeting_instance
from evotrainer.tasks.meetings.schema import ActionItem, Meeting, Topic, Turn
from evotrainer.tasks.tabular import text_turns
from evotrainer.types import Instance

__all__ = ["load_meetings", "load_instances", "save_meetings", "parse_meeting_record"]

_NA = re.compile(r"^\W*n/?a\W*$", re.IGNORECASE)


class _RecordError(ValueError):
    """A problem inside one record; the loader adds file and line."""


def _str_list(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise _RecordError(f"{where} must be a list of strings, got {type(value).__name__}")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _RecordError(f"{where}[{i}] must be a string, got {type(item).__name__}")
        item = item.strip()
        if item and not _NA.match(item):
            out.append(item)
    return tuple(out)


def _minutes(value: Any, where: str) -> tuple[str, ...]:
    """Free-form reference minutes (one text, or a list of lines): their non-empty lines."""
    if isinstance(value, str):
        value = value.splitlines()
    return _str_list(value, where)


def _topics(value: Any) -> tuple[Topic, ...]:
    if not isinstance(value, list):
        raise _RecordError(f"meta.topics must be a list, got {type(value).__name__}")
    out = []
    for i, t in enumerate(value):
        if isinstance(t, str):
            out.append(Topic(title=t, keywords=()))
            continue
        if not isinstance(t, dict) or not isinstance(t.get("title"), str):
            raise _RecordError(f'meta.topics[{i}] must be an object with a string "title"')
        kws = t.get("keywords", [])
        if not isinstance(kws, list) or not all(isinstance(k, str) for k in kws):
            raise _RecordError(f"meta.topics[{i}].keywords must be a list of strings")
        out.append(Topic(title=t["title"], keywords=tuple(kws)))
    return tuple(out)


def _action_truth(value: Any) -> tuple[ActionItem, ...]:
    if not isinstance(value, list):
        raise _RecordError(f"meta.action_items must be a list, got {type(value).__name__}")
    out = []
    for i, a in enumerate(value):
        if (
            not isinstance(a, dict)
            or not isinstance(a.get("owner"), str)
            or not isinstance(a.get("task"), str)
        ):
            raise _RecordError(
                f'meta.action_items[{i}] must be an object with string "owner" and "task"'
            )
        due = a.get("due")
        if due is not None and not isinstance(due, str):
            raise _RecordError(f"meta.action_items[{i}].due must be a string or null")
        out.append(ActionItem(owner=a["owner"], task=a["task"], due=due))
    return tuple(out)


def parse_meeting_record(obj: Any, default_source: str = "unknown") -> Meeting:
    """Build a Meeting from one decoded JSON object; raises ValueError saying what is wrong."""
    if not isinstance(obj, dict):
        raise _RecordError(f"expected a JSON object, got {type(obj).__name__}")
    mid = obj.get("id")
    if mid is None:
        raise _RecordError('missing "id"')
    if not isinstance(mid, str | int) or isinstance(mid, bool) or str(mid).strip() == "":
        raise _RecordError('"id" must be a non-empty string')
    mid = str(mid)
    source = obj.get("source", default_source)
    if not isinstance(source, str):
        raise _RecordError(f'"source" must be a string, got {type(source).__name__}')
    if "transcript" not in obj:
        raise _RecordError('missing "transcript"')
    raw_turns = text_turns(obj["transcript"])  # one text of "Speaker: text" lines, or turns
    if not isinstance(raw_turns, list):
        raise _RecordError(
            f'"transcript" must be a list of turns or a text, got {type(raw_turns).__name__}'
        )
    turns = []
    for i, t in enumerate(raw_turns):
        if not isinstance(t, dict):
            raise _RecordError(f"transcript[{i}] must be an object, got {type(t).__name__}")
        if "text" not in t:
            raise _RecordError(f'transcript[{i}] has no "text"')
        text, speaker = t["text"], t.get("speaker", "")
        if not isinstance(text, str):
            raise _RecordError(f"transcript[{i}].text must be a string, got {type(text).__name__}")
        if speaker is None:
            speaker = ""
        if not isinstance(speaker, str):
            raise _RecordError(
                f"transcript[{i}].speaker must be a string, got {type(speaker).__name__}"
            )
        turns.append(Turn(speaker=speaker.strip() or "Unknown", text=text.strip()))
    refs = obj.get("references", {})
    if refs is None:
        refs = {}
    if not isinstance(refs, dict):
        raise _RecordError(f'"references" must be an object, got {type(refs).__name__}')
    meta = obj.get("meta", {})
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise _RecordError(f'"meta" must be an object, got {type(meta).__name__}')
    meta = dict(meta)
    topics = _topics(meta.pop("topics")) if "topics" in meta else ()
    truth = _action_truth(meta.pop("action_items")) if "action_items" in meta else ()
    summary = _str_list(refs.get("summary"), "references.summary")
    if "minutes" in refs:
        summary += _minutes(refs["minutes"], "references.minutes")
    elif "minutes" in obj:
        summary += _minutes(obj["minutes"], "minutes")
    return Meeting(
        id=mid,
        source=source,
        transcript=tuple(turns),
        summary=summary,
        decisions=_str_list(refs.get("decisions"), "references.decisions"),
        action_items=_str_list(refs.get("action_items"), "references.action_items"),
        has_action_items="action_items" in refs,
        topics=topics,
        action_truth=truth,
        meta=meta,
    )


def _iter_records(path: str | Path) -> Iterable[tuple[int, Any]]:
    p = Path(path)
    if not p.exists():
        raise DataError(f"meetings file not found: {p}")
    if not p.is_file():
        raise DataError(f"meetings path is not a file: {p}")
    try:
        fh = p.open("rb")
    except OSError as e:
        raise DataError(f"cannot read meetings file {p}: {e}") from e
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:  # decoded line by line: the error names its line
                raise DataError(
                    f"{p}, line {lineno}: not valid UTF-8 ({e.reason} at byte {e.start})"
                ) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if _SURROGATE_ESCAPE.search(line):
                    obj = _valid_text(obj)
            except (ValueError, RecursionError) as e:
                raise DataError(f"{p}, line {lineno}: bad JSON: {_json_problem(e)}") from None
            yield lineno, obj


# a JSON escape of a UTF-16 surrogate (\ud800-\udfff): alone, it is not a character
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(obj: Any) -> Any:
    """``obj`` with every lone surrogate in its strings replaced by U+FFFD (it cannot be encoded:
    the cache key, the run's files and the console all need valid text)."""
    if isinstance(obj, str):
        return _SURROGATE.sub("\ufffd", obj)
    if isinstance(obj, list):
        return [_valid_text(v) for v in obj]
    if isinstance(obj, dict):
        return {_valid_text(k): _valid_text(v) for k, v in obj.items()}
    return obj


def _json_problem(e: Exception) -> str:
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} (column {e.colno})"
    if isinstance(e, RecursionError):
        return "nested too deeply"
    if "digits" in str(e):  # int() refuses numbers of more than sys.get_int_max_str_digits()
        return f"a number with more than {sys.get_int_max_str_digits()} digits"
    return str(e)


def load_meetings(path: str | Path) -> list[Meeting]:
    """All meetings of a JSONL file, in file order. Raises DataError on the first bad line."""
    p = Path(path)
    stem = p.name.split(".")[0] or "unknown"
    meetings = []
    seen: dict[str, int] = {}
    for lineno, obj in _iter_records(p):
        try:
            m = parse_meeting_record(obj, default_source=stem)
        except _RecordError as e:
            raise DataError(f"{p}, line {lineno}: {e}") from None
        if m.id in seen:
            raise DataError(
                f'{p}, line {lineno}: duplicate id "{m.id}" (first on line {seen[m.id]})'
            )
        seen[m.id] = lineno
        meetings.append(m)
    return meetings


def load_instances(path: str | Path) -> list[Instance]:
    """The meetings of a JSONL file wrapped as Instances (difficulty/kind from meta if set)."""
    return [meeting_instance(m) for m in load_meetings(path)]


def save_meetings(path: str | Path, meetings: Iterable[Meeting]) -> Path:
    """Write meetings as JSONL (UTF-8, one object per line); creates parent folders."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for m in meetings:
            fh.write(json.dumps(m.to_json(), ensure_ascii=False) + "\n")
    return p
