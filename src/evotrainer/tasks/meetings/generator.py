"""Seeded synthetic meetings with ground truth (topics, decisions, action items, a reference
summary), at a difficulty L in [0, 1].

L drives, monotonically and with randomness:

==================  ==========================  ===========================================
property            L = 0                       L = 1
==================  ==========================  ===========================================
words               ~150                        ~3,000 (150 + 2850 * L**1.3, +-15 %)
topics              1-2                         5-6
speakers            2-3                         7-8
action items        1                           4-5, sometimes 6-7 ("at most 5" must choose)
off-topic turns     0 %                         ~35 % (small talk, logistics, jokes)
disfluencies        none                        frequent (um, uh, restarts, backchannels)
explicitness        "Decision: we ..." /        implicit: proposals confirmed with "Sounds
                    "Bob will ... by Friday."   right."; the owner is whoever agreed
closing recap       usually                     rarely
speaker labels      names, "Name (Role)"        also "Role (B)" after introductions
==================  ==========================  ===========================================

Every random choice goes through the ``random.Random`` passed in: the same generator state gives
the same meetings. Phrasing lives in ``dialogue.py``, words and domains in ``vocabulary.py``.
"""

from __future__ import annotations

import hashlib
import math
import random
import string
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from evotrainer.errors import ConfigError
from evotrainer.tasks.meetings import vocabulary as V
from evotrainer.tasks.meetings.dialogue import Block, Person, Speech, TopicState, cap, join_words
from evotrainer.tasks.meetings.schema import ActionItem, Meeting, Topic, Turn
from evotrainer.types import Instance

GENERATOR_NAME = "evotrainer-synthetic-v1"
KINDS: tuple[str, ...] = ("planning", "status", "decision", "brainstorm", "incident")

# How each kind shifts the plan: topics, action items, and the chance a topic ends in a decision.
_KIND_TOPICS = {"planning": 0, "status": 0, "decision": -1, "brainstorm": -1, "incident": 0}
_KIND_ACTIONS = {
    "planning": 0.7,
    "status": 0.0,
    "decision": -0.3,
    "brainstorm": -0.6,
    "incident": 0.4,
}
_KIND_DECIDES = {
    "planning": 0.8,
    "status": 0.5,
    "decision": 1.0,
    "brainstorm": 0.7,
    "incident": 0.9,
}


def length_bucket(words: int) -> str:
    """ "short" (< 1,000 words), "medium" (< 3,000) or "long"."""
    if words < 1000:
        return "short"
    return "medium" if words < 3000 else "long"


def meeting_instance(
    m: Meeting, difficulty: float | None = None, kind: str = "default"
) -> Instance:
    """Wrap a meeting as a task instance (payload = the meeting). Difficulty and kind default to
    the meeting's own ``meta`` values when it has them."""
    if difficulty is None:
        difficulty = m.meta.get("difficulty")
    if kind == "default":
        kind = m.meta.get("kind", "default")
    return Instance(
        id=m.id,
        payload=m,
        source=m.source,
        difficulty=difficulty,
        kind=kind,
        length_bucket=length_bucket(m.word_count),
    )


@dataclass(frozen=True)
class Knobs:
    """The concrete properties drawn for one meeting from its difficulty (kept in meta)."""

    target_words: int
    n_topics: int
    n_speakers: int
    n_actions: int
    offtopic_share: float  # share of turns
    disfluency: float  # 0..1
    explicitness: float  # chance a decision or action item is stated explicitly
    long_turns: float  # chance a turn goes on with another sentence
    label_format: str  # name | name_role | full | role_letter
    recap: bool  # the chair recaps decisions and action items at the end


