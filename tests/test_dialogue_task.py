"""The dialogue task (issue 48): the simulated customer is deterministic and each persona
behaves as documented; rewards see the whole conversation; groundedness catches invented
values; the rule-based reference clerk scores high and a clerk that invents values low. On the
invented database (no data needed); tests/test_dialogue_data.py covers MultiWOZ itself."""

from __future__ import annotations

import random

import pytest

from evotrainer.llm.base import SamplingParams
from evotrainer.tasks.dialogue.clerk import inventing_clerk, reference_clerk
from evotrainer.tasks.dialogue.conversation import Conversation, DialogueGoal, replay
from evotrainer.tasks.dialogue.generator import DialogueGenerator
from evotrainer.tasks.dialogue.goals import DomainGoal, Goal
from evotrainer.tasks.dialogue.invented_db import invented_database
from evotrainer.tasks.dialogue.items import ReplyItem, score_reply, synthetic_items
from evotrainer.tasks.dialogue.ontology import checkable_values, mentions, requested_slots
from evotrainer.tasks.dialogue.personas import CHATTER, KINDS
from evotrainer.tasks.dialogue.render import CLERK, CUSTOMER, clerk_messages, clerk_reply
from evotrainer.tasks.dialogue.task import DialogueTask
from evotrainer.types import Instance, Rollout, Turn

DB = invented_database()
RESTAURANT = DB.rows["restaurant"][3]


def restaurant_goal(**extra) -> Goal:
    info = tuple((k, RESTAURANT[k]) for k in ("food", "pricerange", "area"))
    return Goal((DomainGoal("restaurant", info, ("phone", "postcode"), **extra),))


def payload(persona: str, goal: Goal | None = None, seed: int = 7) -> DialogueGoal:
    return DialogueGoal(goal or restaurant_goal(), persona, 0.5, seed)


def talk(p: DialogueGoal, clerk=None, max_turns: int = 10) -> tuple[Conversation, list]:
    """A conversation with ``clerk`` (default: the reference clerk); the (reply, turn) log."""
    clerk = clerk or reference_clerk()
    conv = Conversation(p, DB)
    history = [(CUSTOMER, conv.opening().text)]
    log = []
    for _ in range(max_turns):
        prompt = clerk_messages(history, conv.view().text(), "Be exact.")
        reply = clerk_reply(clerk.complete(prompt, SamplingParams()).text)
        turn = conv.step(reply)
        log.append((reply, turn))
        history += [(CLERK, reply), (CUSTOMER, turn.text)]
        if turn.done:
            break
    return conv, log


def instance(p: DialogueGoal) -> Instance:
    return Instance("dlg-test", p, kind=p.persona)


# -- the simulator is deterministic ---------------------------------------------------------
def test_the_same_seed_gives_the_same_conversation_and_the_generator_the_same_customers():
    a, log_a = talk(payload("chatty"))
    b, log_b = talk(payload("chatty"))
    assert [(r, t.text, t.acts) for r, t in log_a] == [(r, t.text, t.acts) for r, t in log_b]
    assert a.episode() == b.episode()
    other = talk(payload("chatty", seed=8))[1]
    assert [t.text for _, t in other] != [t.text for _, t in log_a]  # chatter differs by seed
    gen = DialogueGenerator(DB)
    first = gen.sample(6, 0.6, random.Random(3))
    again = gen.sample(6, 0.6, random.Random(3))
    assert [(i.id, i.payload) for i in first] == [(i.id, i.payload) for i in again]
    assert [i.id for i in gen.sample(6, 0.6, random.Random(4))] != [i.id for i in first]


def test_a_replay_of_the_replies_is_the_conversation():
    conv, log = talk(payload("indecisive"))
    assert replay(payload("indecisive"), DB, [r for r, _ in log], 5) == conv.episode()


def test_the_mix_decides_the_personas_and_difficulty_the_goals():
    gen = DialogueGenerator(DB)
    only = gen.sample(20, 0.5, random.Random(1), {"terse": 1.0, "chatty": 0.0})
    assert {i.kind for i in only} == {"terse"}
    easy = gen.sample(30, 0.0, random.Random(2))
    hard = gen.sample(30, 1.0, random.Random(2))
    n = lambda xs: sum(len(i.payload.goal.domains) for i in xs)  # noqa: E731
    assert n(easy) < n(hard)
    assert sum(bool(d.fail_info) for i in hard for d in i.payload.goal.domains) > 0
    assert all(not d.fail_info for i in easy for d in i.payload.goal.domains)


# -- each persona behaves as documented -----------------------------------------------------
def test_each_persona_opens_as_its_row_says():
    conv = {k: Conversation(payload(k), DB) for k in KINDS}
    opened = {k: c.opening() for k, c in conv.items()}
    revealed = {k: len(c.user.current.revealed) for k, c in conv.items()}
    assert revealed == {"cooperative": 2, "terse": 1, "impatient": 3, "indecisive": 1, "chatty": 2}
    assert len(opened["terse"].text.split()) <= 3
    assert any(line in opened["chatty"].text for line in CHATTER)
    assert not any(line in opened["cooperative"].text for line in CHATTER)


