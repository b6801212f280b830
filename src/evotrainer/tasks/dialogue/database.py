"""The domain databases the clerk answers from (MultiWOZ's db/*.json, read in place), how a
set of constraints selects rows (the environment's perfect state tracker), and the booking
desk: references and taxis made deterministically from the conversation's seed.

A folder that is missing a domain's file, or a file that is not a JSON list of objects, raises
DataError naming the file (and the row). Without
the MultiWOZ folder the task runs on a small invented database (invented_db.py) and says so.
A row without a field the clerk is shown has it unknown ("?"); a row without its name (a
train without its ID) is an error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from evotrainer.errors import DataError
from evotrainer.tasks.dialogue.ontology import ENTITY_KEY, SHOWN, clean_value, norm, row_entity

Row = Mapping[str, str]
ENTITY_DOMAINS = ("restaurant", "hotel", "attraction", "train")
TAXI_COLOURS = ("black", "white", "red", "yellow", "blue", "grey")
TAXI_MAKES = ("toyota", "skoda", "bmw", "honda", "ford", "audi", "lexus", "volvo", "tesla")
_REF_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


@dataclass(frozen=True)
class Database:
    """Rows per domain (values cleaned, every shown field present) and where they came from."""

    rows: Mapping[str, tuple[Row, ...]]
    source: str
    names: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = {d: frozenset(norm(row_entity(d, r)) for r in rs) for d, rs in self.rows.items()}
        object.__setattr__(self, "names", names)

    @cached_property
    def _owners(self) -> dict[str, dict[str, frozenset[str]]]:
        out: dict[str, dict[str, set[str]]] = {}
        for domain, rows in self.rows.items():
            index = out.setdefault(domain, {})
            for r in rows:
                for field_name in ("phone", "postcode", "trainID"):
                    value = norm(r.get(field_name, ""))
                    if value and value != "?":
                        index.setdefault(value, set()).add(norm(row_entity(domain, r)))
        return {d: {v: frozenset(e) for v, e in idx.items()} for d, idx in out.items()}

    def owners(self, domain: str) -> Mapping[str, frozenset[str]]:
        """Phone numbers, postcodes and train IDs of ``domain`` -> the places that have them."""
        return self._owners.get(domain, {})

    def match(self, domain: str, constraints: Mapping[str, str]) -> list[Row]:
        """The rows of ``domain`` that satisfy ``constraints`` ("dontcare" is no constraint; a
        train leaves at or after ``leaveAt`` and arrives by ``arriveBy``), trains ordered by
        the time asked about."""
        out = [r for r in self.rows.get(domain, ()) if satisfies(domain, r, constraints)]
        if domain == "train":
            if constraints.get("arriveBy") and not constraints.get("leaveAt"):
                out.sort(key=lambda r: r.get("arriveBy", ""), reverse=True)
            else:
                out.sort(key=lambda r: r.get("leaveAt", ""))
        return out

    def entities(self, domain: str, name: str) -> list[Row]:
        """The rows named ``name`` (train IDs repeat across days: several rows)."""
        key = norm(name)
        return [r for r in self.rows.get(domain, ()) if norm(row_entity(domain, r)) == key]

    def named_in(self, domain: str, text: str) -> list[str]:
        """The entities of ``domain`` that ``text`` names (normalised), longest name first; a
        name found only inside a longer one found does not count ("the cambridge punter" does
        not also name "punter")."""
        t = norm(text)
        hits = [n for n in self.names.get(domain, ()) if len(n) >= 4 and n in t]
        out = []
        for n in sorted(hits, key=lambda n: (-len(n), n)):
            if n in t:
                out.append(n)
                t = t.replace(n, "|")
        return out


def satisfies(domain: str, row: Row, constraints: Mapping[str, str]) -> bool:
    for slot, value in constraints.items():
        v = clean_value(slot, value)
        if not v or v in ("dontcare", "dont care", "not mentioned", "?"):
            continue
        have = row.get(slot)
        if have is None:
            return False
        if domain in ("train", "taxi") and slot == "leaveAt":
            if have < v:
                return False
        elif domain in ("train", "taxi") and slot == "arriveBy":
            if have > v:
                return False
        elif slot == "name":
            if norm(have) != norm(v):
                return False
        elif clean_value(slot, have) != v:
            return False
    return True


def load_database(folder: str | Path) -> Database:
    """The MultiWOZ databases in ``folder`` (``<domain>_db.json``)."""
    root = Path(folder)
    rows: dict[str, tuple[Row, ...]] = {}
    for domain in ENTITY_DOMAINS:
        path = root / f"{domain}_db.json"
        rows[domain] = tuple(_read_rows(path, domain))
    return Database(rows, str(root.resolve()))


def _read_rows(path: Path, domain: str) -> list[dict[str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file (the {domain} database)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable JSON file: {exc}") from None
    if not isinstance(data, list) or not data:
        raise DataError(f"{path}: expected a non-empty JSON list of {domain} rows")
    out = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise DataError(f"{path}: row {i} is not an object")
        key = ENTITY_KEY.get(domain, "name")
        if not str(rec.get(key) or "").strip():
            raise DataError(f"{path}: row {i} has no {key}")
        # a field the row lacks is unknown ("?"): never offered as a requested value
        out.append({f: clean_value(f, str(rec.get(f, "?"))) for f in SHOWN[domain]})
    return out


def short_hash(*parts: object, n: int = 8) -> int:
    key = "\x1f".join(map(str, parts)).encode()
    return int.from_bytes(hashlib.sha1(key).digest()[:n], "big")


def reference(seed: int, domain: str, entity: str, details: Mapping[str, str]) -> str:
    """An 8-character booking reference, the same for the same booking in the same
    conversation."""
    x = short_hash(seed, domain, entity, sorted(details.items()))
    chars = []
    for _ in range(8):
        x, k = divmod(x, len(_REF_CHARS))
        chars.append(_REF_CHARS[k])
    if not any(c.isdigit() for c in chars):
        chars[-1] = "7"
    if not any(c.isalpha() for c in chars):
        chars[0] = "K"
    return "".join(chars)


def taxi_row(seed: int, constraints: Mapping[str, str]) -> Row:
    """The taxi the booking desk sends for these details: a car and its driver's number."""
    x = short_hash(seed, "taxi", sorted(constraints.items()))
    colour = TAXI_COLOURS[x % len(TAXI_COLOURS)]
    make = TAXI_MAKES[(x // 7) % len(TAXI_MAKES)]
    phone = "07" + str(x % 10**9).zfill(9)
    return {"car type": f"{colour} {make}", "phone": phone}


def booking_fails(details: Mapping[str, str], failing: Mapping[str, str]) -> bool:
    """A booking fails when it asks for the goal's failing details (``fail_book``)."""
    return bool(failing) and all(details.get(k) == v for k, v in failing.items())


def shown_rows(domain: str, rows: Sequence[Row]) -> list[dict[str, str]]:
    return [{f: str(r.get(f, "")) for f in SHOWN[domain]} for r in rows]
