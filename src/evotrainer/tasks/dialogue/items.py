"""The validation items: customer turns of the human MultiWOZ dialogues that ask for a slot
the human clerk then gave. The agent sees the human conversation up to that turn and the
database rows that fit the customer's constraints at that point (the dialogue's annotated
belief state), and writes the clerk's reply; it is scored by request recall (the values
asked for, of the place in question), inform match (the places and values it gives belong to
the place in question, or to the shown rows when none is in question yet) and groundedness (no
phone number, postcode, reference or train ID it was not shown). The human clerk's reply is the
reference the report shows.

Where the validation file is absent, ``synthetic_items`` makes held-out items of the same shape
from the database (a templated context).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evotrainer.tasks.dialogue import nlg
from evotrainer.tasks.dialogue.conversation import View, row_view
from evotrainer.tasks.dialogue.database import Database, Row, satisfies
from evotrainer.tasks.dialogue.episode import Episode, grounded_share
from evotrainer.tasks.dialogue.ontology import (
    ACT_SLOTS,
    INFORMABLE,
    REQUESTABLE,
    TRAIN_ID,
    checkable_values,
    clean_value,
    mentions,
    norm,
    phrase_slots,
    row_entity,
    words,
)
from evotrainer.tasks.dialogue.personas import PERSONAS
from evotrainer.tasks.dialogue.render import CLERK, CUSTOMER

ITEM_DOMAINS = ("restaurant", "hotel", "attraction", "train")
_SPACING = (
    (" n't", "n't"),
    (" 's", "'s"),
    (" 'm", "'m"),
    (" 're", "'re"),
    (" 'll", "'ll"),
    (" 'd", "'d"),
)


@dataclass(frozen=True)
class ReplyItem:
    """One human context to answer: the conversation so far, the domain and constraints the
    customer has stated, the slots it asks for, the place in question (if the conversation
    named one), a booking reference the desk gave (if any) and the human clerk's reply."""

    dialogue_id: str
    turn: int
    context: tuple[tuple[str, str], ...]
    domain: str
    constraints: tuple[tuple[str, str], ...]
    requested: tuple[str, ...]
    focus: str = ""
    booking_ref: str = ""
    human_reply: str = ""

    def rows(self, db: Database, max_rows: int) -> list[Row]:
        """The place in question first, then the other rows that fit, at most ``max_rows``."""
        found = db.match(self.domain, dict(self.constraints))
        if self.focus:
            mine = [
                r
                for r in db.entities(self.domain, self.focus)
                if satisfies(self.domain, r, dict(self.constraints))
            ]
            mine = mine or db.entities(self.domain, self.focus)[:1]
            found = [*mine[:1], *(r for r in found if r not in mine[:1])]
        return found[:max_rows]

    def view(self, db: Database, max_rows: int) -> View:
        rows = self.rows(db, max_rows)
        matching = max(len(rows), len(db.match(self.domain, dict(self.constraints))))
        booking = (
            (f"Booking desk: {self.domain} {self.focus}: booked, reference {self.booking_ref}.",)
            if self.booking_ref
            else ()
        )
        return View(self.domain, row_view(self.domain, rows), matching, booking, self.constraints)


def tidy(text: str) -> str:
    """MultiWOZ's tokenised text ("does n't", "centre .") read as written."""
    t = " ".join(str(text).split())
    for a, b in _SPACING:
        t = t.replace(a, b)
    return re.sub(r" ([.,?!;:])", r"\1", t)


def score_reply(item: ReplyItem, reply: str, db: Database, max_rows: int) -> Episode:
    """The reply's request recall, inform match and groundedness."""
    rows = item.rows(db, max_rows)
    candidates = _in_question(item, rows)
    got = 0
    missing = []
    for slot in item.requested:
        if slot == "reference":
            ok = bool(item.booking_ref) and norm(item.booking_ref) in norm(reply)
        else:
            ok = any(mentions(reply, slot, r.get(slot, "")) for r in candidates)
        got += ok
        if not ok:
            missing.append(slot)
    shown = checkable_values(item.view(db, max_rows).text()) | {
        v for _, text in item.context for v in checkable_values(text)
    }
    found = checkable_values(reply)
    invented = sorted(found - shown)
    right, total = _inform(item, reply, db, candidates)
    notes = [f"did not give {phrase_slots(missing)}"] if missing else []
    if invented:
        notes.append("invented " + ", ".join(invented[:4]))
    return Episode(
        kind="reply",
        turns=1,
        requests=got / len(item.requested) if item.requested else None,
        inform=right / total if total else None,
        grounded=grounded_share(len(found), len(invented)),
        invented=tuple(invented),
        words=float(len(words(reply))),
        outcome="reply",
        notes=tuple(notes),
    )


def _in_question(item: ReplyItem, rows: Sequence[Row]) -> list[Row]:
    """The place in question's row(s), or every shown row when none is in question."""
    mine = [r for r in rows if item.focus and norm(row_entity(item.domain, r)) == norm(item.focus)]
    return mine or list(rows)


def _inform(
    item: ReplyItem, reply: str, db: Database, candidates: Sequence[Row]
) -> tuple[int, int]:
    """(places and values the reply gives that belong to the candidates, all it gives)."""
    ok = {norm(row_entity(item.domain, r)) for r in candidates}
    if item.domain == "train":
        named = [norm(m.group(0)) for m in TRAIN_ID.finditer(reply)]
    else:
        named = db.named_in(item.domain, reply)
    right = sum(n in ok for n in named)
    total = len(named)
    if item.booking_ref and norm(item.booking_ref) in norm(reply):  # the booking in question's
        right, total = right + 1, total + 1
    owners = db.owners(item.domain)
    for value in checkable_values(reply):
        if value in owners:
            total += 1
            right += bool(owners[value] & ok)
    return right, total