def test_an_unhelpful_clerk_loses_the_impatient_customer_first():
    useless = type(
        "Useless", (), {"complete": lambda self, m, p: type("C", (), {"text": "Hello."})()}
    )()
    turns = {}
    for k in KINDS:
        conv, log = talk(payload(k), useless, max_turns=30)
        assert log[-1][1].outcome == "left", k
        assert conv.episode().success == 0.0 and conv.episode().mood is not None
        turns[k] = len(log)
    assert turns["impatient"] < turns["cooperative"] <= turns["chatty"]


def test_the_cooperative_customer_answers_a_question_and_the_impatient_one_does_not():
    for persona, answers in (("cooperative", True), ("impatient", False)):
        conv = Conversation(payload(persona, seed=1), DB)
        conv.opening()
        user = conv.user
        hidden = [k for k in user.current.constraints if k not in user.current.revealed]
        turn = conv.step("Sure. What price range would you like?")
        assert ("answer pricerange" in " ".join(turn.acts)) == (answers and "pricerange" in hidden)


def test_the_indecisive_customer_changes_its_mind_once_after_an_offer():
    conv, log = talk(payload("indecisive"))
    acts = [a for _, t in log for a in t.acts]
    assert sum(a.startswith("change ") for a in acts) == 1
    assert conv.episode().success == 1.0  # the reference clerk follows the change


def test_a_failing_first_choice_and_a_failing_booking_are_given_up_after_an_apology():
    failing = tuple(
        (k, "nowhere" if k == "area" else v) for k, v in restaurant_goal().domains[0].info
    )
    book = (("people", "2"), ("day", "friday"), ("time", "19:00"))
    goal = restaurant_goal(book=book, fail_info=failing, fail_book=(("time", "20:00"),))
    conv, log = talk(payload("cooperative", goal))
    acts = [a for _, t in log for a in t.acts]
    assert "fallback" in acts and "booking fallback" in acts
    e = conv.episode()
    assert e.success == 1.0 and e.booked == 1.0


# -- rewards and the metric see the whole conversation -------------------------------------
def test_the_rewards_see_a_value_given_before_the_last_reply():
    task = DialogueTask(DB)
    p = payload("cooperative", restaurant_goal(book=(("people", "2"), ("day", "friday"))))
    _, log = talk(p)
    replies = [r for r, _ in log]
    assert "reference" in replies[-1] and not mentions(replies[-1], "phone", RESTAURANT["phone"])
    rollout = Rollout("p", "dlg-test", replies[-1], turns=tuple(Turn(r) for r in replies))
    parsed = task.parse_episode(instance(p), rollout)
    comps = task.reward_components()
    assert comps["requests"].score(instance(p), rollout.output, parsed).score == 1.0
    assert comps["success"].score(instance(p), rollout.output, parsed).score == 1.0
    # the last reply alone is not the episode
    alone = comps["requests"].score(instance(p), rollout.output, None)
    assert alone.score < 1.0
    row = task.validation_metric().score(instance(p), rollout.output, parsed)
    assert row["success"] == 1.0 and row["request_recall"] == 1.0


def test_conversation_components_do_not_apply_to_a_single_reply_item():
    task = DialogueTask(DB)
    item = synthetic_items(DB, 1, random.Random(0))[0]
    inst = Instance("synthetic-0:2", item, kind="reply")
    scores = {n: c.score(inst, "Hello.", None) for n, c in task.reward_components().items()}
    assert {n for n, s in scores.items() if not s.applicable} >= {
        "success",
        "efficiency",
        "patience",
        "mood",
    }
    assert scores["requests"].applicable and scores["requests"].score == 0.0


# -- groundedness ----------------------------------------------------------------------------
def test_groundedness_catches_an_invented_phone_number():
    item = ReplyItem(
        "d1", 2, ((CUSTOMER, "What is their phone number?"),), "restaurant",
        (("food", RESTAURANT["food"]),), ("phone",), RESTAURANT["name"],
    )  # fmt: skip
    right = score_reply(item, f"Their phone is {RESTAURANT['phone']}.", DB, 5)
    assert right.grounded == 1.0 and right.requests == 1.0 and right.invented == ()
    made_up = score_reply(item, "Their phone is 01223 999111.", DB, 5)
    assert made_up.grounded == 0.0 and made_up.requests == 0.0
    assert made_up.invented == ("01223999111",)
    assert score_reply(item, "Happy to help.", DB, 5).grounded is None  # nothing to check
    conv = Conversation(payload("cooperative"), DB)
    conv.opening()
    conv.view()
    conv.step(f"Try {RESTAURANT['name']}, call 01223 999111 or postcode cb9 9zz.")
    e = conv.episode()
    assert e.grounded == 0.0 and set(e.invented) == {"01223999111", "cb99zz"}


