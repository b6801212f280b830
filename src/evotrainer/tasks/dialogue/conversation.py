"""The environment of a conversation with a simulated customer: the customer (simulator.py),
the database rows the clerk is shown (the rows that fit the constraints stated so far: a
perfect state tracker, no tool calls), the booking desk's answers, and the record of every
reply: which phone numbers, postcodes, references and train IDs it gave that it was never
shown. ``replay`` runs the same environment over recorded replies, which is how an episode is
scored (the customer's acts depend only on the goal, the seed and the replies, so the replay
is the conversation, whichever voice the customer spoke with).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from evotrainer.tasks.dialogue.database import Database, Row, satisfies
from evotrainer.tasks.dialogue.episode import Episode, grounded_share
from evotrainer.tasks.dialogue.goals import Goal
from evotrainer.tasks.dialogue.ontology import SHOWN, checkable_values, row_entity, words
from evotrainer.tasks.dialogue.personas import PERSONAS
from evotrainer.tasks.dialogue.simulator import AgendaUser, DomainState, UserTurn


@dataclass(frozen=True)
class DialogueGoal:
    """The payload of a conversation instance: the customer's goal, its persona, the
    difficulty it was drawn at and the seed everything random in it comes from."""

    goal: Goal
    persona: str
    difficulty: float
    seed: int
    dialogue_id: str = ""  # the MultiWOZ dialogue whose goal it is ("" = sampled)
    patience: float = 1.0  # the harness's patience gene: every persona's patience scaled


@dataclass(frozen=True)
class View:
    """What the clerk is shown before a reply: the domain, the matching rows (at most
    ``max_rows``), how many match, and the booking desk's lines."""

    domain: str
    rows: tuple[dict[str, str], ...]
    matching: int
    booking: tuple[str, ...] = ()
    constraints: tuple[tuple[str, str], ...] = ()

    def text(self) -> str:
        """The database section of the clerk's prompt."""
        stated = ", ".join(f"{k}={v}" for k, v in self.constraints) or "nothing yet"
        head = f"Database ({self.domain}; the customer asked for: {stated})"
        if not self.rows:
            lines = [f"{head}: no {self.domain} matches."]
        else:
            more = (
                f", {self.matching - len(self.rows)} more not shown"
                if self.matching > len(self.rows)
                else ""
            )
            lines = [f"{head}: {self.matching} match{more}."]
            lines += ["- " + " | ".join(f"{k}: {v}" for k, v in r.items()) for r in self.rows]
        return "\n".join([*lines, *self.booking])


def row_view(domain: str, rows: Sequence[Row]) -> tuple[dict[str, str], ...]:
    return tuple({f: str(r.get(f, "")) for f in SHOWN[domain]} for r in rows)


class Conversation:
    def __init__(self, payload: DialogueGoal, db: Database, max_rows: int = 5) -> None:
        persona = PERSONAS[payload.persona]
        if payload.patience != 1.0:
            persona = replace(persona, patience=persona.patience * payload.patience)
        self.payload = payload
        self.user = AgendaUser(payload.goal, persona, db, payload.seed, payload.difficulty)
        self.db = db
        self.max_rows = max_rows
        self.shown: set[str] = set()  # checkable values the clerk has been shown or told
        self.given = 0
        self.invented: list[str] = []
        self.replies: list[str] = []
        self.words: list[int] = []

    def opening(self) -> UserTurn:
        turn = self.user.opening()
        self.shown |= checkable_values(turn.text)
        return turn

    def view(self) -> View:
        """The rows fitting what the customer has said in its current domain (its chosen place
        first), and the booking desk's answer to a booking it asked for."""
        domain, stated = self.user.belief()
        s = self.user.current
        if domain == "taxi":
            rows: list[Row] = [s.chosen] if s.chosen is not None else []
            matching = len(rows)
        else:
            found = self.db.match(domain, stated)
            if s.chosen is not None:
                found = [s.chosen, *(r for r in found if r is not s.chosen)]
            rows, matching = found[: self.max_rows], len(found)
        v = View(domain, row_view(domain, rows), matching, _booking_lines(s), tuple(stated.items()))
        self.shown |= checkable_values(v.text())
        return v

    def step(self, reply: str) -> UserTurn:
        """The clerk's ``reply`` checked (values it was never shown) and answered."""
        found = checkable_values(reply)
        self.given += len(found)
        self.invented += sorted(found - self.shown)
        self.replies.append(reply)
        self.words.append(len(words(reply)))
        turn = self.user.respond(reply)
        self.shown |= checkable_values(turn.text)
        return turn

    def episode(self) -> Episode:
        u = self.user
        states = u.states
        reqs = sum(len(s.requests) or len(s.goal.reqt) for s in states)
        given = sum(len(s.given) for s in states)
        bookings = [s for s in states if s.goal.book]
        outcome = u.outcome or "out of turns"
        return Episode(
            kind="goal",
            turns=len(self.replies),
            requests=given / reqs if reqs else None,
            inform=sum(_fits(s) for s in states) / len(states),
            grounded=grounded_share(self.given, len(self.invented)),
            invented=tuple(self.invented),
            success=float(outcome == "success"),
            booked=sum(s.booked for s in bookings) / len(bookings) if bookings else None,
            efficiency=min(1.0, u.ideal / max(1, len(self.replies))),
            patience_left=max(0, u.patience) / u.patience0,
            mood=round(u.mood, 4),
            words=sum(self.words) / len(self.words) if self.words else 0.0,
            outcome=outcome,
            notes=tuple(_notes(states, self.invented, outcome)),
        )


def _booking_lines(s: DomainState) -> tuple[str, ...]:
    if not s.book_stated or s.chosen is None:
        return ()
    details = ", ".join(f"{k} {v}" for k, v in s.booking.items())
    entity = row_entity(s.domain, s.chosen)
    if s.booking_ok:
        return (
            f"Booking desk: {s.domain} {entity}, {details}: booked, reference {s.booking_ref}.",
        )
    return (f"Booking desk: {s.domain} {entity}, {details}: not available.",)


def _fits(s: DomainState) -> bool:
    if s.chosen is None:
        return False
    if s.domain == "taxi":  # sent once its details are known: it fits when the clerk says which
        return "car type" in s.given
    return satisfies(s.domain, s.chosen, s.constraints)


def _notes(states: Sequence[DomainState], invented: Sequence[str], outcome: str) -> list[str]:
    out = []
    for s in states:
        if s.chosen is None:
            out.append(f"{s.domain}: no fitting place was offered")
            continue
        missing = [q for q in s.requests if q not in s.given]
        if missing:
            out.append(f"{s.domain}: never gave {', '.join(missing)}")
        if s.goal.book and not s.booked:
            out.append(f"{s.domain}: the booking reference was not given")
    if invented:
        out.append("invented " + ", ".join(invented[:4]))
    if outcome == "left":
        out.append("the customer ran out of patience and left")
    return out


def replay(payload: DialogueGoal, db: Database, replies: Sequence[str], max_rows: int) -> Episode:
    """The episode the recorded ``replies`` made (no model call)."""
    conv = Conversation(payload, db, max_rows)
    conv.opening()
    for reply in replies:
        conv.view()
        if conv.step(reply).done:
            break
    return conv.episode()
