"""What the agenda-based customer says: its dialogue acts in words, styled by its persona (a
terse customer gives bare values, an impatient one hurries, a chatty one wanders off topic).
Every choice comes from the ``random.Random`` the simulator passes, seeded per conversation
and turn, so the same conversation always reads the same (and the LLM cache stays valid).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from evotrainer.tasks.dialogue.ontology import phrase_slots
from evotrainer.tasks.dialogue.personas import CHATTER, Persona

Pairs = Sequence[tuple[str, str]]

_DOMAIN_WORDS = {
    "restaurant": "a restaurant",
    "hotel": "a place to stay",
    "attraction": "something to see",
    "train": "a train",
    "taxi": "a taxi",
}


def slot_phrase(domain: str, slot: str, value: str) -> str:
    """One constraint in words ("in the centre", "serving italian food")."""
    if value == "dontcare":
        return f"any {slot}"
    if slot == "area":
        return f"in the {value}"
    if slot == "pricerange":
        return f"in the {value} price range"
    if slot == "food":
        return f"serving {value} food"
    if slot == "type":
        return f"that is a {value}"
    if slot == "stars":
        return f"with {value} stars"
    if slot in ("parking", "internet"):
        thing = "free parking" if slot == "parking" else "free wifi"
        return f"with {thing}" if value == "yes" else f"without {thing}"
    if slot == "name":
        return f"called {value}"
    if slot == "departure":
        return f"from {value}"
    if slot == "destination":
        return f"to {value}"
    if slot == "day":
        return f"on {value}"
    if slot == "leaveAt":
        return f"leaving after {value}" if domain == "train" else f"leaving at {value}"
    if slot == "arriveBy":
        return f"arriving by {value}"
    if slot == "people":
        return f"for {value} {'person' if value == '1' else 'people'}"
    if slot == "time":
        return f"at {value}"
    if slot == "stay":
        return f"for {value} {'night' if value == '1' else 'nights'}"
    return f"with {slot} {value}"


def join(parts: Iterable[str]) -> str:
    items = [p for p in parts if p]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def constraints_text(domain: str, pairs: Pairs, persona: Persona) -> str:
    if persona.name == "terse":
        return ", ".join(v for _, v in pairs)
    return join(slot_phrase(domain, s, v) for s, v in pairs)


def opening(domain: str, pairs: Pairs, persona: Persona, first: bool, rng: random.Random) -> str:
    """The first message about a domain: what the customer wants and its first constraints."""
    what = _DOMAIN_WORDS[domain]
    said = constraints_text(domain, pairs, persona)
    if persona.name == "terse":
        return f"{domain}. {said}." if said else f"{domain}."
    lead = (
        rng.choice(("I'm looking for", "I need", "Can you help me find"))
        if first
        else (rng.choice(("I also need", "Next, I'm looking for", "I also want")))
    )
    text = f"{lead} {what}" + (f" {said}" if said else "") + "."
    if persona.name == "impatient":
        text = "Quickly please: " + text[0].lower() + text[1:]
    elif persona.name == "indecisive":
        text = "Hmm, I think " + text[0].lower() + text[1:] + " Maybe."
    return text


def inform(domain: str, pairs: Pairs, persona: Persona, rng: random.Random) -> str:
    said = constraints_text(domain, pairs, persona)
    if persona.name == "terse":
        return f"{said}."
    return rng.choice(("It should be {}.", "I'd like it {}.", "Something {}, please.")).format(said)


def request(slots: Sequence[str], persona: Persona, rng: random.Random) -> str:
    what = phrase_slots(slots)
    if persona.name == "terse":
        return what.removeprefix("the ") + "?"
    if persona.name == "impatient":
        return f"Just give me {what}."
    return rng.choice(("Could you give me {}?", "What is {}?", "Can I have {}, please?")).format(
        what
    )


def book(domain: str, pairs: Pairs, persona: Persona) -> str:
    said = join(slot_phrase(domain, s, v) for s, v in pairs)
    if persona.name == "terse":
        return f"Book it, {', '.join(v for _, v in pairs)}."
    if domain == "train":
        return f"Please book it {said}, and tell me the reference number."
    return f"Please book it {said}. I need the reference number."


def accept(name: str, persona: Persona) -> str:
    if persona.name == "terse":
        return "Fine."
    return f"{name.title()} sounds good."


def fallback(domain: str, pairs: Pairs, persona: Persona) -> str:
    """The failing first choice given up for the real one."""
    said = constraints_text(domain, pairs, persona)
    if persona.name == "terse":
        return f"Then {said}."
    return f"Oh, that's a pity. How about one {said} instead?"


def insist(persona: Persona) -> str:
    if persona.name == "terse":
        return "Well?"
    return "Is there one like that? Please check again."


def ask_offer(persona: Persona) -> str:
    if persona.name == "terse":
        return "Which one?"
    if persona.name == "impatient":
        return "Just tell me which one!"
    return "Which one would you recommend?"


def reject(domain: str, pairs: Pairs, persona: Persona) -> str:
    said = constraints_text(domain, pairs, persona)
    if persona.name == "terse":
        return f"No. {said}."
    return f"That's not quite what I need: it should be {said}."


def dontcare(slots: Sequence[str], persona: Persona) -> str:
    if persona.name == "terse":
        return "Any."
    return f"I don't mind about {phrase_slots(slots)}."


def change_mind(domain: str, pairs: Pairs, persona: Persona) -> str:
    said = constraints_text(domain, pairs, persona)
    return f"Actually, wait. I've changed my mind: I'd rather have one {said}."


def remind_booking(persona: Persona) -> str:
    if persona.name == "terse":
        return "Reference?"
    return "Did the booking go through? What is the reference number?"


def goodbye(persona: Persona) -> str:
    if persona.name == "terse":
        return "Bye."
    return "That's everything, thank you. Goodbye!"


def leave(persona: Persona) -> str:
    if persona.name == "impatient":
        return "This is taking forever. Forget it, goodbye."
    return "Never mind, I'll look somewhere else. Goodbye."


def styled(text: str, persona: Persona, rng: random.Random, difficulty: float) -> str:
    """The message with the persona's small talk around it (more of it as L rises)."""
    n = persona.chatter + (1 if persona.chatter and rng.random() < difficulty else 0)
    if n <= 0:
        return text
    lines = rng.sample(CHATTER, min(n, len(CHATTER)))
    return " ".join([lines[0], text, *lines[1:]])
