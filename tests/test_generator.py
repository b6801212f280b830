"""The synthetic meeting generator: determinism, variety, difficulty, ground truth, mix, hostile
content, and the vocabulary's own rules."""

from __future__ import annotations

import json
import random
import re
import statistics
import string

import pytest

from evotrainer.errors import ConfigError
from evotrainer.tasks.base import TaskGenerator
from evotrainer.tasks.meetings import vocabulary as V
from evotrainer.tasks.meetings.generator import (
    GENERATOR_NAME,
    KINDS,
    MeetingGenerator,
    length_bucket,
    meeting_instance,
)
from evotrainer.tasks.meetings.schema import Meeting

GEN = MeetingGenerator()


def _mean_words(difficulty: float, n: int = 40, seed: int = 7) -> float:
    rng = random.Random(seed)
    return statistics.mean(GEN.meeting(difficulty, rng).word_count for _ in range(n))


@pytest.fixture(scope="module")
def mid_batch() -> list[Meeting]:
    """2,000 meetings at L = 0.5 from one seed (about 4 s)."""
    rng = random.Random(20240501)
    return [inst.payload for inst in GEN.sample(2000, 0.5, rng)]


@pytest.fixture(scope="module")
def mixed_batch() -> list[Meeting]:
    """Meetings across the difficulty range and all kinds, some hostile."""
    rng = random.Random(99)
    gen = MeetingGenerator(hostile_share=0.3)
    out = []
    for i in range(150):
        out += [inst.payload for inst in gen.sample(1, (i % 11) / 10, rng)]
    return out


# --------------------------------------------------------------------------------- determinism


def test_same_seed_same_meetings_different_seed_different():
    a = [i.payload.to_json() for i in GEN.sample(25, 0.6, random.Random(1))]
    b = [i.payload.to_json() for i in GEN.sample(25, 0.6, random.Random(1))]
    c = [i.payload.to_json() for i in GEN.sample(25, 0.6, random.Random(2))]
    assert a == b
    assert all(x != y for x, y in zip(a, c, strict=True))


def test_global_random_state_is_not_used():
    random.seed(1)
    a = GEN.meeting(0.7, random.Random(5), hostile=True).to_json()
    random.seed(12345)
    random.random()
    b = GEN.meeting(0.7, random.Random(5), hostile=True).to_json()
    assert a == b


def test_ids_come_from_the_rng():
    m = GEN.meeting(0.3, random.Random(3), kind="status")
    assert re.fullmatch(r"syn-status-[0-9a-f]{12}", m.id)
    assert GEN.meeting(0.3, random.Random(3), kind="status", id="fixed").id == "fixed"


def test_one_stream_at_two_difficulties_gives_two_ids():
    """Sibling harness trials draw their batches from one seed at their own difficulty: two
    different meetings under one id would share one (policy, instance) record in the store."""
    a = GEN.meeting(0.30, random.Random(3), kind="status")
    b = GEN.meeting(0.35, random.Random(3), kind="status")
    assert a.to_json() != b.to_json() and a.id != b.id
    assert GEN.meeting(0.30, random.Random(3), kind="status").id == a.id


# --------------------------------------------------------------------------------- variety


def test_two_thousand_meetings_are_all_different(mid_batch):
    assert len({m.transcript for m in mid_batch}) == len(mid_batch)
    assert len({m.id for m in mid_batch}) == len(mid_batch)
    assert len({m.summary for m in mid_batch}) == len(mid_batch)


def test_many_distinct_topics_and_phrasings(mid_batch):
    titles = {t.title for m in mid_batch for t in m.topics}
    assert len(titles) >= 300, len(titles)
    assert len({m.meta["domain"] for m in mid_batch}) >= 10
    # the first sentence that names the first topic (all its keywords): >= 80 % distinct
    firsts = []
    for m in mid_batch:
        kws = [k.lower() for k in m.topics[0].keywords]
        turn = next(t.text for t in m.transcript if all(k in t.text.lower() for k in kws))
        sentences = re.split(r"(?<=[.?!])\s+", turn)
        firsts.append(next((x for x in sentences if all(k in x.lower() for k in kws)), turn))
    assert len(set(firsts)) >= 0.8 * len(firsts), len(set(firsts))
    # long turns are rarely verbatim repeats of each other across the whole batch
    long_turns = [
        t.text for m in mid_batch[:300] for t in m.transcript if len(t.text.split()) >= 12
    ]
    assert len(set(long_turns)) >= 0.9 * len(long_turns)


# --------------------------------------------------------------------------------- difficulty


def test_word_counts_grow_with_difficulty():
    means = [_mean_words(level) for level in (0.0, 0.25, 0.5, 0.75, 1.0)]
    assert means == sorted(means), means
    assert 100 <= means[0] <= 230, means
    assert 2400 <= means[-1] <= 3600, means


