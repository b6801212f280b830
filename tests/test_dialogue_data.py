"""The dialogue task on MultiWOZ itself (skipped where ../shared/data/dialogue is absent): the
validation items, the goals, and the reference clerk's scores that prove the simulator, the
rewards and the metric (docs/dialogue.md's table comes from benchmarks/dialogue_reference.py)."""

from __future__ import annotations

import pytest

from evotrainer.llm.base import SamplingParams
from evotrainer.tasks.dialogue.clerk import inventing_clerk, reference_clerk
from evotrainer.tasks.dialogue.database import load_database
from evotrainer.tasks.dialogue.loader import load_goals, load_items
from evotrainer.tasks.dialogue.render import clerk_messages
from evotrainer.tasks.dialogue.task import DialogueTask
from evotrainer.types import Rollout, Turn
from tests.support import real_dialogues


@pytest.fixture(scope="module")
def db():
    return load_database(real_dialogues("db"))


def test_the_validation_items_are_human_turns_that_ask_for_a_slot_the_clerk_gave(db):
    items = load_items(real_dialogues("val.json.gz"), db)
    assert len(items) > 1000 and len({i.id for i in items}) == len(items)
    assert {i.payload.domain for i in items} == {"restaurant", "hotel", "attraction", "train"}
    assert all(i.payload.requested and i.payload.human_reply for i in items)
    assert len(load_goals(real_dialogues("val.json.gz"), db)) == 999
    assert len(load_goals(real_dialogues("test-dev.json.gz"), db)) == 509


def _recall(db, clerk, items):
    """The metric's aggregates, and the share of the replies giving a checkable value that
    gave only shown ones."""
    task = DialogueTask(db)
    metric = task.validation_metric()
    rows, checked = [], []
    for inst in items:
        it = inst.payload
        prompt = clerk_messages(it.context, it.view(db, 5).text(), "x")
        text = clerk.complete(prompt, SamplingParams()).text
        episode = task.parse_episode(inst, Rollout("p", inst.id, text))
        rows.append(metric.score(inst, text, episode))
        if episode.grounded is not None:
            checked.append(episode.grounded)
    return metric.aggregate(rows), sum(checked) / len(checked)


def test_the_reference_clerk_answers_the_items_and_an_inventing_clerk_does_not(db):
    items = load_items(real_dialogues("val.json.gz"), db)[:200]
    ref, ref_checked = _recall(db, reference_clerk(), items)
    inv, inv_checked = _recall(db, inventing_clerk(), items)
    assert ref["request_recall"] >= 0.9 and ref["inform_match"] >= 0.9
    assert ref["grounded"] == 1.0 and ref_checked == 1.0
    assert inv_checked == 0.0 and inv["grounded"] <= 0.4 and inv["request_recall"] <= 0.5


def test_the_reference_clerk_succeeds_with_the_cooperative_customer_on_test_goals(db):
    task = DialogueTask(db, max_turns=12, validate_on="goals")
    goals = task.load(real_dialogues("test-dev.json.gz"))[:40]
    clerk = reference_clerk()
    metric = task.validation_metric()
    rows = []
    for inst in goals:
        t = task.rollout("x", inst, clerk, SamplingParams())
        rollout = Rollout("p", inst.id, t.output, turns=tuple(Turn(x.output) for x in t.turns))
        rows.append(metric.score(inst, t.output, task.parse_episode(inst, rollout)))
    agg = metric.aggregate(rows)
    assert agg["success"] >= 0.7 and agg["grounded"] == 1.0
