"""The agenda-based simulated customer (after ConvLab-3's MultiWOZ user simulator): it pursues
its goal domain by domain, states its constraints a few at a time, accepts an offered place
that fits them, asks for the slots it wants, books, and says goodbye, or leaves when its
patience or mood runs out. It costs no model call and is deterministic: everything it decides
depends on its goal, its persona, the conversation's seed and what the clerk wrote.

It reads the clerk's reply with the ontology's one reading (ontology.py): which places it names,
which requested values it gives, whether it apologises for finding nothing, what it asks.
The environment around it (the rows the clerk sees, the booking desk) is conversation.py.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from evotrainer.tasks.dialogue import nlg
from evotrainer.tasks.dialogue.database import (
    Database,
    Row,
    booking_fails,
    reference,
    satisfies,
    taxi_row,
)
from evotrainer.tasks.dialogue.goals import DomainGoal, Goal
from evotrainer.tasks.dialogue.ontology import (
    APOLOGY,
    INFORMABLE,
    TRAIN_ID,
    mentions,
    norm,
    questions,
    row_entity,
    words,
)
from evotrainer.tasks.dialogue.personas import Persona, patience_turns

MOOD_GAIN = 0.05  # on a turn with progress
LONG_REPLY_COST = 0.05  # on a reply longer than the persona likes


@dataclass
class DomainState:
    """Where the customer stands with one domain of its goal."""

    goal: DomainGoal
    constraints: dict[str, str]  # what it wants now (the failing first choice, at first)
    failing: bool
    revealed: dict[str, str] = field(default_factory=dict)  # what it has said so far
    chosen: Row | None = None
    requests: list[str] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)
    given: set[str] = field(default_factory=set)
    booking: dict[str, str] = field(default_factory=dict)
    book_failing: bool = False
    book_stated: bool = False
    booking_ok: bool | None = None  # the desk's answer to the stated booking
    booking_ref: str = ""
    booked: bool = False

    @property
    def domain(self) -> str:
        return self.goal.domain

    @property
    def complete(self) -> bool:
        needs_booking = bool(self.goal.book)
        return (
            self.chosen is not None
            and set(self.requests) <= self.given
            and (self.booked or not needs_booking)
        )

    def unrevealed(self) -> list[tuple[str, str]]:
        return [(s, v) for s, v in self.constraints.items() if self.revealed.get(s) != v]


@dataclass(frozen=True)
class UserTurn:
    """What the customer says: its words, its acts (short labels), and whether it is done."""

    text: str
    acts: tuple[str, ...]
    done: bool = False
    outcome: str = ""  # "success" | "left" when done
    progress: bool = False


def ideal_turns(goal: Goal, persona: Persona) -> int:
    """The fewest replies a good clerk needs for this customer: per domain, the turns the
    customer takes to state its constraints, one to give the requested slots, one to book,
    one to apologise for a failing first choice or booking."""
    total = 0
    for d in goal.domains:
        total += max(1, math.ceil(len(d.info) / persona.reveal))
        total += bool(d.reqt) + bool(d.book) + bool(d.fail_info) + bool(d.fail_book)
    return total


def _state(goal: DomainGoal) -> DomainState:
    failing = bool(goal.fail_info)
    constraints = dict(goal.fail_info if failing else goal.info)
    booking = {**dict(goal.book), **dict(goal.fail_book)}
    return DomainState(
        goal, constraints, failing, booking=booking, book_failing=bool(goal.fail_book)
    )


class AgendaUser:
    def __init__(
        self, goal: Goal, persona: Persona, db: Database, seed: int, difficulty: float
    ) -> None:
        self.goal = goal
        self.persona = persona
        self.db = db
        self.seed = seed
        self.difficulty = difficulty
        self.states = [_state(d) for d in goal.domains]
        self.index = 0
        self.turn = 0
        self.ideal = ideal_turns(goal, persona)
        self.patience0 = patience_turns(persona, self.ideal, difficulty)
        self.patience = self.patience0
        self.mood = persona.mood
        self.done = False
        self.outcome = ""
        self.changed_mind = False  # the indecisive customer changes its mind once

    @property
    def current(self) -> DomainState:
        return self.states[min(self.index, len(self.states) - 1)]

    def _rng(self) -> random.Random:
        return random.Random(f"{self.seed}-turn-{self.turn}")

    # -- the customer speaks -------------------------------------------------------------
    def opening(self) -> UserTurn:
        """The first message: the first domain and its first constraints."""
        rng = self._rng()
        text = self._open_domain(self.current, rng, first=True)
        return UserTurn(nlg.styled(text, self.persona, rng, self.difficulty), ("open",))

    def respond(self, clerk: str) -> UserTurn:
        """The customer's answer to the clerk's reply ``clerk``."""
        if self.done:
            return UserTurn("", (), True, self.outcome)
        self.turn += 1
        self.patience -= 1
        rng = self._rng()
        s = self.current
        acts: list[str] = []
        said: list[str] = []
        progress = self._react(s, clerk, acts, said, rng)
        progress |= self._take(s, clerk, acts)
        if s.complete:
            progress = True
            self.index += 1
            if self.index >= len(self.states):
                return self._finish("success", nlg.goodbye(self.persona), acts, progress)
            acts.append(f"next {self.current.domain}")
            said = [self._open_domain(self.current, rng, first=False)]
        elif not said or any(a.startswith(("accept", "booking fallback")) for a in acts):
            said.append(self._agenda(s, acts, rng))
        self.mood += MOOD_GAIN if progress else -self.persona.mood_drop
        if len(words(clerk)) > self.persona.max_words:
            self.mood -= LONG_REPLY_COST
        self.mood = max(0.0, min(1.0, self.mood))
        if self.patience <= 0 or self.mood <= 0:
            return self._finish("left", nlg.leave(self.persona), acts, progress)
        text = nlg.styled(" ".join(said), self.persona, rng, self.difficulty)
        return UserTurn(text, tuple(acts), progress=progress)

    def _finish(self, outcome: str, text: str, acts: list[str], progress: bool) -> UserTurn:
        self.done, self.outcome = True, outcome
        return UserTurn(text, (*acts, outcome), True, outcome, progress)

    def _open_domain(self, s: DomainState, rng: random.Random, first: bool) -> str:
        pairs = self._reveal(s, self.persona.reveal)
        return nlg.opening(s.domain, pairs, self.persona, first, rng)

    def _reveal(self, s: DomainState, k: int) -> list[tuple[str, str]]:
        pairs = s.unrevealed()[:k]
        s.revealed.update(pairs)
        self._taxi(s)
        return pairs

    def _taxi(self, s: DomainState) -> None:
        """A taxi is 'chosen' (sent) once its ends and a time are known."""
        if s.domain == "taxi" and s.chosen is None and not s.unrevealed():
            s.chosen = taxi_row(self.seed, s.revealed)
            s.requests = list(s.goal.reqt)

    # -- what the clerk did --------------------------------------------------------------
    def _take(self, s: DomainState, clerk: str, acts: list[str]) -> bool:
        """Values and references the clerk gave (progress when new)."""
        progress = False
        if s.chosen is not None:
            for slot in s.requests:
                if slot not in s.given and mentions(clerk, slot, s.chosen.get(slot, "")):
                    s.given.add(slot)
                    acts.append(f"got {slot}")
                    progress = True
        if s.booking_ok and not s.booked and norm(s.booking_ref) in norm(clerk):
            s.booked = True
            acts.append("got reference")
            progress = True
        return progress

    def _offered(self, s: DomainState, clerk: str) -> list[str]:
        if s.domain == "train":
            return [norm(m.group(0)) for m in TRAIN_ID.finditer(clerk)]
        return self.db.named_in(s.domain, clerk)

    def _react(
        self, s: DomainState, clerk: str, acts: list[str], said: list[str], rng: random.Random
    ) -> bool:
        progress = False
        apologised = APOLOGY.search(clerk) is not None
        if s.failing and not s.unrevealed() and apologised:
            s.failing = False
            s.constraints = dict(s.goal.info)
            changed = s.unrevealed()
            s.revealed.update(changed)
            acts.append("fallback")
            said.append(nlg.fallback(s.domain, changed, self.persona))
            return True
        if s.booking_ok is False and apologised:
            s.book_failing, s.book_stated, s.booking_ok = False, False, None
            s.booking = dict(s.goal.book)
            acts.append("booking fallback")
            progress = True
        asked = [q for q in questions(clerk, INFORMABLE[s.domain]) if q not in s.revealed]
        if asked and s.chosen is None:
            progress |= self._answer(s, asked, acts, said)
        if s.chosen is None and s.domain != "taxi":
            progress |= self._consider(s, clerk, acts, said)
        if s.chosen is not None and self.persona.changes_mind and not self.changed_mind:
            self._change_mind(s, acts, said, rng)
        return progress

    def _answer(self, s: DomainState, asked: list[str], acts: list[str], said: list[str]) -> bool:
        if not self.persona.answers_questions:
            return False
        known = [(q, s.constraints[q]) for q in asked if q in s.constraints]
        other = [q for q in asked if q not in s.constraints]
        if known:
            s.revealed.update(known)
            self._taxi(s)
            acts.append("answer " + " ".join(q for q, _ in known))
            said.append(nlg.inform(s.domain, known, self.persona, self._rng()))
        if other:
            s.revealed.update(dict.fromkeys(other, "dontcare"))
            acts.append("dontcare " + " ".join(other))
            said.append(nlg.dontcare(other, self.persona))
        return True

    def _consider(self, s: DomainState, clerk: str, acts: list[str], said: list[str]) -> bool:
        """Accept the first offered place that fits what the customer wants; an offer that
        does not fit draws the constraint it breaks."""
        offered = self._offered(s, clerk)
        rows = [r for n in offered for r in self.db.entities(s.domain, n)]
        for row in rows:
            if satisfies(s.domain, row, s.constraints):
                s.chosen = row
                s.requests = [q for q in s.goal.reqt if row.get(q) not in (None, "", "?")]
                acts.append(f"accept {row_entity(s.domain, row)}")
                said.append(nlg.accept(row_entity(s.domain, row), self.persona))
                return True
        if rows:
            broken = [
                (k, v) for k, v in s.constraints.items() if not satisfies(s.domain, rows[0], {k: v})
            ]
            s.revealed.update(broken)
            acts.append("reject")
            said.append(nlg.reject(s.domain, broken, self.persona))
        return False

    def _change_mind(
        self, s: DomainState, acts: list[str], said: list[str], rng: random.Random
    ) -> None:
        """The indecisive customer swaps one constraint for a value that still has rows (once
        in the conversation, after the first place it accepts)."""
        self.changed_mind = True
        for slot in [k for k in s.constraints if k != "name"]:
            values = sorted({r[slot] for r in self.db.rows.get(s.domain, ()) if r.get(slot)})
            rng.shuffle(values)
            for v in values:
                wanted = {**s.constraints, slot: v}
                if v != s.constraints[slot] and self.db.match(s.domain, wanted):
                    s.constraints = wanted
                    s.revealed[slot] = v
                    s.chosen, s.requests, s.given = None, [], set()
                    acts.append(f"change {slot}")
                    said[:] = [nlg.change_mind(s.domain, [(slot, v)], self.persona)]
                    return

    # -- what the customer says next, by its agenda ----------------------------------------
    def _agenda(self, s: DomainState, acts: list[str], rng: random.Random) -> str:
        p = self.persona
        if s.chosen is None:
            pairs = self._reveal(s, p.reveal)
            if pairs:
                acts.append("inform " + " ".join(k for k, _ in pairs))
                return nlg.inform(s.domain, pairs, p, rng)
            if s.chosen is not None:  # a taxi, sent now
                return self._agenda(s, acts, rng)
            acts.append("insist" if s.failing else "ask offer")
            return nlg.insist(p) if s.failing else nlg.ask_offer(p)
        wanted = [q for q in s.requests if q not in s.given]
        if wanted:
            fresh = [q for q in wanted if q not in s.asked] or wanted
            slots = fresh if p.requests_at_once else fresh[:1]
            s.asked.update(slots)
            acts.append("request " + " ".join(slots))
            return nlg.request(slots, p, rng)
        if s.goal.book and not s.book_stated:
            s.book_stated = True
            entity = row_entity(s.domain, s.chosen)
            fails = s.book_failing and booking_fails(s.booking, dict(s.goal.fail_book))
            s.booking_ok = not fails
            s.booking_ref = (
                reference(self.seed, s.domain, entity, s.booking) if s.booking_ok else ""
            )
            acts.append("book")
            return nlg.book(s.domain, list(s.booking.items()), p)
        acts.append("remind booking")
        return nlg.remind_booking(p)

    # -- what the environment shows about the customer's state ------------------------------
    def belief(self) -> tuple[str, dict[str, str]]:
        """The current domain and the constraints stated so far (the perfect state tracker)."""
        s = self.current
        return s.domain, dict(s.revealed)
