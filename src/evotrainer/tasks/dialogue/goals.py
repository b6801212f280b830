"""User goals: what a simulated customer wants, per domain (ConvLab's agenda goals, MultiWOZ's
goal format): the constraints it states (``info``), the slots it asks for (``reqt``), a booking
(``book``), and a first choice that fails (``fail_info``: constraints no row satisfies;
``fail_book``: booking details the desk refuses), after which it falls back to the real ones.

Goals come from the MultiWOZ validation dialogues (real, ``goal_from_multiwoz``) or are sampled
from the database at difficulty L (``sample_goal``): L scales the number of domains, of
constraints and of requested slots, and the chance of a failing first choice.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evotrainer.tasks.dialogue.database import Database, Row
from evotrainer.tasks.dialogue.ontology import (
    BOOK_SLOTS,
    DOMAINS,
    INFORMABLE,
    REQUESTABLE,
    clean_value,
)

Pairs = tuple[tuple[str, str], ...]
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True)
class DomainGoal:
    domain: str
    info: Pairs
    reqt: tuple[str, ...] = ()
    book: Pairs = ()
    fail_info: Pairs = ()
    fail_book: Pairs = ()

    @property
    def constraints(self) -> dict[str, str]:
        return dict(self.info)


@dataclass(frozen=True)
class Goal:
    """A customer's whole goal, its domains in the order it pursues them."""

    domains: tuple[DomainGoal, ...]

    def describe(self) -> str:
        """The goal in words (the LLM-played user's reason for calling; the input text)."""
        parts = []
        for d in self.domains:
            wants = ", ".join(f"{k} {v}" for k, v in d.info) or "anything"
            line = f"a {d.domain} ({wants})"
            if d.reqt:
                line += f", asking for its {', '.join(d.reqt)}"
            if d.book:
                line += f", booked for {', '.join(f'{k} {v}' for k, v in d.book)}"
            parts.append(line)
        return "You want " + "; then ".join(parts) + "."


def _pairs(value: object, where: str) -> Pairs:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} is not an object")
    out = []
    for k, v in value.items():
        if k in ("invalid", "pre_invalid"):
            continue
        out.append((str(k), clean_value(str(k), str(v))))
    return tuple(out)


def goal_from_multiwoz(goal: Mapping[str, object], order: Sequence[str], db: Database) -> Goal:
    """A MultiWOZ goal object as a Goal; ``order``: the domains in the order the dialogue took
    them up. A failing first choice that some row satisfies after all (or that equals the real
    one) is dropped; so are requested slots the database cannot answer. ValueError naming the
    field when the object is malformed or the goal has no domain the task knows."""
    domains = []
    for name in sorted(DOMAINS, key=lambda d: order.index(d) if d in order else len(order)):
        spec = goal.get(name)
        if not spec:
            continue
        if not isinstance(spec, Mapping):
            raise ValueError(f"goal.{name} is not an object")
        info = _pairs(spec.get("info") or {}, f"goal.{name}.info")
        raw = spec.get("reqt") or []
        if not isinstance(raw, list | tuple):
            raise ValueError(f"goal.{name}.reqt is not a list")
        reqt = tuple(str(x) for x in raw if x in REQUESTABLE[name])
        book = _pairs(spec.get("book") or {}, f"goal.{name}.book") if name in BOOK_SLOTS else ()
        fail_info = _pairs(spec.get("fail_info") or {}, f"goal.{name}.fail_info")
        fail_book = _pairs(spec.get("fail_book") or {}, f"goal.{name}.fail_book") if book else ()
        if name != "taxi" and (fail_info == info or db.match(name, dict(fail_info))):
            fail_info = ()
        domains.append(DomainGoal(name, info, reqt, book, fail_info, fail_book))
    domains = _taxi_ends(domains)
    if not domains:
        raise ValueError("the goal names none of the domains " + ", ".join(DOMAINS))
    return Goal(tuple(domains))


def _taxi_ends(domains: list[DomainGoal]) -> list[DomainGoal]:
    """A taxi goal without a departure or destination goes between the goal's other places."""
    places = [
        f"the {d.domain}" for d in domains if d.domain in ("restaurant", "hotel", "attraction")
    ]
    out = []
    for d in domains:
        if d.domain == "taxi":
            info = dict(d.info)
            info.setdefault("departure", places[0] if places else "the train station")
            info.setdefault("destination", places[-1] if len(places) > 1 else "the city centre")
            if not info.get("leaveAt") and not info.get("arriveBy"):
                info["leaveAt"] = "17:00"
            d = DomainGoal("taxi", tuple(info.items()), d.reqt or ("car type", "phone"))
        out.append(d)
    return out


