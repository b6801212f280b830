"""Dialogue acts of a synthetic meeting: who says what, in which words, with how much noise.

``Speech`` holds one meeting's participants, random generator and noise level and turns dialogue
acts (open the meeting, introduce a topic, state a fact, propose, decide, assign a task, chat
off topic, ...) into blocks of ``Turn``s. ``generator.py`` decides what happens in the meeting
(the plan and its ground truth); this module only phrases it. All randomness comes from the
``random.Random`` passed in.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evotrainer.tasks.meetings import vocabulary as V
from evotrainer.tasks.meetings.schema import Turn

Block = list[Turn]

# Noise: fillers inserted between words, openers put before a turn, function words that get
# restarted ("we- we"), and sentence starters that may be lower-cased after an opener.
_FILLERS = ("um", "uh", "um,", "uh,", "you know,", "I mean,", "like,", "sort of", "kind of", "er")
_OPENERS = (
    "Um, ",
    "Uh, ",
    "So, um, ",
    "Well, ",
    "Yeah, so ",
    "Okay, um, ",
    "I mean, ",
    "Right, so ",
    "Uh, yeah, ",
    "Mm, ",
    "So ",
    "And, uh, ",
)
_RESTARTABLE = frozenset(
    ("we", "I", "the", "it", "so", "that", "a", "to", "and", "is", "they", "you", "if", "but")
)
# Words that stay capitalised after an opener ("Um, Acme wants ..."): names and entities.
_PROPER = frozenset(
    [*V.FIRST_NAMES, *(e for values in V.ENTITIES.values() for e in values)]
    + [e for d in V.DOMAINS.values() for vs in d.get("entities", {}).values() for e in vs]
)


def cap(text: str) -> str:
    """Upper-case the first character only ("the API" -> "The API")."""
    return text[:1].upper() + text[1:]


def join_words(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


@dataclass(frozen=True)
class Person:
    name: str
    surname: str
    role: str
    label: str  # the speaker label in the transcript


@dataclass
class TopicState:
    """One topic of the meeting as the dialogue sees it (filled texts, no slots left)."""

    title: str  # as said mid-sentence ("the checkout database migration")
    keywords: tuple[str, ...]
    nouns: tuple[str, ...]  # keywords that read well as "the {kw}" (no names, no adjectives)
    points: tuple[str, ...]
    options: tuple[str, ...]
    tasks: tuple[str, ...]
    fill: dict[str, str]  # the topic's slot values (city, month, ...)
    incident: bool = False
    presenter: Person | None = None
    decision: str | None = None  # the option decided on, if any
    said: list[tuple[str, str]] = field(default_factory=list)  # (speaker name, point)


class _Slots(dict):
    """A format_map mapping that computes a slot only when a template uses it."""

    def __init__(self, resolve: Callable[[str], str], given: dict[str, str]):
        super().__init__(given)
        self._resolve = resolve

    def __missing__(self, key: str) -> str:
        value = cap(self[key.lower()]) if key[:1].isupper() else self._resolve(key)
        self[key] = value
        return value


class Speech:
    """Phrases dialogue acts for one meeting."""

    def __init__(
        self,
        rng: random.Random,
        people: Sequence[Person],
        chair: Person,
        disfluency: float,
        long_turns: float,
    ):
        self.rng = rng
        self.people = list(people)
        self.chair = chair
        self.d = disfluency
        self.long_turns = long_turns
        # talkativeness: the chair talks most, the others differ
        self.weights = [2.0 if p is chair else rng.uniform(0.4, 1.6) for p in self.people]

    # ---------------------------------------------------------------- people

    def pick(self, *exclude: Person | None) -> Person:
        """A random speaker, weighted by talkativeness, avoiding ``exclude`` where possible."""
        rng = self.rng
        for _ in range(6):
            p = rng.choices(self.people, self.weights)[0]
            if p not in exclude:
                return p
        rest = [p for p in self.people if p not in exclude]
        return rng.choice(rest or self.people)

    def others(self, who: Person) -> list[Person]:
        return [p for p in self.people if p is not who] or [who]

    # ---------------------------------------------------------------- text

    def fill(
        self,
        template: str,
        who: Person,
        topic: TopicState | None = None,
        **given: str,
    ) -> str:
        rng = self.rng

        def resolve(key: str) -> str:
            if key == "point":
                if topic is None or not topic.points:
                    return "things are moving slowly"
                said = {p for _, p in topic.said}
                fresh = [p for p in topic.points if p not in said]
                if fresh:
                    point = rng.choice(fresh)
                    topic.said.append((who.name, point))
                    return point
                if rng.random() < 0.2:  # people do repeat themselves
                    return rng.choice(topic.points)
                return self.fill(rng.choice(V.GENERIC_FACTS), who, topic)
            if key == "kw":
                return rng.choice(topic.nouns) if topic else "plan"
            if key == "kw2":
                if topic is None:
                    return "budget"
                first = slots.get("kw")
                rest = [k for k in topic.nouns if k != first] or list(topic.nouns)
                return rng.choice(rest)
            if key == "title":
                return topic.title if topic else "this"
            if key in ("other", "name"):
                return rng.choice(self.others(who)).name
            if key == "reason":
                return rng.choice(V.REASONS)
            if topic is not None and key in topic.fill:
                return topic.fill[key]
            if key in V.ENTITIES:
                return rng.choice(V.ENTITIES[key])
            if key in V.NUMBER_SLOTS:
                lo, hi = V.NUMBER_SLOTS[key]
                return str(rng.randint(lo, hi))
            raise KeyError(f"unknown slot {{{key}}} in template {template!r}")

        slots = _Slots(resolve, given)
        return template.format_map(slots)

    def roughen(self, text: str, scale: float = 1.0) -> str:
        """Add disfluencies: fillers, restarts, repeated words and hesitant openers."""
        d = self.d * scale
        if d <= 0.0:
            return text
        rng = self.rng
        words = text.split(" ")
        n = len(words)
        if n >= 4:
            for _ in range(int(n * 0.06 * d + rng.random())):
                i = rng.randrange(1, len(words))
                if words[i - 1][-1:] in ".?!":
                    words.insert(i, rng.choice(("Um.", "Uh.", "Mm.", "Um...")))
                else:
                    words.insert(i, rng.choice(_FILLERS))
            if rng.random() < 0.35 * d:
                spots = [i for i, w in enumerate(words) if w in _RESTARTABLE]
                if spots:
                    i = rng.choice(spots)
                    w = words[i]
                    words[i] = f"{w}- {w}" if rng.random() < 0.6 else f"{w} {w}"
        if rng.random() < 0.3 * d:
            first = words[0]
            bare = first.rstrip(",.?!:;")
            if bare[1:].islower() and not bare.startswith("I'") and bare not in _PROPER:
                words[0] = first[:1].lower() + first[1:]
            words[0] = rng.choice(_OPENERS) + words[0]
        return " ".join(words)

    def turn(self, who: Person, text: str, noise: float = 1.0) -> Turn:
        return Turn(who.label, self.roughen(text, noise) if noise else text)

    def act(
        self,
        who: Person,
        templates: Sequence[str],
        topic: TopicState | None = None,
        noise: float = 1.0,
        **given: str,
    ) -> Turn:
        return self.turn(who, self.fill(self.rng.choice(templates), who, topic, **given), noise)

    def longer(self, text: str, who: Person, topic: TopicState | None) -> str:
        """Sometimes add one or more sentences: real turns are often long."""
        rng = self.rng
        for _ in range(3):
            if rng.random() >= self.long_turns:
                break
            if topic is not None and rng.random() < 0.5:
                extra = self.fill(rng.choice(V.REMARKS), who, topic)
            else:
                extra = rng.choice(V.ELABORATIONS)
            if extra not in text:
                text += " " + extra
        return text

    def backchannel(self, who: Person) -> Turn:
        return Turn(who.label, self.rng.choice(V.BACKCHANNELS))

    # ---------------------------------------------------------------- opening and closing

    def opening(self, kind: str, agenda: Sequence[str] | None, introductions: bool) -> Block:
        rng, chair = self.rng, self.chair
        block = [self.act(chair, V.OPENINGS, noise=0.5)]
        greetings = rng.sample(V.GREETINGS, len(V.GREETINGS))
        for p, greeting in zip(self.others(chair), greetings, strict=False):
            if rng.random() < 0.4:
                block.append(Turn(p.label, greeting))
        if introductions:
            block.append(Turn(chair.label, rng.choice(V.INTRO_PROMPTS)))
            for p in [chair, *self.others(chair)]:
                text = rng.choice(V.INTRODUCTIONS).format(name=p.name, role=p.role)
                block.append(self.turn(p, text, 0.5))
        if agenda:
            text = self.fill(rng.choice(V.PURPOSES[kind]), chair, agenda=join_words(agenda))
        else:
            text = rng.choice(V.VAGUE_PURPOSES)
        block.append(self.turn(chair, text, 0.5))
        return block

    def closing(self, recap: str | None) -> Block:
        rng, chair = self.rng, self.chair
        block = []
        if recap:
            block.append(Turn(chair.label, rng.choice(V.RECAP_OPENERS) + " " + recap))
        block.append(self.act(chair, V.CLOSINGS, noise=0.5))
        for p in rng.sample(self.others(chair), k=min(2, len(self.others(chair)))):
            if rng.random() < 0.7:
                block.append(Turn(p.label, rng.choice(V.CLOSING_REPLIES)))
        return block

    # ---------------------------------------------------------------- topic structure

    def topic_intro(self, topic: TopicState, first: bool, explicit: bool) -> Block:
        rng = self.rng
        presenter = topic.presenter or self.pick(self.chair)
        if explicit:
            templates = V.FIRST_TOPIC_INTROS if first else V.TOPIC_INTROS
            who = self.chair
        else:
            templates = V.IMPLICIT_TOPIC_INTROS
            who = self.pick(presenter) if rng.random() < 0.5 else presenter
        block = [self.act(who, templates, topic, noise=0.6, other=presenter.name)]
        if who is not presenter:
            text = self.fill(rng.choice(V.POINT_FRAMES), presenter, topic)
            block.append(self.turn(presenter, self.longer(text, presenter, topic)))
        return block

    def status_round(self, topic: TopicState) -> Block:
        rng = self.rng
        block = [self.act(self.chair, V.STATUS_PROMPTS, topic, noise=0.6)]
        speakers = rng.sample(self.others(self.chair), k=min(3, len(self.others(self.chair))))
        for p in speakers:
            block.append(self.act(p, V.STATUS_UPDATES, topic))
            if rng.random() < 0.4:
                block.append(self.backchannel(self.pick(p)))
        return block

    def incident_timeline(self, topic: TopicState) -> Block:
        rng = self.rng
        teller = topic.presenter or self.pick(self.chair)
        block = [self.act(self.chair, V.INCIDENT_PROMPTS, topic, noise=0.6, other=teller.name)]
        steps = ("So, {point}.", "Then {point}.", "And on top of that, {point}.")
        said = {p for _, p in topic.said}
        for i, point in enumerate(topic.points):
            template = steps[min(i, 2)] if rng.random() < 0.6 else rng.choice(V.INCIDENT_STEPS)
            block.append(self.turn(teller, self.fill(template, teller, topic, point=point)))
            if point not in said:
                topic.said.append((teller.name, point))
            if rng.random() < 0.5:
                block.append(self.backchannel(self.pick(teller)))
        return block

    def ideas(self, topic: TopicState) -> Block:
        rng = self.rng
        block: Block = []
        last = None
        for opt in rng.sample(topic.options, k=len(topic.options)):
            who = self.pick(last)
            block.append(self.act(who, V.IDEAS + V.PROPOSALS[:6], topic, opt=opt))
            if rng.random() < 0.7:
                block.append(self.act(self.pick(who), V.IDEA_REACTIONS, topic, noise=0.5))
            last = who
        return block

    # ---------------------------------------------------------------- discussion filler

    def discussion(self, topic: TopicState, difficulty: float) -> Block:
        """One short exchange about a topic, used to reach the meeting's length."""
        rng = self.rng
        r = rng.random() * (8.0 + 1.5 * difficulty)
        a = self.pick()
        if r < 3.0:  # a statement, maybe acknowledged
            x = rng.random()
            if x < 0.45:
                text = self.fill(rng.choice(V.POINT_FRAMES), a, topic)
            elif x < 0.6:
                text = self.fill(
                    rng.choice(V.OPTION_REMARKS), a, topic, opt=rng.choice(topic.options)
                )
            else:
                text = self.fill(rng.choice(V.REMARKS), a, topic)
            text = self.longer(text, a, topic)
            block = [self.turn(a, text)]
            if rng.random() < 0.3 + 0.4 * self.d:
                block.append(self.backchannel(self.pick(a)))
            return block
        if r < 5.0:  # question and answer
            b = self.pick(a)
            if rng.random() < 0.5:
                questions, answers = V.QUESTIONS, V.ANSWERS
            else:
                questions, answers = V.YES_NO_QUESTIONS, V.YES_NO_ANSWERS
            block = [self.act(a, questions, topic)]
            answer = self.fill(rng.choice(answers), b, topic)
            block.append(self.turn(b, self.longer(answer, b, topic)))
            if rng.random() < 0.4:
                block.append(self.backchannel(a))
            return block
        if r < 7.0:  # remark and reaction
            b = self.pick(a)
            block = [
                self.turn(a, self.longer(self.fill(rng.choice(V.REMARKS), a, topic), a, topic))
            ]
            block.append(self.act(b, V.REMARK_REACTIONS, topic))
            if rng.random() < 0.3:
                block.append(self.backchannel(self.pick(b)))
            return block
        if r < 8.0:  # a proposal that is not taken up
            rest = [o for o in topic.options if o != topic.decision]
            b = self.pick(a)
            if not rest:
                return [self.act(a, V.REMARKS, topic)]
            block = [self.act(a, V.PROPOSALS, topic, opt=rng.choice(rest))]
            block.append(self.act(b, V.DISAGREEMENTS + V.PARKED, topic))
            return block
        # an interruption (more likely in harder meetings)
        b = self.pick(a)
        start, middle, end = rng.choice(V.INTERRUPTIONS)
        return [
            Turn(a.label, start),
            Turn(b.label, middle),
            self.turn(a, self.fill(end, a, topic)),
        ]

    def offtopic(self) -> Block:
        rng = self.rng
        if rng.random() < 0.25:
            who = self.pick()
            return [self.turn(who, rng.choice(V.OFFTOPIC_LINES), 0.5)]
        lines = rng.choice(V.OFFTOPIC)
        speakers = [self.pick()]
        for _ in lines[1:]:
            speakers.append(self.pick(speakers[-1]))
        block = []
        for i, line in enumerate(lines):
            who = speakers[i]
            named = (
                speakers[i + 1] if i + 1 < len(speakers) and speakers[i + 1] is not who else None
            )
            name = (named or rng.choice(self.others(who))).name
            block.append(self.turn(who, self.fill(line, who, None, name=name), 0.7))
        return block

    # ---------------------------------------------------------------- decisions and actions

    def decision(
        self, topic: TopicState, opt: str, explicit: bool, debate: bool, difficulty: float
    ) -> Block:
        """The exchange in which ``opt`` is decided. Explicit: a clear "Decision: ..." line;
        implicit: a proposal, agreement and a vague confirmation, or a reference to who
        proposed it."""
        rng, chair = self.rng, self.chair
        block: Block = []
        if debate:
            alts = [o for o in topic.options if o != opt]
            if alts:
                a = self.pick()
                block.append(self.act(a, V.PROPOSALS, topic, opt=rng.choice(alts)))
                block.append(self.act(self.pick(a), V.DISAGREEMENTS, topic))
        if explicit:
            if not debate and rng.random() < 0.4:
                block.append(self.act(chair, V.DECISIONS_EXPLICIT, topic, noise=0.3, opt=opt))
                if rng.random() < 0.6:
                    block.append(self.act(self.pick(chair), V.AGREEMENTS, topic, noise=0.5))
                return block
            a = self.pick(chair)
            block.append(self.act(a, V.PROPOSALS, topic, noise=0.6, opt=opt))
            block.append(self.act(self.pick(a), V.AGREEMENTS, topic, noise=0.5))
            block.append(self.act(chair, V.DECISIONS_EXPLICIT, topic, noise=0.3, opt=opt))
            return block
        a = self.pick()
        block.append(self.act(a, V.PROPOSALS, topic, opt=opt))
        if difficulty > 0.6 and rng.random() < 0.45:
            b = self.pick(a)
            block.append(self.act(b, V.YES_NO_QUESTIONS, topic))
            block.append(self.act(a, V.YES_NO_ANSWERS, topic))
            block.append(self.act(self.pick(a), V.AGREEMENTS, topic))
            c = self.pick(a)
            block.append(self.act(c, V.DECISIONS_BY_REFERENCE, topic, other=a.name))
            block.append(self.act(self.pick(c), V.CONFIRMATIONS, topic, noise=0.5))
            return block
        block.append(self.act(self.pick(a), V.AGREEMENTS, topic))
        c = self.pick()
        block.append(self.act(c, V.DECISIONS_IMPLICIT, topic, opt=opt))
        block.append(self.act(self.pick(c), V.CONFIRMATIONS, topic, noise=0.5))
        return block

    def action(
        self,
        owner: Person,
        task: str,
        due_spoken: str,
        explicit: bool,
        difficulty: float,
        topic: TopicState | None = None,
    ) -> Block:
        """The exchange in which ``owner`` takes on ``task``. Explicit: "Bob will ..." or
        "I'll ..."; implicit: a request answered by whoever agrees (the owner), possibly after
        someone declines, after other talk, or after the first person hands it on."""
        rng, chair = self.rng, self.chair
        due = f" {due_spoken}" if due_spoken else ""
        if explicit:
            if owner is chair or rng.random() < 0.35:
                return [self.act(owner, V.VOLUNTEERS, topic, noise=0.3, task=task, due=due)]
            block = [
                self.act(
                    chair, V.ASSIGNMENTS, topic, noise=0.3, owner=owner.name, task=task, due=due
                )
            ]
            if rng.random() < 0.7:
                block.append(Turn(owner.label, rng.choice(V.ACKS)))
            return block
        asker = self.pick(owner)
        r = rng.random()
        third = [p for p in self.people if p is not owner and p is not asker]
        if difficulty > 0.6 and third and r < 0.15:  # handed on to the real owner
            first = rng.choice(third)
            block = [
                self.act(
                    asker, V.ASSIGNMENTS, topic, noise=0.5, owner=first.name, task=task, due=due
                )
            ]
            block.append(self.act(first, V.REASSIGNMENTS, topic, other=owner.name))
            block.append(self.act(owner, V.REASSIGN_ACCEPTS, topic))
            return block
        if difficulty > 0.5 and r < 0.45:  # open request, accepted a little later
            block = [self.act(asker, V.REQUESTS_OPEN, topic, task=task, due=due)]
            for _ in range(rng.randint(1, 2)):
                who = self.pick(owner)
                if rng.random() < 0.5:
                    block.append(self.backchannel(who))
                else:
                    block.append(self.act(who, V.REMARKS, topic))
            block.append(self.act(owner, V.LATE_ACCEPTANCES, topic, other=asker.name))
            return block
        if r < 0.7:  # addressed request
            if due and rng.random() < 0.5:
                block = [
                    self.act(
                        asker, V.REQUESTS_ADDRESSED, topic, owner=owner.name, task=task, due=""
                    )
                ]
                block.append(self.act(owner, V.ACCEPTANCES_WITH_DUE, topic, due=due))
            else:
                block = [
                    self.act(
                        asker, V.REQUESTS_ADDRESSED, topic, owner=owner.name, task=task, due=due
                    )
                ]
                block.append(self.act(owner, V.ACCEPTANCES, topic))
            return block
        block = [self.act(asker, V.REQUESTS_OPEN, topic, task=task, due=due)]
        if third and rng.random() < 0.5:
            block.append(self.act(rng.choice(third), V.DECLINES, topic))
        block.append(self.act(owner, V.ACCEPTANCES, topic))
        return block

    # ---------------------------------------------------------------- hostile content

    def private_data(self, who: Person, items: Sequence[tuple[str, str]]) -> Block:
        """``items``: (kind, value) with kind in email/phone/iban. Not roughened, so the value
        is in the transcript verbatim."""
        lines = {
            "email": V.PRIVATE_EMAIL_LINES,
            "phone": V.PRIVATE_PHONE_LINES,
            "iban": V.PRIVATE_IBAN_LINES,
        }
        block = []
        for kind, value in items:
            block.append(Turn(who.label, self.rng.choice(lines[kind]).format(value=value)))
            if self.rng.random() < 0.5:
                block.append(self.backchannel(self.pick(who)))
        return block

    def injection(self, who: Person, sentence: str) -> Block:
        return [Turn(who.label, self.rng.choice(V.INJECTION_LEADS) + sentence)]