# -- from the human dialogues ---------------------------------------------------------------
def items_from_dialogue(dialogue_id: str, log: Sequence[Mapping], db: Database) -> list[ReplyItem]:
    """The dialogue's customer turns that ask for a slot the human clerk's next turn gives."""
    out = []
    for t in range(0, len(log) - 1, 2):
        user, clerk = log[t], log[t + 1]
        asked = _acts(user.get("dialog_act") or {}, "Request")
        if not asked:
            continue
        domain = next(iter(asked))
        given = _given(clerk.get("dialog_act") or {}, domain)
        slots = tuple(s for s in asked[domain] if s in given)
        belief = _belief(clerk.get("metadata") or {}, domain)
        context = tuple(
            (CLERK if i % 2 else CUSTOMER, tidy(log[i].get("text", ""))) for i in range(t + 1)
        )
        focus = _focus(domain, [text for _, text in context], db) or _focus(
            domain, [clerk.get("text", "")], db
        )
        ref = _reference(clerk.get("metadata") or {}, domain) if "reference" in slots else ""
        item = ReplyItem(
            dialogue_id, t, context, domain, belief, slots, focus, ref, tidy(clerk.get("text", ""))
        )
        rows = item.rows(db, 5)
        about = _in_question(item, rows)
        usable = tuple(
            s
            for s in slots
            if (s == "reference" and ref) or any(r.get(s) not in (None, "", "?") for r in about)
        )
        if usable and rows:
            out.append(
                ReplyItem(
                    dialogue_id, t, context, domain, belief, usable, focus, ref, item.human_reply
                )
            )
    return out


def _acts(acts: Mapping, kind: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, pairs in acts.items():
        dom, _, act = str(name).partition("-")
        domain = dom.lower()
        if act != kind or domain not in ITEM_DOMAINS or not isinstance(pairs, list):
            continue
        for pair in pairs:
            slot = ACT_SLOTS.get(str(pair[0])) if isinstance(pair, list) and pair else None
            if slot and (slot in REQUESTABLE[domain] or slot == "reference"):
                if slot == "price" and domain != "train":
                    slot = "pricerange"
                out.setdefault(domain, []).append(slot)
    return out


def _given(acts: Mapping, domain: str) -> set[str]:
    out = set()
    for name, pairs in acts.items():
        dom, _, act = str(name).partition("-")
        if dom.lower() not in (domain, "booking") or not isinstance(pairs, list):
            continue
        for pair in pairs:
            slot = ACT_SLOTS.get(str(pair[0])) if isinstance(pair, list) and pair else None
            if slot:
                out.add("pricerange" if slot == "price" and domain != "train" else slot)
    return out


def _belief(metadata: Mapping, domain: str) -> tuple[tuple[str, str], ...]:
    semi = (metadata.get(domain) or {}).get("semi") or {}
    out = []
    for slot in INFORMABLE[domain]:
        v = clean_value(slot, str(semi.get(slot) or ""))
        if v and v not in ("not mentioned", "none"):
            out.append((slot, v))
    return tuple(out)


def _reference(metadata: Mapping, domain: str) -> str:
    booked = ((metadata.get(domain) or {}).get("book") or {}).get("booked") or []
    refs = [b.get("reference") for b in booked if isinstance(b, Mapping) and b.get("reference")]
    return str(refs[-1]) if refs else ""


def _focus(domain: str, texts: Sequence[str], db: Database) -> str:
    """The place the last text naming places named (a train by its ID); "" when that text
    names several (the question is about all of them: every shown row is in question)."""
    best = ""
    for text in texts:
        if domain == "train":
            named = {clean_value("trainID", m.group(0)) for m in TRAIN_ID.finditer(text)}
        else:
            named = set(db.named_in(domain, text))
        if named:
            best = next(iter(named)) if len(named) == 1 else ""
    return best


# -- held out, from the database -----------------------------------------------------------
def synthetic_items(db: Database, n: int, rng: random.Random) -> list[ReplyItem]:
    """``n`` items of the same shape made from the database: the customer asked for a place,
    the clerk named one, the customer asks for 1-3 of its details."""
    out = []
    cooperative = PERSONAS["cooperative"]
    domains = [d for d in ITEM_DOMAINS if db.rows.get(d)]
    for i in range(n):
        domain = domains[i % len(domains)]
        row = rng.choice(db.rows[domain])
        slots = [s for s in INFORMABLE[domain] if s != "name" and row.get(s) not in (None, "?", "")]
        constraints = tuple((s, row[s]) for s in rng.sample(slots, min(2, len(slots))))
        asked = [
            s
            for s in REQUESTABLE[domain]
            if row.get(s) not in (None, "", "?") and s not in dict(constraints)
        ]
        wanted = tuple(rng.sample(asked, min(len(asked), rng.randint(1, 3))))
        name = row_entity(domain, row)
        context = (
            (CUSTOMER, nlg.opening(domain, list(constraints), cooperative, True, rng)),
            (CLERK, f"How about {name}?" if domain != "train" else f"{name} would suit you."),
            (CUSTOMER, nlg.request(wanted, cooperative, rng)),
        )
        out.append(ReplyItem(f"synthetic-{i}", 2, context, domain, constraints, wanted, name))
    return out