def test_structure_grows_with_difficulty():
    def stats(level: float) -> dict[str, float]:
        rng = random.Random(17)
        ms = [GEN.meeting(level, rng) for _ in range(60)]
        words = sum(m.word_count for m in ms)
        text = " ".join(t.text for m in ms for t in m.transcript).lower()
        fillers = len(re.findall(r"(?<![\w-])(um|uh|er)(?![\w-])", text))
        return {
            "topics": statistics.mean(len(m.topics) for m in ms),
            "speakers": statistics.mean(len(m.speakers) for m in ms),
            "actions": statistics.mean(len(m.action_truth) for m in ms),
            "offtopic": statistics.mean(m.meta["knobs"]["offtopic_share"] for m in ms),
            "fillers": fillers / words,
            "max_topics": max(len(m.topics) for m in ms),
            "max_speakers": max(len(m.speakers) for m in ms),
        }

    low, mid, high = stats(0.0), stats(0.5), stats(1.0)
    assert low["max_topics"] <= 2 and high["topics"] >= 4.5
    assert low["max_speakers"] <= 3 and high["speakers"] >= 6.5
    assert low["actions"] < mid["actions"] < high["actions"]
    assert low["offtopic"] == 0 and 0.25 <= high["offtopic"] <= 0.45
    assert low["fillers"] == 0 and low["fillers"] < mid["fillers"] < high["fillers"]


def test_easy_meetings_state_decisions_and_tasks_verbatim():
    rng = random.Random(8)
    for _ in range(40):
        m = GEN.meeting(0.0, rng)
        text = m.transcript_text()
        for a in m.action_truth:
            assert a.task[0].lower() + a.task[1:] in text
        assert m.decisions


def test_hard_meetings_have_owners_who_did_not_get_named_in_the_task_turn():
    """At L = 1 many action items are implicit: the owner is whoever agreed, so the turn that
    contains the task is often not the owner's and does not name them."""
    rng = random.Random(9)
    implicit = total = 0
    for _ in range(30):
        m = GEN.meeting(1.0, rng)
        labels = {p["name"]: p["label"] for p in m.meta["participants"]}
        for a in m.action_truth:
            task = a.task[0].lower() + a.task[1:]
            turns = [t for t in m.transcript if task.split()[0] in t.text]
            total += 1
            if not any(t.speaker == labels[a.owner] or a.owner in t.text for t in turns):
                implicit += 1
    assert implicit >= 0.15 * total, (implicit, total)


def test_at_most_seven_action_items_and_some_above_five_when_hard():
    rng = random.Random(10)
    counts = [len(GEN.meeting(1.0, rng).action_truth) for _ in range(80)]
    assert max(counts) <= 7 and min(counts) >= 1
    assert any(c > 5 for c in counts)


# --------------------------------------------------------------------------------- ground truth


def test_ground_truth_is_consistent(mixed_batch):
    for m in mixed_batch:
        names = {p["name"]: p["label"] for p in m.meta["participants"]}
        speakers = set(m.speakers)
        assert set(names.values()) == speakers  # every participant speaks
        text = m.transcript_text().lower()
        assert 1 <= len(m.topics) <= 6
        for topic in m.topics:
            assert 2 <= len(topic.keywords) <= 5
            for kw in topic.keywords:
                assert re.search(r"\b" + re.escape(kw.lower()), text), (m.id, kw)
            assert topic.title.lower() in m.summary[0].lower()
        assert 1 <= len(m.action_truth) <= 7
        for a in m.action_truth:
            assert a.owner in names and names[a.owner] in speakers
            assert a.task and a.task[0].isupper()
        assert m.action_items == tuple(a.as_text() for a in m.action_truth)
        assert m.decisions and all(d.endswith(".") for d in m.decisions)
        assert m.meta["generator"] == GENERATOR_NAME and m.meta["kind"] in KINDS
        assert m.source == "synthetic"
        blob = m.to_json()
        assert json.loads(json.dumps(blob)) == blob
        assert blob["meta"]["topics"] and blob["meta"]["action_items"]


def test_instances_wrap_meetings():
    insts = GEN.sample(30, 0.9, random.Random(12))
    for inst in insts:
        m = inst.payload
        assert inst.id == m.id and inst.source == "synthetic"
        assert inst.difficulty == 0.9 and inst.kind == m.meta["kind"]
        assert inst.length_bucket == length_bucket(m.word_count)
    assert {i.length_bucket for i in insts} >= {"medium"}
    again = meeting_instance(insts[0].payload)
    assert again.kind == insts[0].kind and again.difficulty == 0.9
    assert isinstance(GEN, TaskGenerator)


def test_length_buckets():
    assert length_bucket(999) == "short"
    assert length_bucket(1000) == "medium"
    assert length_bucket(2999) == "medium"
    assert length_bucket(3000) == "long"


