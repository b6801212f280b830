"""Loader: the JSONL meeting format, its errors, synthetic ground truth, and the real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evotrainer.errors import DataError
from evotrainer.tasks.meetings.loader import load_instances, load_meetings, save_meetings
from evotrainer.tasks.meetings.schema import ActionItem, Meeting, Topic, Turn
from tests.support import real_data

FIXTURES = Path(__file__).parent / "fixtures"


def _record(**over):
    rec = {
        "id": "m1",
        "source": "test",
        "transcript": [{"speaker": "Ann", "text": "Hello."}, {"speaker": "Bob", "text": "Hi."}],
        "references": {"summary": ["They met."], "decisions": ["Meet again."]},
        "meta": {},
    }
    rec.update(over)
    return rec


def _write(tmp_path: Path, lines: list[str], name: str = "m.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_minimal_record_and_defaults(tmp_path: Path) -> None:
    p = _write(tmp_path, [json.dumps(_record())])
    [m] = load_meetings(p)
    assert m.id == "m1" and m.source == "test"
    assert m.transcript == (Turn("Ann", "Hello."), Turn("Bob", "Hi."))
    assert m.summary == ("They met.",) and m.decisions == ("Meet again.",)
    assert m.has_action_items is False  # no "action_items" key in references
    assert m.topics == () and m.action_truth == ()


def test_has_action_items_and_na_placeholders(tmp_path: Path) -> None:
    rec = _record(references={"summary": "One string.", "action_items": ["*NA*"]})
    [m] = load_meetings(_write(tmp_path, [json.dumps(rec)]))
    assert m.has_action_items is True
    assert m.action_items == ()  # "*NA*" means "none"
    assert m.summary == ("One string.",)


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    a, b = json.dumps(_record(id="a")), json.dumps(_record(id="b"))
    ms = load_meetings(_write(tmp_path, ["", a, "   ", "", b, ""]))
    assert [m.id for m in ms] == ["a", "b"]


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("{not json", "bad JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({"id": "x", "references": {}}), 'missing "transcript"'),
        (json.dumps(_record(transcript=7)), '"transcript" must be a list of turns or a text'),
        (json.dumps(_record(transcript=[{"speaker": "A"}])), 'transcript[0] has no "text"'),
        (json.dumps(_record(transcript=[{"speaker": "A", "text": 3}])), "transcript[0].text"),
        (json.dumps(_record(transcript=[{"speaker": 5, "text": "x"}])), "transcript[0].speaker"),
        (json.dumps(_record(references=["x"])), '"references" must be an object'),
        (json.dumps(_record(references={"summary": [1]})), "references.summary[0]"),
        (json.dumps(_record(meta={"topics": [{"keywords": []}]})), "meta.topics[0]"),
        (json.dumps(_record(meta={"action_items": [{"owner": "A"}]})), "meta.action_items[0]"),
        (json.dumps({"transcript": []}), 'missing "id"'),
    ],
)
def test_malformed_line_names_file_line_and_problem(tmp_path: Path, line: str, needle: str) -> None:
    good = json.dumps(_record(id="ok"))
    p = _write(tmp_path, [good, "", line])
    with pytest.raises(DataError) as e:
        load_meetings(p)
    msg = str(e.value)
    assert str(p) in msg
    assert "line 3" in msg
    assert needle in msg


def test_a_transcript_may_be_one_text_of_speaker_lines(tmp_path: Path) -> None:
    """Issue 51: "Speaker: text" lines, as a table's ``:turns`` column is split; a line with
    no speaker continues the turn before it."""
    text = "Ann: The build is green.\nBo: I review the notes\ntoday.\n\nAnn: Thanks."
    [m] = load_meetings(_write(tmp_path, [json.dumps(_record(transcript=text))]))
    assert [(t.speaker, t.text) for t in m.transcript] == [
        ("Ann", "The build is green."),
        ("Bo", "I review the notes today."),
        ("Ann", "Thanks."),
    ]


def test_duplicate_id_is_an_error(tmp_path: Path) -> None:
    p = _write(tmp_path, [json.dumps(_record()), json.dumps(_record())])
    with pytest.raises(DataError, match=r"line 2: duplicate id"):
        load_meetings(p)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    p = tmp_path / "nope.jsonl"
    with pytest.raises(DataError, match="nope.jsonl"):
        load_meetings(p)


def test_synthetic_ground_truth_round_trip(tmp_path: Path) -> None:
    m = Meeting(
        id="syn-1",
        source="synthetic",
        transcript=(Turn("Ann", "Let's fix the budget."), Turn("Bob", "I'll send it Friday.")),
        summary=("Budget talk.",),
        decisions=("Keep the budget.",),
        action_items=("Bob: send the budget (due Friday)",),
        topics=(Topic("Budget", ("budget", "cost")),),
        action_truth=(ActionItem("Bob", "send the budget", "Friday"),),
        meta={"difficulty": 0.4, "kind": "planning", "private_data": ["a@b.org"]},
    )
    p = save_meetings(tmp_path / "sub" / "syn.jsonl", [m])
    [back] = load_meetings(p)
    assert back == m
    assert back.topics == m.topics and back.action_truth == m.action_truth
    assert "topics" not in back.meta and back.meta["private_data"] == ["a@b.org"]
    [inst] = load_instances(p)
    assert inst.id == "syn-1" and inst.payload == m
    assert inst.difficulty == 0.4 and inst.kind == "planning"
    assert inst.length_bucket == "short"


def test_fixture_meetings_load() -> None:
    ms = load_meetings(FIXTURES / "synthetic_meetings.jsonl")
    assert len(ms) == 3
    assert all(m.topics and m.action_truth for m in ms)


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("name", "n", "has_ai"),
    [("ami-dev.jsonl", 20, True), ("ami-train.jsonl", 102, True), ("icsi.jsonl", 61, False)],
)
def test_real_files_load(name: str, n: int, has_ai: bool) -> None:
    path = real_data(name)
    insts = load_instances(path)
    assert len(insts) == n
    with_ai = sum(i.payload.has_action_items for i in insts)
    assert with_ai >= 0.9 * n if has_ai else with_ai == 0  # a few AMI meetings lack the key
    assert all(len(i.payload.transcript) > 50 and i.payload.summary for i in insts)
    assert {i.length_bucket for i in insts} <= {"short", "medium", "long"}
    assert {i.source for i in insts} == {"AMI" if has_ai else "ICSI"}
    if has_ai:
        assert sum(len(i.payload.action_items) for i in insts) > n  # ~2.3 per meeting
        assert not any(
            a.strip("*. ").upper() == "NA" for i in insts for a in i.payload.action_items
        )
