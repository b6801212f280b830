"""Rule-based clerks that run where a model would (LLMClient fakes: ``fake:clerk`` and
``fake:inventing-clerk``), through the same rollout, rewards and metric as a model.

The reference clerk reads its prompt (render.py's layout), looks at the rows it was shown and
answers exactly: it relays the booking desk's answer, gives the values the customer asked for
(of the place under discussion: the last shown place the conversation named, else the first
row), apologises when nothing matches, otherwise offers the first row. It is the check that
the simulator, the rewards and the metric are right: it must reach a high success and request
recall. The inventing clerk answers the same way but makes up every phone number, postcode,
address, reference and train ID it gives: it must score low.

For any other prompt (the LLM-driven operators' calls) both return a fixed, sensible policy
text chosen by a hash of the request. Deterministic; the scores mean nothing about a model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

from evotrainer.llm.base import SamplingParams
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.tasks.dialogue.llm_user import SAY
from evotrainer.tasks.dialogue.ontology import (
    ENTITY_KEY,
    SLOT_NAMES,
    norm,
    requested_slots,
)
from evotrainer.tasks.dialogue.render import CLERK, CUSTOMER, split_prompt
from evotrainer.types import Message

_DB_HEAD = re.compile(r"^Database \((\w+);")
_BOOKED = re.compile(r"^Booking desk: .*: booked, reference (\w+)\.$")
_MATCH = re.compile(r": (\d+) match")
# what the clerk asks first when many rows match, per domain
ASK_FIRST = {
    "restaurant": ("area", "food", "pricerange"),
    "hotel": ("area", "pricerange", "type"),
    "attraction": ("type", "area"),
    "train": ("day", "departure", "destination"),
}
QUESTIONS = {
    "area": "What area would you like?",
    "food": "What type of food would you like?",
    "pricerange": "What price range would you like?",
    "type": "What type of place would you like?",
    "day": "What day would you like to travel?",
    "departure": "Where are you leaving from?",
    "destination": "Where are you going to?",
}
_INVENTED = {"phone", "postcode", "address", "trainID", "reference"}

POLICY_TEXTS = (
    "Answer with the exact details from the database rows: name the place and copy the phone "
    "number, address, postcode or reference the customer asks for.",
    "Be brief and friendly. Offer one matching place by name and give exactly the details the "
    "customer asks for, copied from the rows.",
    "If no row matches, say so and ask what to change. Never make up phone numbers, postcodes "
    "or references: copy them from the rows.",
)


def _row(line: str) -> dict[str, str]:
    out = {}
    for part in line[2:].split(" | "):
        key, sep, value = part.partition(": ")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _entity(domain: str, row: Mapping[str, str]) -> str:
    return row.get(ENTITY_KEY.get(domain, "name"), "")


def _invent(slot: str, value: str) -> str:
    k = int(hashlib.sha1(f"{slot}:{value}".encode()).hexdigest(), 16)
    if slot == "phone":
        return "01223" + str(k % 10**6).zfill(6)
    if slot == "postcode":
        return f"cb{k % 9 + 1}{k % 7 + 1}zq"
    if slot == "address":
        return f"{k % 90 + 10} invented lane"
    if slot == "trainID":
        return f"TR{k % 9000 + 1000}"
    return "".join("ABCDEFGHJKLMNPQRSTUVWXYZ23456789"[(k >> (5 * i)) % 32] for i in range(7)) + "9"


class ClerkAnswer:
    """One answer of a rule-based clerk to a clerk prompt."""

    def __init__(self, invents: bool) -> None:
        self.invents = invents

    def value(self, slot: str, value: str) -> str:
        return _invent(slot, value) if self.invents and slot in _INVENTED else value

    def __call__(self, turns: Sequence[tuple[str, str]], database: Sequence[str]) -> str:
        head = _DB_HEAD.match(database[0]) if database else None
        domain = head.group(1) if head else ""
        rows = [_row(line) for line in database if line.startswith("- ")]
        said = " ".join(t for who, t in turns if who == CLERK)
        last = next((t for who, t in reversed(turns) if who == CUSTOMER), "")
        for line in database:
            m = _BOOKED.match(line)
            if m and norm(m.group(1)) not in norm(said):
                return f"You're booked. Your reference number is {self.value('reference', m.group(1))}."
            if (
                line.startswith("Booking desk:")
                and line.endswith("not available.")
                and "book" in last.lower()
            ):
                return (
                    "I'm sorry, that booking is not available. Would another day or time suit you?"
                )
        if not rows:
            return f"I'm sorry, there is no {domain or 'place'} matching that. Would you like to try something else?"
        focus = self._focus(domain, rows, turns)
        wanted = [s for s in requested_slots(last, domain) if s in focus]
        if wanted:
            return self._give(domain, focus, wanted)
        count = _MATCH.search(database[0])
        missing = [q for q in ASK_FIRST.get(domain, ()) if f"{q}=" not in database[0]]
        named = norm(_entity(domain, focus)) in norm(" ".join(t for _, t in turns))
        asked_before = bool(turns) and len(turns) >= 2 and turns[-2][1].startswith("Sure. What")
        many = count is not None and int(count.group(1)) > 3
        if many and missing and not named and not asked_before and "dontcare" not in database[0]:
            return f"Sure. {QUESTIONS[missing[0]]}"
        return self._offer(domain, focus)

    @staticmethod
    def _focus(
        domain: str, rows: list[dict[str, str]], turns: Sequence[tuple[str, str]]
    ) -> dict[str, str]:
        text = norm(" ".join(t for _, t in turns))
        best, at = rows[0], -1
        for r in rows:
            pos = text.rfind(norm(_entity(domain, r))) if _entity(domain, r) else -1
            if pos > at:
                best, at = r, pos
        return best

    def _give(self, domain: str, row: Mapping[str, str], slots: Sequence[str]) -> str:
        name = self.value(ENTITY_KEY.get(domain, "name"), _entity(domain, row))
        parts = [f"the {SLOT_NAMES.get(s, s)} is {self.value(s, row[s])}" for s in slots]
        return f"For {name}, " + ", ".join(parts) + "."

    def _offer(self, domain: str, row: Mapping[str, str]) -> str:
        if domain == "train":
            tid = self.value("trainID", row["trainID"])
            return (
                f"Train {tid} leaves {row['departure']} at {row['leaveAt']} and arrives in "
                f"{row['destination']} at {row['arriveBy']}."
            )
        if domain == "taxi":
            return f"I've booked a {row['car type']}; its contact number is {self.value('phone', row['phone'])}."
        details = [f"{k} {row[k]}" for k in ("food", "type", "pricerange", "area") if row.get(k)]
        return f"I recommend {row['name']} ({', '.join(details)})."


def clerk_answer(invents: bool):
    answer = ClerkAnswer(invents)

    def respond(messages: Sequence[Message], params: SamplingParams) -> str:
        content = messages[-1].content if messages else ""
        parts = split_prompt(content)
        if parts is None:  # an operator's request: a fixed policy text
            k = int(hashlib.sha1(f"{content}|{params.seed}".encode()).hexdigest(), 16)
            return POLICY_TEXTS[k % len(POLICY_TEXTS)]
        turns, database, _ = parts
        return answer(turns, database)

    return respond


def reference_clerk() -> FunctionLLM:
    """``fake:clerk``: answers exactly from the rows it is shown."""
    return FunctionLLM(clerk_answer(False), model_id="fake:clerk")


def inventing_clerk() -> FunctionLLM:
    """``fake:inventing-clerk``: answers like the reference clerk with made-up values."""
    return FunctionLLM(clerk_answer(True), model_id="fake:inventing-clerk")


def _customer_answer(messages: Sequence[Message], params: SamplingParams) -> str:
    content = messages[-1].content if messages else ""
    _, sep, rest = content.partition(SAY)
    if not sep:
        return "Hello."
    said = rest.strip().split("\n", 1)[0].strip()
    return f"Customer: {said.strip(chr(34))}"


def scripted_customer() -> FunctionLLM:
    """``fake:customer``: an LLM-played customer that says exactly what the agenda tells it
    (the ``user_model`` plumbing, its budget and cache, without a model)."""
    return FunctionLLM(_customer_answer, model_id="fake:customer")