# --------------------------------------------------------------------------------- mix


def test_mix_selects_kinds():
    insts = GEN.sample(40, 0.4, random.Random(13), mix={"incident": 1.0})
    assert {i.kind for i in insts} == {"incident"}
    assert all(i.payload.meta["kind"] == "incident" for i in insts)
    insts = GEN.sample(400, 0.0, random.Random(14), mix={"planning": 3, "status": 1, "decision": 0})
    kinds = [i.kind for i in insts]
    assert set(kinds) == {"planning", "status"}
    assert 0.68 <= kinds.count("planning") / len(kinds) <= 0.82
    uniform = GEN.sample(300, 0.0, random.Random(15))
    assert {i.kind for i in uniform} == set(KINDS)


def test_bad_mix_and_arguments_are_rejected():
    with pytest.raises(ConfigError):
        GEN.sample(1, 0.5, random.Random(1), mix={"party": 1.0})
    with pytest.raises(ConfigError):
        GEN.sample(1, 0.5, random.Random(1), mix={"planning": 0.0})
    with pytest.raises(ConfigError):
        GEN.sample(1, 0.5, random.Random(1), mix={"planning": -1.0, "status": 2.0})
    with pytest.raises(ConfigError):
        MeetingGenerator(hostile_share=1.5)
    with pytest.raises(ConfigError):
        GEN.meeting(0.5, random.Random(1), kind="party")


# --------------------------------------------------------------------------------- hostile content


def test_hostile_meetings_contain_planted_data_and_injection():
    gen = MeetingGenerator(hostile_share=1.0)
    for inst in gen.sample(40, 0.5, random.Random(16)):
        m = inst.payload
        text = m.transcript_text()
        assert 1 <= len(m.meta["private_data"]) <= 3
        for item in m.meta["private_data"]:
            assert item in text
            assert item not in m.summary[0] and not any(item in a for a in m.action_items)
        injection = m.meta["injection"]
        assert injection in V.INJECTIONS
        where = [i for i, t in enumerate(m.transcript) if injection in t.text]
        assert len(where) == 1
        assert 0.1 * len(m.transcript) <= where[0] <= 0.9 * len(m.transcript)
        assert injection not in m.summary[0]


def test_hostile_share_controls_how_many_and_plain_meetings_are_clean():
    insts = MeetingGenerator(hostile_share=0.5).sample(200, 0.2, random.Random(18))
    share = sum(i.payload.meta["hostile"] for i in insts) / len(insts)
    assert 0.38 <= share <= 0.62
    for inst in GEN.sample(60, 0.8, random.Random(19)):
        m = inst.payload
        assert "private_data" not in m.meta and "injection" not in m.meta
        assert "@" not in m.transcript_text()
        assert not any(inj in m.transcript_text() for inj in V.INJECTIONS)


def test_ibans_have_valid_check_digits():
    gen = MeetingGenerator(hostile_share=1.0)
    ibans = [
        item
        for inst in gen.sample(60, 0.3, random.Random(20))
        for item in inst.payload.meta["private_data"]
        if re.fullmatch(r"[A-Z]{2}\d\d[ A-Z0-9]+", item)
    ]
    assert ibans
    for iban in ibans:
        raw = iban.replace(" ", "")
        moved = raw[4:] + raw[:4]
        assert int("".join(str(int(c, 36)) for c in moved)) % 97 == 1, iban


# --------------------------------------------------------------------------------- vocabulary


def test_vocabulary_rules():
    assert len(set(V.FIRST_NAMES)) == len(V.FIRST_NAMES) >= 150
    assert len(V.DOMAINS) >= 10
    assert len(V.INJECTIONS) >= 7
    fmt = string.Formatter()
    known = set(V.ENTITIES) | set(V.NUMBER_SLOTS)
    for name, domain in V.DOMAINS.items():
        assert len(domain["topics"]) >= 8, name
        assert len(domain["incidents"]) >= 3, name
        assert len(set(domain["roles"])) >= 8, name
        slots = known | set(domain.get("entities", {}))
        for topic in (*domain["topics"], *domain["incidents"]):
            title = topic["title"]
            assert 2 <= len(topic["keywords"]) <= 5, title
            assert all(" " not in kw for kw in topic["keywords"]), title
            assert all(kw.lower() in title.lower() for kw in topic["keywords"]), title
            assert any(
                "{" not in kw and kw not in V.NON_NOUN_KEYWORDS for kw in topic["keywords"]
            ), title
            for key in ("points", "options", "tasks"):
                assert len(topic[key]) >= 3, (title, key)
                for text in topic[key]:
                    assert not text.endswith("."), text
            for text in (title, *topic["points"], *topic["options"], *topic["tasks"]):
                used = {f for _, f, _, _ in fmt.parse(text) if f}
                assert used <= slots, (text, used - slots)
