"""A small invented Cambridge database, made deterministically from word lists: what the task
runs on where the MultiWOZ databases are absent (a fresh clone, the tests). Every name, address,
phone number and postcode here is made up; none is MultiWOZ's data. The run says when it uses it.
"""

from __future__ import annotations

import random

from evotrainer.tasks.dialogue.database import Database, Row

AREAS = ("centre", "north", "south", "east", "west")
PRICES = ("cheap", "moderate", "expensive")
FOODS = ("italian", "indian", "chinese", "british", "french", "thai", "turkish", "spanish")
ATTRACTION_TYPES = ("museum", "college", "park", "theatre", "boat", "nightclub", "cinema")
ADJECTIVES = ("golden", "silver", "green", "old", "little", "royal", "hidden", "blue", "red")
NOUNS = ("lantern", "willow", "anchor", "bell", "garden", "bridge", "fountain", "orchard")
STREETS = ("mill road", "hills road", "regent street", "king street", "station road")
TOWNS = ("london kings cross", "ely", "norwich", "peterborough", "stansted airport")
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _place(rng: random.Random, used: set[str], last: str) -> str:
    while True:
        name = f"the {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} {last}".strip()
        if name not in used:
            used.add(name)
            return name


def _contact(rng: random.Random) -> dict[str, str]:
    return {
        "address": f"{rng.randint(1, 199)} {rng.choice(STREETS)}",
        "postcode": f"cb{rng.randint(1, 5)}{rng.randint(1, 9)}{rng.choice('abdefghjlnpqrstuwxyz')}"
        f"{rng.choice('abdefghjlnpqrstuwxyz')}",
        "phone": "01223" + "".join(str(rng.randint(0, 9)) for _ in range(6)),
    }


def invented_database(seed: int = 0) -> Database:
    rng = random.Random(f"invented-db-{seed}")
    used: set[str] = set()
    restaurants: list[Row] = []
    for food in FOODS:
        for _ in range(4):
            restaurants.append(
                {
                    "name": _place(rng, used, "kitchen"),
                    "food": food,
                    "pricerange": rng.choice(PRICES),
                    "area": rng.choice(AREAS),
                    **_contact(rng),
                }
            )
    hotels: list[Row] = []
    for i in range(16):
        hotels.append(
            {
                "name": _place(rng, used, "house" if i % 2 else "lodge"),
                "type": "guesthouse" if i % 3 else "hotel",
                "pricerange": rng.choice(PRICES),
                "area": rng.choice(AREAS),
                "stars": str(rng.choice((2, 3, 4, 4))),
                "parking": rng.choice(("yes", "yes", "no")),
                "internet": rng.choice(("yes", "yes", "yes", "no")),
                **_contact(rng),
            }
        )
    attractions: list[Row] = []
    for kind in ATTRACTION_TYPES:
        for _ in range(3):
            fee = rng.choice(("free", "free", "5 pounds", "3.50 pounds"))
            attractions.append(
                {
                    "name": _place(rng, used, kind),
                    "type": kind,
                    "area": rng.choice(AREAS),
                    "entrance fee": fee,
                    **_contact(rng),
                }
            )
    trains: list[Row] = []
    for town in TOWNS:
        minutes = rng.choice((17, 38, 51, 79))
        price = f"{rng.choice((4.40, 10.10, 17.60, 23.60)):.2f} pounds"
        for day in DAYS:
            for hour in range(5, 23, 2):
                for dep, dest in (("cambridge", town), (town, "cambridge")):
                    start = hour * 60 + rng.choice((0, 11, 24, 40))
                    end = start + minutes
                    trains.append(
                        {
                            "trainID": "",
                            "departure": dep,
                            "destination": dest,
                            "day": day,
                            "leaveAt": f"{start // 60:02d}:{start % 60:02d}",
                            "arriveBy": f"{end // 60 % 24:02d}:{end % 60:02d}",
                            "duration": f"{minutes} minutes",
                            "price": price,
                        }
                    )
    ids = rng.sample(range(1000, 10000), len(trains))  # distinct train IDs
    trains = [{**t, "trainID": f"TR{i}"} for t, i in zip(trains, ids, strict=True)]
    rows = {
        "restaurant": tuple(restaurants),
        "hotel": tuple(hotels),
        "attraction": tuple(attractions),
        "train": tuple(trains),
    }
    return Database(rows, "invented (built in: no MultiWOZ database found)")
