"""The Cambridge tourist-information domain: its domains and slots, the words that name a slot
in a customer's request, and how a slot's value is recognised in a reply.

One definition of each, shared by the simulated user (what did the clerk give?), the reward
components, the validation metric and the reference clerk, so that all of them read a reply
the same way. Values are compared normalised (lower case, letters and digits only), so
"01223 315702" gives the phone 01223315702 and "CB1 2DP" the postcode cb12dp.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

DOMAINS = ("restaurant", "hotel", "attraction", "train", "taxi")
BOOKABLE = ("restaurant", "hotel", "train")

# the constraints a customer states, per domain (goal "info" slots)
INFORMABLE: dict[str, tuple[str, ...]] = {
    "restaurant": ("food", "pricerange", "area", "name"),
    "hotel": ("type", "pricerange", "area", "stars", "parking", "internet", "name"),
    "attraction": ("type", "area", "name"),
    "train": ("departure", "destination", "day", "leaveAt", "arriveBy"),
    "taxi": ("departure", "destination", "leaveAt", "arriveBy"),
}
# what a customer may ask for, per domain (goal "reqt" slots)
REQUESTABLE: dict[str, tuple[str, ...]] = {
    "restaurant": ("address", "phone", "postcode", "area", "food", "pricerange"),
    "hotel": (
        "address",
        "phone",
        "postcode",
        "area",
        "pricerange",
        "stars",
        "type",
        "parking",
        "internet",
    ),
    "attraction": ("address", "phone", "postcode", "entrance fee", "area", "type"),
    "train": ("trainID", "price", "duration", "leaveAt", "arriveBy"),
    "taxi": ("car type", "phone"),
}
BOOK_SLOTS: dict[str, tuple[str, ...]] = {
    "restaurant": ("people", "day", "time"),
    "hotel": ("people", "day", "stay"),
    "train": ("people",),
}
# the fields a row shows the clerk, per domain (name first)
SHOWN: dict[str, tuple[str, ...]] = {
    "restaurant": ("name", "food", "pricerange", "area", "address", "postcode", "phone"),
    "hotel": (
        "name",
        "type",
        "pricerange",
        "area",
        "stars",
        "parking",
        "internet",
        "address",
        "postcode",
        "phone",
    ),
    "attraction": ("name", "type", "area", "entrance fee", "address", "postcode", "phone"),
    "train": (
        "trainID",
        "departure",
        "destination",
        "day",
        "leaveAt",
        "arriveBy",
        "duration",
        "price",
    ),
    "taxi": ("car type", "phone"),
}
ENTITY_KEY = {"train": "trainID", "taxi": "phone"}  # the field that names a row (else "name")

# MultiWOZ dialogue-act slot names -> slot names here
ACT_SLOTS = {
    "Addr": "address",
    "Phone": "phone",
    "Post": "postcode",
    "Fee": "entrance fee",
    "Area": "area",
    "Type": "type",
    "Food": "food",
    "Stars": "stars",
    "Parking": "parking",
    "Internet": "internet",
    "Ticket": "price",
    "Time": "duration",
    "Id": "trainID",
    "Leave": "leaveAt",
    "Arrive": "arriveBy",
    "Car": "car type",
    "Ref": "reference",
}

# words that name a slot in a request ("what is their phone number?"), most specific first
SLOT_WORDS: dict[str, tuple[str, ...]] = {
    "reference": ("reference", "booking number", "confirmation number", "ref "),
    "postcode": ("postcode", "post code", "postal", "zip"),
    "phone": ("phone", "telephone", "contact number", "number to call"),
    "address": ("address", "where is it", "located"),
    "entrance fee": ("entrance fee", "entry fee", "admission", "fee", "cost to get in"),
    "duration": ("travel time", "how long", "duration", "journey time", "trip take"),
    "trainID": ("train id", "train number", "trainid", "id"),
    "price": ("ticket price", "how much", "price", "cost", "fare"),
    "leaveAt": ("depart", "leave", "leaving time"),
    "arriveBy": ("arrive", "arrival", "get in"),
    "car type": ("car type", "type of car", "kind of car", "what car", "make of car"),
    "pricerange": ("price range", "pricerange", "how expensive", "pricey"),
    "stars": ("stars", "star", "rating"),
    "parking": ("parking",),
    "internet": ("internet", "wifi", "wi-fi"),
    "food": ("food", "cuisine"),
    "area": ("area", "part of town", "part of the city"),
    "type": ("type", "what kind"),
}
# how the customer (and the LLM-played user) names a slot
SLOT_NAMES = {
    "address": "address",
    "phone": "phone number",
    "postcode": "postcode",
    "entrance fee": "entrance fee",
    "area": "area",
    "type": "type",
    "food": "type of food",
    "pricerange": "price range",
    "stars": "star rating",
    "parking": "parking",
    "internet": "internet",
    "trainID": "train ID",
    "price": "ticket price",
    "duration": "travel time",
    "leaveAt": "departure time",
    "arriveBy": "arrival time",
    "car type": "car type",
    "reference": "reference number",
}

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
PHONE = re.compile(r"(?<![\w])0\d(?:[\s-]?\d){8,9}(?![\w])")
POSTCODE = re.compile(r"\bcb\s?\d{1,2}\s?\d\s?[a-z]{2}\b", re.IGNORECASE)
REFERENCE = re.compile(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{8}\b")
TRAIN_ID = re.compile(r"\btr\s?\d{4}\b", re.IGNORECASE)
TIME = re.compile(r"\b(\d{1,2})[:.](\d{2})\b")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
NUMBER_WORDS = {
    "1": "one",
    "2": "two",
    "3": "three",
    "4": "four",
    "5": "five",
    "6": "six",
    "7": "seven",
    "8": "eight",
}


def norm(text: str) -> str:
    """Lower case, letters and digits only: how values are compared."""
    return _NON_ALNUM.sub("", str(text).lower())


def words(text: str) -> list[str]:
    return [w for w in _NON_ALNUM.split(str(text).lower()) if w]


def clean_value(slot: str, value: str) -> str:
    """A goal's or a database's value in one spelling (MultiWOZ writes "free" for "yes", a
    few times without the leading zero, "mutliple sports" ...)."""
    if slot == "trainID":
        return norm(value).upper()
    v = " ".join(str(value).strip().lower().split())
    if slot in ("parking", "internet") and v in ("free", "yes", "y"):
        return "yes"
    if slot in ("leaveAt", "arriveBy", "time"):
        m = TIME.search(v)
        return f"{int(m.group(1)):02d}:{m.group(2)}" if m else v
    if slot == "type":
        v = v.replace("mutliple", "multiple").replace("guest house", "guesthouse")
        return {"swimming pool": "swimmingpool", "concert hall": "concerthall"}.get(v, v)
    return v


def checkable_values(text: str) -> set[str]:
    """The values in ``text`` that a clerk can only copy, never guess: phone numbers,
    postcodes, booking references and train IDs, normalised."""
    found = {norm(m.group(0)) for m in PHONE.finditer(text)}
    found |= {norm(m.group(0)) for m in POSTCODE.finditer(text)}
    found |= {norm(m.group(0)) for m in REFERENCE.finditer(text)}
    found |= {norm(m.group(0)) for m in TRAIN_ID.finditer(text)}
    return found


def mentions(text: str, slot: str, value: str) -> bool:
    """Whether the reply ``text`` gives ``value`` for ``slot`` (normalised containment; numbers
    and times by their digits; yes/no slots by their word)."""
    v = clean_value(slot, value)
    if not v or v in ("?", "none", "not mentioned"):
        return False
    t = " ".join(words(text))
    if slot in ("parking", "internet"):
        names = ("parking",) if slot == "parking" else ("internet", "wifi", "wi fi")
        return any(n in t for n in names)
    if slot in ("leaveAt", "arriveBy"):
        m = TIME.search(v)
        if not m:
            return False
        hour, minute = int(m.group(1)), m.group(2)
        return any(int(x.group(1)) == hour and x.group(2) == minute for x in TIME.finditer(text))
    if slot == "price" or (slot == "entrance fee" and NUMBER.search(v)):
        nums = NUMBER.findall(v)
        return bool(nums) and nums[0] in NUMBER.findall(text)
    if slot == "duration":
        nums = NUMBER.findall(v)
        return bool(nums) and nums[0] in NUMBER.findall(text) and "min" in t
    if slot == "stars":
        return re.search(rf"\b({v}|{NUMBER_WORDS.get(v, v)})[ -]?star", t) is not None
    if slot in ("area", "pricerange", "food", "type", "car type", "name"):
        target = " ".join(words(v))
        if slot == "pricerange" and target == "moderate":
            return "moderate" in t
        if not target:
            return False
        # whole words ("east" is not in "least"); a long value also without its spaces
        # ("guest house" gives the type guesthouse)
        return f" {target} " in f" {t} " or (len(norm(v)) >= 6 and norm(v) in norm(text))
    return norm(v) in norm(text)


# requestable slots whose words also state constraints
CONSTRAINT_WORDS_TOO = frozenset(
    {
        "area",
        "type",
        "food",
        "pricerange",
        "stars",
        "parking",
        "internet",
        "leaveAt",
        "arriveBy",
        "price",
    }
)
_ASKING = re.compile(
    r"\?|\b(give me|tell me|can i (?:have|get)|could i (?:have|get)|i need the|i'd like the|"
    r"what is|what's|what are|send me|let me know|would like|want|get the|need the|know the|require|provide|include|information)\b",
    re.IGNORECASE,
)


def requested_slots(text: str, domain: str | None = None) -> list[str]:
    """The slots a customer's message asks for (in its questions and "give me ..." sentences),
    in SLOT_WORDS order, limited to the domain's requestable slots and the booking reference
    when ``domain`` is given. "In the cheap price range" states a constraint: no request."""
    asking = [x for x in re.split(r"(?<=[.?!])\s+", text) if _ASKING.search(x)]
    t_ask = " " + " ".join(words(" ".join(asking))) + " "
    t_all = " " + " ".join(words(text)) + " "
    allowed = set(REQUESTABLE.get(domain, ())) | {"reference"} if domain else None
    out: list[str] = []
    for slot, names in SLOT_WORDS.items():
        if allowed is not None and slot not in allowed:
            continue
        # a constraint's words ("cheap price range") count only where the customer asks
        t = t_ask if slot in CONSTRAINT_WORDS_TOO else t_all
        if any(f" {n.strip()} " in t or (len(n) > 4 and n.strip() in t) for n in names):
            out.append(slot)
    if "pricerange" in out and "price" in out:
        out.remove("price" if domain != "train" else "pricerange")
    return out


def phrase_slots(slots: Iterable[str]) -> str:
    """ "the phone number, postcode and address"."""
    names = [SLOT_NAMES.get(s, s) for s in slots]
    if not names:
        return ""
    if len(names) == 1:
        return f"the {names[0]}"
    return "the " + ", ".join(names[:-1]) + f" and {names[-1]}"


def row_entity(domain: str, row: Mapping[str, str]) -> str:
    """The value that names a row (a train's ID, a taxi's phone, else its name)."""
    return str(row.get(ENTITY_KEY.get(domain, "name"), ""))


# words by which a clerk asks the customer for a constraint ("what area?", "which day?")
QUESTION_WORDS: dict[str, tuple[str, ...]] = {
    "area": ("area", "part of town", "part of the city", "where in"),
    "pricerange": ("price range", "budget", "price", "how much"),
    "food": ("food", "cuisine"),
    "type": ("type", "kind", "guesthouse or", "hotel or"),
    "stars": ("star", "rating"),
    "parking": ("parking",),
    "internet": ("internet", "wifi", "wi-fi"),
    "name": ("name", "particular", "specific"),
    "day": ("day", "when"),
    "leaveAt": ("leave", "depart", "what time"),
    "arriveBy": ("arrive", "arrival", "be there by"),
    "departure": ("from", "departing", "starting"),
    "destination": ("to where", "destination", "going to", "heading"),
}
APOLOGY = re.compile(
    r"\b(sorry|unfortunately|apolog|there (?:is|are) no|no (?:\w+ ){0,3}(?:match|matches|"
    r"results?|availability|rooms?|tables?)|none|nothing|not available|unavailable|"
    r"(?:could|can)(?:not|n't) find|fully booked|no luck)",
    re.IGNORECASE,
)


def questions(text: str, slots: Iterable[str]) -> list[str]:
    """The slots among ``slots`` that the clerk's ``text`` asks about in a question."""
    asked: list[str] = []
    for sentence in re.split(r"(?<=[.?!])\s+", text):
        if "?" not in sentence:
            continue
        t = " " + " ".join(words(sentence)) + " "
        for slot in slots:
            if slot not in asked and any(f" {w} " in t for w in QUESTION_WORDS.get(slot, ())):
                asked.append(slot)
    return asked