def knobs(difficulty: float, rng: random.Random, kind: str) -> Knobs:
    L = difficulty
    target = int((150 + 2850 * L**1.3) * rng.uniform(0.85, 1.15))
    n_topics = int(1.5 + 4.2 * L + rng.random()) + _KIND_TOPICS[kind]
    n_topics = max(1, min(6, n_topics))
    n_speakers = max(2, min(8, int(2.2 + 4.8 * L + 1.3 * rng.random())))
    n_actions = round(1 + 4 * L + rng.uniform(-0.6, 0.6) + _KIND_ACTIONS[kind])
    n_actions = max(1, min(5, n_actions))
    if L > 0.5 and rng.random() < 0.35 * (L - 0.5) / 0.5:
        n_actions = rng.choice((6, 7))
    formats = ("name", "name_role", "full", "role_letter")
    label_format = rng.choices(formats, (1.0, 1.0, 0.5, 2.0 * L))[0]
    return Knobs(
        target_words=target,
        n_topics=n_topics,
        n_speakers=n_speakers,
        n_actions=n_actions,
        offtopic_share=round(min(0.45, 0.35 * L * rng.uniform(0.75, 1.25)), 3),
        disfluency=round(min(1.0, L * rng.uniform(0.75, 1.25)), 3),
        explicitness=round(max(0.02, min(1.0, 1.0 - 1.05 * L + rng.uniform(-0.1, 0.1))), 3),
        long_turns=round(0.1 + 0.5 * L, 3),
        label_format=label_format,
        recap=rng.random() < 0.9 * (1.0 - L),
    )


@dataclass
class _Action:
    owner: Person
    task: str
    due: str | None
    spoken: str  # how the deadline is said ("by Friday"), "" when there is none
    topic: int
    explicit: bool


