"""parse_minutes as a line classifier plus a state machine (issue 34): frozen tricky cases.

The expected values were taken from the parser before the split (one 253-line function); the
rewrite gave identical results on ~30,000 model outputs and variations of them."""

from __future__ import annotations

import pytest

from evotrainer.tasks.meetings.lines import classify_line
from evotrainer.tasks.meetings.parser import parse_minutes

CASES = [
    (
        "Title: Weekly sync\nDecisions: keep the date; ship Friday\nAction items: Tom to send notes. Maria will book the room by Friday.",
        "Weekly sync",
        ("Title", "Decisions", "Action items"),
        (),
        ("keep the date; ship Friday",),
        (("Tom", "send notes", None), ("Maria", "book the room", "Friday")),
        (0, 0),
    ),
    (
        "**Title: Orion**\n**Date:** 12 March\n**Decisions**\nWe agreed on March 14.\n**Owner**: fix docs by end of the week",
        "Orion",
        ("Title", "Date", "Decisions", "Owner"),
        ("Owner",),
        ("We agreed on March 14.",),
        (),
        (0, 0),
    ),
    (
        "Orion sync\n==========\nKey points\n---\n- Pricing: agreed on 10\n- Tom Becker: update the slides",
        "Orion sync",
        ("Orion sync", "Key points"),
        ("Pricing: agreed on 10", "Tom Becker: update the slides"),
        ("Pricing: agreed on 10",),
        (),
        (2, 2),
    ),
    (
        "Notes\n- Decision: keep it\n- Action: Daniel checks legal\n- Date: 12 March\n- Action items:\n1. - [ ] review contract - Alice",
        None,
        ("Action items",),
        (),
        ("keep it",),
        ((None, "Daniel checks legal", None), ("Alice", "review contract", None)),
        (5, 5),
    ),
    (
        "| Owner | Task | Due |\n|---|---|---|\n| Maria | send budget | Friday |\n| Name | Task | |\n\n| Topic | Notes |\n| pricing | agreed |",
        None,
        (),
        ("pricing | agreed",),
        (),
        (("Maria", "send budget", "Friday"),),
        (0, 3),
    ),
    (
        "## 1. Next steps\nJane will prepare the deck by tomorrow. Tom will review it (due Monday).\n***\nIt was decided that we go with plan B. Then lunch.",
        None,
        ("Next steps",),
        (),
        (),
        (
            ("Jane", "prepare the deck", "tomorrow"),
            ("Tom", "review it", "Monday"),
            (None, "It was decided that we go with plan B", None),
            (None, "Then lunch", None),
        ),
        (0, 0),
    ),
    (
        "Tom Becker: Good morning everyone.\nMaria Lopez: I think we should go.\n- Priya: book the room\n- Tom: send the minutes",
        None,
        (),
        ("Priya: book the room", "Tom: send the minutes"),
        (),
        (("Priya", "book the room", None), ("Tom", "send the minutes", None)),
        (2, 2),
    ),
    (
        "Misc:\n- a) the team will decide next week.\n- [x] ship it (Bob)\nAgenda:\n| a | b |",
        None,
        ("Misc", "Agenda"),
        ("Misc", "the team will decide next week."),
        (),
        (("Bob", "ship it", None),),
        (2, 2),
    ),
    (
        "# Minutes: Budget review #\n### Summary\nword word word word word word word word word word word word word word word word word word word word word word word word word word\nshort topic line",
        "Budget review",
        ("Budget review", "Summary"),
        ("short topic line",),
        (),
        (),
        (0, 0),
    ),
    (
        "",
        None,
        (),
        (),
        (),
        (),
        (0, 0),
    ),
]


@pytest.mark.parametrize(
    ("text", "title", "sections", "topics", "decisions", "actions", "counts"), CASES
)
def test_frozen_cases(text, title, sections, topics, decisions, actions, counts) -> None:
    m = parse_minutes(text)
    assert m.title == title
    assert m.sections == sections
    assert m.topics == topics
    assert m.decisions == decisions
    assert tuple((a.owner, a.task, a.due) for a in m.action_items) == actions
    assert (m.bullets, len(m.items)) == counts
    assert m.text == text


@pytest.mark.parametrize(
    ("lines", "kind"),
    [
        (["", "x"], "blank"),
        (["|---|:--:|"], "table_sep"),
        (["| Owner | Task |"], "table_row"),
        (["***"], "rule"),
        (["## Decisions"], "section"),
        (["Orion", "====="], "section"),
        (["**Title:** Orion"], "title"),
        (["**Date:** 12 March"], "meta"),
        (["- send notes"], "bullet"),
        (["Misc:", "- a"], "section"),
        (["Misc:", "text"], "prose"),
        (["We agreed on it."], "prose"),
    ],
)
def test_classify_line(lines: list[str], kind: str) -> None:
    assert classify_line(lines, 0).kind == kind