# -- synthetic goals ---------------------------------------------------------------------
def sample_goal(db: Database, difficulty: float, rng: random.Random) -> Goal:
    """A goal drawn from the database at difficulty L: 1 domain below L 1/3, 2 below 2/3,
    else 3 (one step either way at random); more constraints and requests, bookings and
    failing first choices as L rises."""
    n = max(1, min(3, round(1 + 2 * difficulty + rng.uniform(-0.5, 0.5))))
    entity = [d for d in ("restaurant", "hotel", "attraction", "train") if db.rows.get(d)]
    picked = rng.sample(entity, min(n, len(entity)))
    if n >= 2 and rng.random() < 0.3 and len(picked) >= 2:
        picked[-1] = "taxi"
    domains = [sample_domain(db, d, difficulty, rng) for d in picked]
    return Goal(tuple(_taxi_ends(domains)))


def sample_domain(db: Database, domain: str, difficulty: float, rng: random.Random) -> DomainGoal:
    if domain == "taxi":
        time = f"{rng.randint(7, 21):02d}:{rng.choice(('00', '15', '30', '45'))}"
        return DomainGoal("taxi", (("leaveAt", time),), ("car type", "phone"))
    target = rng.choice(db.rows[domain])
    info = _constraints(domain, target, difficulty, rng)
    asked = [
        s for s in REQUESTABLE[domain] if s not in dict(info) and target.get(s) not in ("?", "")
    ]
    reqt = tuple(rng.sample(asked, min(len(asked), 1 + round(2 * difficulty * rng.random()))))
    book: Pairs = ()
    if domain in BOOK_SLOTS and rng.random() < 0.3 + 0.4 * difficulty:
        book = _booking(domain, dict(info), rng)
    fail_info: Pairs = ()
    if domain != "train" and rng.random() < 0.6 * difficulty:
        fail_info = _failing(db, domain, info, rng)
    fail_book: Pairs = ()
    if book and rng.random() < 0.4 * difficulty:
        slot = BOOK_SLOTS[domain][-1]
        current = dict(book)[slot]
        fail_book = ((slot, _other_booking_value(slot, current, rng)),)
    return DomainGoal(domain, info, reqt, book, fail_info, fail_book)


def _constraints(domain: str, target: Row, difficulty: float, rng: random.Random) -> Pairs:
    if domain == "train":
        info = [(s, target[s]) for s in ("departure", "destination", "day")]
        if rng.random() < 0.5:
            info.append(("leaveAt", f"{max(0, int(target['leaveAt'][:2]) - 1):02d}:00"))
        else:
            h, m = int(target["arriveBy"][:2]), target["arriveBy"][3:]
            info.append(("arriveBy", f"{h:02d}:{m}" if m == "00" else f"{min(23, h + 1):02d}:00"))
        return tuple(info)
    slots = [s for s in INFORMABLE[domain] if s != "name" and target.get(s) not in (None, "?", "")]
    k = max(1, min(len(slots), 1 + round(2.5 * difficulty + rng.uniform(-0.5, 0.5))))
    chosen = sorted(rng.sample(slots, k), key=INFORMABLE[domain].index)
    return tuple((s, target[s]) for s in chosen)


def _booking(domain: str, info: Mapping[str, str], rng: random.Random) -> Pairs:
    people = str(rng.randint(1, 8))
    if domain == "train":
        return (("people", people),)
    day = info.get("day") or rng.choice(DAYS)
    if domain == "restaurant":
        return (
            ("people", people),
            ("day", day),
            ("time", f"{rng.randint(11, 21)}:{rng.choice(('00', '30'))}"),
        )
    return (("people", people), ("day", day), ("stay", str(rng.randint(1, 5))))


def _other_booking_value(slot: str, current: str, rng: random.Random) -> str:
    if slot == "time":
        hour = (int(current[:2]) + rng.choice((1, 2, -1))) % 24
        return f"{hour:02d}:{current[3:]}"
    if slot == "stay":
        return str(int(current) + rng.randint(1, 3))
    return str(int(current) + rng.randint(1, 4))


def _failing(db: Database, domain: str, info: Pairs, rng: random.Random) -> Pairs:
    """The constraints with one value changed so that no row satisfies them (none if no
    such value exists)."""
    slots = list(dict(info))
    rng.shuffle(slots)
    for slot in slots:
        values = sorted({r[slot] for r in db.rows[domain] if r.get(slot)} - {dict(info)[slot]})
        rng.shuffle(values)
        for v in values:
            changed = tuple((k, v if k == slot else x) for k, x in info)
            if not db.match(domain, dict(changed)):
                return changed
    return ()