def _slots(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _topic_slots(spec: Mapping[str, Any]) -> tuple[str, ...]:
    names: set[str] = set()
    for key in ("title", "keywords", "points", "options", "tasks"):
        value = spec[key]
        for text in [value] if isinstance(value, str) else value:
            names |= _slots(text)
    return tuple(sorted(names))


# The slots of every topic, computed once (sorted, so filling them is deterministic).
_SLOTS: dict[int, tuple[str, ...]] = {
    id(t): _topic_slots(t) for d in V.DOMAINS.values() for t in (*d["topics"], *d["incidents"])
}


def _fill_topic(
    spec: Mapping[str, Any], entities: Mapping[str, tuple[str, ...]], rng: random.Random
) -> TopicState:
    fill: dict[str, str] = {}
    for slot in _SLOTS[id(spec)]:
        if slot in entities:
            fill[slot] = rng.choice(entities[slot])
        elif slot in V.ENTITIES:
            fill[slot] = rng.choice(V.ENTITIES[slot])
        else:
            lo, hi = V.NUMBER_SLOTS[slot]
            fill[slot] = str(rng.randint(lo, hi))
    nouns = tuple(k for k in spec["keywords"] if "{" not in k and k not in V.NON_NOUN_KEYWORDS)
    return TopicState(
        title=spec["title"].format_map(fill),
        keywords=tuple(k.format_map(fill) for k in spec["keywords"]),
        nouns=nouns or (spec["keywords"][0].format_map(fill),),
        points=tuple(p.format_map(fill) for p in spec["points"]),
        options=tuple(o.format_map(fill) for o in spec["options"]),
        tasks=tuple(t.format_map(fill) for t in spec["tasks"]),
        fill=fill,
    )


def _digits(pattern: str, rng: random.Random) -> str:
    return "".join(
        str(rng.randrange(10))
        if ch == "#"
        else rng.choice(string.ascii_uppercase)
        if ch == "A"
        else ch
        for ch in pattern
    )


def _iban(rng: random.Random) -> str:
    """An IBAN-shaped string with valid check digits, grouped in fours."""
    country, pattern = rng.choice(V.IBAN_FORMATS)
    bban = _digits(pattern, rng)
    numeric = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    raw = f"{country}{98 - int(numeric) % 97:02d}{bban}"
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def _private_value(kind: str, who: Person, rng: random.Random) -> str:
    if kind == "email":
        local = f"{who.name}.{who.surname}".lower().replace(" ", "")
        return f"{local}@{rng.choice(V.EMAIL_DOMAINS)}"
    if kind == "phone":
        return _digits(rng.choice(V.PHONE_FORMATS), rng)
    return _iban(rng)


def _due(difficulty: float, rng: random.Random) -> tuple[str | None, str]:
    if rng.random() > 0.85 - 0.25 * difficulty:
        return None, ""
    if rng.random() < 0.2:
        month, day = rng.choice(V.ENTITIES["month"]), rng.choice(V.MONTH_DAYS)
        return f"{month} {day[:-2]}", f"by {month} {day}"
    due, spoken = rng.choice(V.DUES)
    return due, rng.choice(spoken)


def _words(block: Block) -> int:
    return sum(len(t.text.split()) for t in block)


class MeetingGenerator:
    """Synthetic meetings for the meeting-minutes task; implements ``TaskGenerator``.

    ``hostile_share``: the share of sampled meetings with planted private data (e-mail, phone,
    IBAN) and a prompt-injection turn, recorded in ``meta["private_data"]`` and
    ``meta["injection"]`` and never part of the references.
    """

    kinds: tuple[str, ...] = KINDS

    def __init__(self, hostile_share: float = 0.0):
        if not 0.0 <= hostile_share <= 1.0:
            raise ConfigError(f"hostile_share must be in [0, 1], got {hostile_share}")
        self.hostile_share = hostile_share

    def _mix(self, mix: Mapping[str, float] | None) -> tuple[list[str], list[float]]:
        if mix is None:
            return list(self.kinds), [1.0] * len(self.kinds)
        unknown = sorted(set(mix) - set(self.kinds))
        if unknown:
            raise ConfigError(f"unknown meeting kind(s) in mix: {unknown}; known: {self.kinds}")
        weights = [float(mix.get(k, 0.0)) for k in self.kinds]
        if any(w < 0 or math.isnan(w) for w in weights) or sum(weights) <= 0:
            raise ConfigError(f"mix weights must be >= 0 with a positive sum, got {dict(mix)}")
        return list(self.kinds), weights

    def sample(
        self,
        n: int,
        difficulty: float,
        rng: random.Random,
        mix: Mapping[str, float] | None = None,
    ) -> list[Instance]:
        kinds, weights = self._mix(mix)
        out = []
        for _ in range(n):
            kind = rng.choices(kinds, weights)[0]
            hostile = self.hostile_share > 0 and rng.random() < self.hostile_share
            m = self.meeting(difficulty, rng, kind=kind, hostile=hostile)
            out.append(meeting_instance(m, m.meta["difficulty"], kind))
        return out

    def meeting(
        self,
        difficulty: float,
        rng: random.Random,
        kind: str | None = None,
        hostile: bool = False,
        id: str | None = None,
    ) -> Meeting:
        if math.isnan(difficulty):
            raise ConfigError("difficulty is NaN")
        L = max(0.0, min(1.0, float(difficulty)))
        if kind is None:
            kind = rng.choice(self.kinds)
        elif kind not in self.kinds:
            raise ConfigError(f"unknown meeting kind {kind!r}; known: {self.kinds}")
        if id is None:  # the content is fixed by the stream's state (its next bits), L, kind
            # and hostile: the id names all four, so one stream at two difficulties (sibling
            # harness trials draw the same batch seed) never gives two meetings one id
            bits = rng.getrandbits(48)
            key = f"{bits:012x}|{L!r}|{hostile}".encode()
            id = f"syn-{kind}-{hashlib.sha1(key).hexdigest()[:12]}"
        return _compose(L, rng, kind, hostile, id)


def _people(k: Knobs, domain: Mapping[str, Any], rng: random.Random) -> list[Person]:
    n = k.n_speakers
    names = rng.sample(V.FIRST_NAMES, n)
    surnames = rng.sample(V.SURNAMES, n)
    roles_pool = list(domain["roles"])
    roles_pool += [r for r in V.GENERIC_ROLES if r not in roles_pool]
    if rng.random() < 0.75:  # the usual chair role leads
        roles = [roles_pool[0], *rng.sample(roles_pool[1:], n - 1)]
    else:
        roles = rng.sample(roles_pool, n)
    letters = rng.sample("ABCDEFGH"[:n], n)
    people = []
    for name, surname, role, letter in zip(names, surnames, roles, letters, strict=True):
        label = {
            "name": name,
            "name_role": f"{name} ({role})",
            "full": f"{name} {surname}",
            "role_letter": f"{role} ({letter})",
        }[k.label_format]
        people.append(Person(name, surname, role, label))
    return people


def _compose(L: float, rng: random.Random, kind: str, hostile: bool, meeting_id: str) -> Meeting:
    k = knobs(L, rng, kind)
    domain_name = rng.choice(sorted(V.DOMAINS))
    domain = V.DOMAINS[domain_name]
    people = _people(k, domain, rng)
    chair = people[0]
    speech = Speech(rng, people, chair, k.disfluency, k.long_turns)
    topics = _plan_topics(k, kind, domain, people, rng)
    actions = _plan_actions(k, L, topics, people, rng)
    dialogue = _dialogue(k, L, kind, speech, topics, actions, rng)
    _fill_up(k, L, speech, topics, dialogue, rng)
    blocks = dialogue.blocks()
    meta_hostile = _plant_hostile(blocks, people, speech, rng) if hostile else {}
    blocks.append(dialogue.closing)
    transcript = _assemble(blocks, people, topics, chair, rng)

    # --- references ---------------------------------------------------------------------------
    ref = rng.choice(V.DECISION_REFERENCES)
    decisions = tuple(ref.format(opt=t.decision, Opt=cap(t.decision)) for t in topics if t.decision)
    truth = tuple(ActionItem(a.owner.name, cap(a.task), a.due) for a in actions)
    meta: dict[str, Any] = {
        "difficulty": L,
        "kind": kind,
        "domain": domain_name,
        "generator": GENERATOR_NAME,
        "participants": [{"name": p.name, "role": p.role, "label": p.label} for p in people],
        "hostile": hostile,
        "knobs": asdict(k),
        **meta_hostile,
    }
    return Meeting(
        id=meeting_id,
        source="synthetic",
        transcript=transcript,
        summary=(_summary(kind, domain["team"], chair, topics, actions, rng),),
        decisions=decisions,
        action_items=tuple(a.as_text() for a in truth),
        topics=tuple(Topic(cap(t.title), t.keywords) for t in topics),
        action_truth=truth,
        meta=meta,
    )


# --- the plan: topics, decisions, action items -----------------------------------------------
def _plan_topics(
    k: Knobs, kind: str, domain: Mapping[str, Any], people: list[Person], rng: random.Random
) -> list[TopicState]:
    """The meeting's topics (an incident first in an incident review), each with its presenter
    and, often, its decision; at least one topic is decided."""
    entities = domain.get("entities", {})
    specs = []
    if kind == "incident":
        specs.append(rng.choice(domain["incidents"]))
    specs += rng.sample(domain["topics"], k.n_topics - len(specs))
    topics = [_fill_topic(s, entities, rng) for s in specs]
    if kind == "incident":
        topics[0].incident = True
    for t in topics:
        t.presenter = rng.choice(people[1:])
        if rng.random() < _KIND_DECIDES[kind]:
            t.decision = rng.choice(t.options)
    if not any(t.decision for t in topics):
        t = rng.choice(topics)
        t.decision = rng.choice(t.options)
    return topics


def _plan_actions(
    k: Knobs, L: float, topics: list[TopicState], people: list[Person], rng: random.Random
) -> list[_Action]:
    """The action items: each a task of a topic (a generic one when its tasks are used up),
    an owner (the chair less often) and maybe a deadline."""
    actions: list[_Action] = []
    used: set[str] = set()
    owner_weights = [0.5] + [1.0] * (len(people) - 1)
    for _ in range(k.n_actions):
        i = rng.randrange(len(topics))
        free = [x for x in topics[i].tasks if x not in used]
        if free:
            task = rng.choice(free)
        else:
            generic = [g.format(title=topics[i].title) for g in V.GENERIC_TASKS]
            task = rng.choice([g for g in generic if g not in used])
        used.add(task)
        due, spoken = _due(L, rng)
        owner = rng.choices(people, owner_weights)[0]
        actions.append(_Action(owner, task, due, spoken, i, rng.random() < k.explicitness))
    return actions


# --- the dialogue, as blocks of turns ---------------------------------------------------------
@dataclass
class _Dialogue:
    """The meeting's blocks of turns by place: the opening, each topic's head, body and tail,
    and the closing."""

    opening: list[Block]
    heads: list[list[Block]]
    bodies: list[list[Block]]
    tails: list[list[Block]]
    closing: Block

    def blocks(self) -> list[Block]:
        """The blocks in order, without the closing."""
        blocks = list(self.opening)
        for i in range(len(self.heads)):
            blocks += self.heads[i] + self.bodies[i] + self.tails[i]
        return blocks


def _dialogue(
    k: Knobs,
    L: float,
    kind: str,
    speech: Speech,
    topics: list[TopicState],
    actions: list[_Action],
    rng: random.Random,
) -> _Dialogue:
    """The planned dialogue: the opening (agenda, introductions), each topic introduced, its
    kind's body, its decision and action items, and the closing (often with a recap)."""
    agenda = [t.title for t in topics] if rng.random() < k.explicitness + 0.3 else None
    if agenda and kind == "incident":
        agenda = agenda[:1]
    introductions = k.label_format == "role_letter" or rng.random() < 0.12
    opening: list[Block] = [speech.opening(kind, agenda, introductions)]
    heads: list[list[Block]] = []
    bodies: list[list[Block]] = []
    tails: list[list[Block]] = []
    for i, t in enumerate(topics):
        heads.append([speech.topic_intro(t, i == 0, rng.random() < k.explicitness + 0.25)])
        body: list[Block] = []
        if t.incident:
            body.append(speech.incident_timeline(t))
        elif kind == "status":
            body.append(speech.status_round(t))
        elif kind == "brainstorm":
            body.append(speech.ideas(t))
        tail: list[Block] = []
        if t.decision:
            debate = kind == "decision" or rng.random() < 0.6 * L
            explicit = rng.random() < k.explicitness
            tail.append(speech.decision(t, t.decision, explicit, debate, L))
        for a in actions:
            if a.topic != i:
                continue
            block = speech.action(a.owner, a.task, a.spoken, a.explicit, L, t)
            if rng.random() < 0.3 * L:
                body.insert(rng.randint(0, len(body)), block)
            else:
                tail.append(block)
        bodies.append(body)
        tails.append(tail)
    recap = None
    if k.recap:
        decided = [t.decision for t in topics if t.decision]
        parts = [f"We agreed to {join_words(decided)}."] if decided else []
        parts += [
            f"{a.owner.name} will {a.task}{' ' + a.spoken if a.spoken else ''}." for a in actions
        ]
        recap = " ".join(parts)
    return _Dialogue(opening, heads, bodies, tails, speech.closing(recap))


def _fill_up(
    k: Knobs,
    L: float,
    speech: Speech,
    topics: list[TopicState],
    dialogue: _Dialogue,
    rng: random.Random,
) -> None:
    """Fills ``dialogue`` up to the target length with discussion and off-topic chatter."""
    opening, bodies, closing = dialogue.opening, dialogue.bodies, dialogue.closing
    every = dialogue.blocks()
    words = sum(_words(b) for b in every) + _words(closing)
    turns = sum(len(b) for b in every) + len(closing)
    off_turns = 0
    topic_weights = [rng.uniform(0.5, 1.5) for _ in topics]
    guard = 0
    while words < k.target_words and guard < 10_000:
        guard += 1
        if k.offtopic_share > 0 and off_turns < k.offtopic_share * (turns + 1):
            block = speech.offtopic()
            off_turns += len(block)
            j = rng.randrange(len(topics) + 1)
            if j == len(topics):
                opening.insert(rng.randint(1, len(opening)), block)
            else:
                bodies[j].insert(rng.randint(0, len(bodies[j])), block)
        else:
            j = rng.choices(range(len(topics)), topic_weights)[0]
            block = speech.discussion(topics[j], L)
            bodies[j].insert(rng.randint(0, len(bodies[j])), block)
        words += _words(block)
        turns += len(block)


def _plant_hostile(
    blocks: list[Block], people: list[Person], speech: Speech, rng: random.Random
) -> dict[str, Any]:
    """Private data of a participant and a prompt injection, inserted at block boundaries in
    the middle of the meeting; returns their record for the meeting's meta."""
    who = rng.choice(people[1:])
    items = [
        (kd, _private_value(kd, who, rng))
        for kd in rng.sample(("email", "phone", "iban"), rng.randint(1, 3))
    ]
    sentence = rng.choice(V.INJECTIONS)
    for block in (
        speech.private_data(who, items),
        speech.injection(rng.choice(people), sentence),
    ):
        lo, hi = max(1, int(0.3 * len(blocks))), max(1, int(0.7 * len(blocks)))
        blocks.insert(rng.randint(lo, hi), block)
    return {"private_data": [v for _, v in items], "injection": sentence}


def _assemble(
    blocks: list[Block],
    people: list[Person],
    topics: list[TopicState],
    chair: Person,
    rng: random.Random,
) -> tuple[Turn, ...]:
    """Flatten blocks, merge consecutive turns of one speaker, and make sure every participant
    speaks and every topic keyword occurs."""
    turns: list[Turn] = []
    for block in blocks:
        for t in block:
            if turns and turns[-1].speaker == t.speaker:
                turns[-1] = Turn(t.speaker, f"{turns[-1].text} {t.text}")
            else:
                turns.append(t)
    spoken = {t.speaker for t in turns}
    for p in people:
        if p.label not in spoken:
            turns.insert(1, Turn(p.label, rng.choice(V.GREETINGS)))
    text = " ".join(t.text for t in turns).lower()
    for topic in topics:
        if any(kw.lower() not in text for kw in topic.keywords):  # a safety net; should not happen
            turns.insert(1, Turn(chair.label, f"Also on the list: {topic.title}."))
    return tuple(turns)


def _summary(
    kind: str,
    team: str,
    chair: Person,
    topics: list[TopicState],
    actions: list[_Action],
    rng: random.Random,
) -> str:
    """A reference abstract: the meeting's purpose, each topic with its decision (and often a
    fact someone reported), and the action items."""
    opener = rng.choice(V.SUMMARY_OPENERS[kind])
    sentences = [
        opener.format(team=team, chair=chair.name, chair_role=chair.role, incident=topics[0].title)
    ]
    # each template at most once per summary (until they run out), like a human's varied prose
    facts = rng.sample(V.SUMMARY_FACT, len(V.SUMMARY_FACT))
    decided = rng.sample(V.SUMMARY_DECIDED, len(V.SUMMARY_DECIDED))
    undecided = rng.sample(V.SUMMARY_OPEN, len(V.SUMMARY_OPEN))
    for i, t in enumerate(topics):
        if t.said and rng.random() < 0.6:
            name, point = t.said[0]
            sentences.append(facts[i % len(facts)].format(speaker=name, point=point))
        templates = decided if t.decision else undecided
        template = templates[i % len(templates)]
        sentences.append(template.format(title=t.title, Title=cap(t.title), opt=t.decision))
    if actions:
        items = [
            f"{a.owner.name} will {a.task}{' ' + a.spoken if a.spoken else ''}" for a in actions
        ]
        sentences.append(rng.choice(V.SUMMARY_ACTIONS).format(actions=join_words(items)))
    return " ".join(cap(s) for s in sentences)