def test_values_are_read_however_they_are_written():
    assert checkable_values("Call 01223 315 702, CB1 2DP, ref 8H2KQ1ZB, train tr 1234") == {
        "01223315702", "cb12dp", "8h2kq1zb", "tr1234",
    }  # fmt: skip
    assert mentions("It leaves at 9:05.", "leaveAt", "09:05")
    assert mentions("A 4-star guest house", "stars", "4") and mentions(
        "a guest house", "type", "guesthouse"
    )
    assert not mentions("at least", "area", "east")
    assert requested_slots("I want a cheap place in the centre.", "restaurant") == []
    assert requested_slots("What is the postcode and phone number?", "restaurant") == [
        "postcode",
        "phone",
    ]


# -- the reference clerk proves the environment; an inventing clerk scores low ---------------
def _scores(clerk, n: int = 20) -> dict[str, float]:
    gen = DialogueGenerator(DB)
    eps = [
        talk(i.payload, clerk)[0].episode()
        for i in gen.sample(n, 0.3, random.Random(5), {"cooperative": 1})
    ]
    grounded = [e.grounded for e in eps if e.grounded is not None]
    return {
        "success": sum(e.success or 0 for e in eps) / n,
        "grounded": sum(grounded) / len(grounded),
    }


def test_the_reference_clerk_succeeds_and_the_inventing_clerk_does_not():
    ref, inv = _scores(reference_clerk()), _scores(inventing_clerk())
    assert ref["success"] >= 0.8 and ref["grounded"] == 1.0
    assert inv["success"] <= 0.3 and inv["grounded"] <= 0.1
    items = synthetic_items(DB, 30, random.Random(9))
    recall = {}
    for name, clerk in (("ref", reference_clerk()), ("inv", inventing_clerk())):
        got = []
        for it in items:
            prompt = clerk_messages(it.context, it.view(DB, 5).text(), "x")
            got.append(
                score_reply(it, clerk_reply(clerk.complete(prompt, SamplingParams()).text), DB, 5)
            )
        recall[name] = sum(e.requests or 0 for e in got) / len(got)
    assert recall["ref"] >= 0.9 and recall["inv"] <= 0.5


@pytest.mark.parametrize("text", ["", "Clerk: Hello.\nCustomer: hi\nClerk: more"])
def test_the_clerks_reply_stops_where_the_model_writes_the_customers_part(text):
    assert clerk_reply(text) == ("" if not text else "Hello.")


def test_the_patience_gene_reaches_the_customers_and_the_outer_loop_moves_it():
    """Issue 48's persona genes as issue 49's gene table: the task declares ``patience``; the
    batch source hands the generator every gene; a less patient customer leaves an unhelpful
    clerk sooner; the outer loop's random steps move the gene within its bounds."""
    from dataclasses import replace

    from evotrainer.config import config_from_dict
    from evotrainer.harness.genes import gene_table, initial_genes
    from evotrainer.harness.genome import HarnessBounds, HarnessGenome
    from evotrainer.harness.training_set import BatchSource
    from evotrainer.loops.outer import HarnessOptimizer
    from evotrainer.loops.rng import stream
    from evotrainer.tasks.dialogue.personas import PATIENCE

    useless = type(
        "Useless", (), {"complete": lambda self, m, p: type("C", (), {"text": "Hello."})()}
    )()
    long = len(talk(replace(payload("cooperative"), patience=1.6), useless, 40)[1])
    short = len(talk(replace(payload("cooperative"), patience=0.6), useless, 40)[1])
    assert short < long
    # the default keeps the ids instances had before the gene
    assert instance(payload("terse")).id == instance(replace(payload("terse"), patience=1.0)).id

    task = DialogueTask(db=DB)
    cfg = config_from_dict({"task": {"name": "dialogue"}, "outer": {"variants": 4}})
    table = gene_table(cfg.harness, cfg.outer, task, real_pool=False)
    assert table["patience"] == PATIENCE
    h = HarnessGenome({"success": 1.0}, {**initial_genes(table), "patience": 0.7})
    batch = BatchSource(task.generator()).sample(4, h, random.Random(3))
    assert {i.payload.patience for i in batch} == {0.7}
    opt = HarnessOptimizer(cfg.outer, h, HarnessBounds(1.0, table), stream(0, "g"), ("success",))
    from evotrainer.loops.weakness import WeaknessReport

    report = WeaknessReport(
        s_val=0.1, s_val_by_length={}, train_reward=0.5, train_components={}, validation={}
    )
    moved = {v.genes["patience"] for v in opt.ask(report)}
    assert moved - {0.7} and all(0.6 <= g <= 1.6 for g in moved)
