"""MultiWOZ files, read in place: ``{dialogue_id: {"goal": ..., "log": [...]}}`` as JSON or
gzip-compressed JSON (``val.json.gz``, ``test-dev.json.gz``). Two views of a file:

- ``load_items``: the validation items (items.py): the human reply turns, the meta-objective;
- ``load_goals``: the users' goals (goals.py) as conversations with a simulated customer: the
  real training instances (``harness.real_data``) and the second objective (success against a
  fixed cooperative customer, ``task.validate_on: goals``).

A file that is not JSON, a dialogue without its goal or log, or a malformed goal raises
DataError naming the file and the dialogue.

Items can also be written to and read from a JSONL file of their own (``save_items``; a
``.jsonl`` path): one item per line, its id kept. The benchmark's "just use your labels" method
trains on such a copy of the selection items; a bad line raises DataError naming file and line.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Collection, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from evotrainer.errors import DataError
from evotrainer.tasks.dialogue.conversation import DialogueGoal
from evotrainer.tasks.dialogue.database import Database, short_hash
from evotrainer.tasks.dialogue.goals import goal_from_multiwoz
from evotrainer.tasks.dialogue.items import ReplyItem, items_from_dialogue
from evotrainer.tasks.dialogue.ontology import DOMAINS
from evotrainer.tasks.dialogue.personas import COOPERATIVE, KINDS
from evotrainer.types import Instance

SOURCE = "MultiWOZ"
REAL_DIFFICULTY = 0.5  # the patience of a customer with a real goal is set as at L 0.5


def read_dialogues(path: str | Path) -> dict[str, Mapping[str, Any]]:
    p = Path(path)
    try:
        raw = p.read_bytes()
        text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        data = json.loads(text.decode("utf-8"))
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{p}: not a MultiWOZ JSON file (JSON or gzip of JSON): {exc}") from None
    if not isinstance(data, dict) or not data:
        raise DataError(
            f"{p}: expected a JSON object {{dialogue_id: {{goal, log}}}} with dialogues"
        )
    for did, d in data.items():
        if (
            not isinstance(d, dict)
            or not isinstance(d.get("goal"), dict)
            or not isinstance(d.get("log"), list)
        ):
            raise DataError(f"{p}: dialogue {did!r} has no goal object or no log list")
    return data


ITEM_FIELDS = ("dialogue_id", "turn", "context", "domain", "constraints", "requested")


def is_items_file(path: str | Path) -> bool:
    return Path(path).suffix.lower() == ".jsonl"


def save_items(path: str | Path, instances: list[Instance]) -> Path:
    """The items, one JSON object a line (their ids kept)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for inst in instances:
            it = inst.payload
            if not isinstance(it, ReplyItem):
                raise TypeError(f"instance {inst.id!r} is not a reply item")
            rec = {"id": inst.id, **asdict(it)}
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return p


def read_items(path: str | Path) -> list[Instance]:
    """The items of a JSONL file written by ``save_items``."""
    out = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read it: {exc}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            missing = [k for k in ("id", *ITEM_FIELDS) if k not in rec]
            if missing:
                raise ValueError(f"no {', '.join(missing)}")
            item = ReplyItem(
                str(rec["dialogue_id"]),
                int(rec["turn"]),
                tuple((str(w), str(t)) for w, t in rec["context"]),
                str(rec["domain"]),
                tuple((str(k), str(v)) for k, v in rec["constraints"]),
                tuple(str(s) for s in rec["requested"]),
                str(rec.get("focus") or ""),
                str(rec.get("booking_ref") or ""),
                str(rec.get("human_reply") or ""),
            )
        except (ValueError, TypeError) as exc:
            raise DataError(f"{path}, line {n}: not a dialogue item: {exc}") from None
        if item.domain not in DOMAINS or not item.requested:
            raise DataError(f"{path}, line {n}: an item needs a known domain and requested slots")
        out.append(replace(item_instance(item), id=str(rec["id"])))
    if not out:
        raise DataError(f"{path}: holds no items")
    return out


def item_id(item: ReplyItem) -> str:
    return f"{item.dialogue_id}:{item.turn}"


def item_instance(item: ReplyItem, source: str = SOURCE) -> Instance:
    n = sum(len(text) for _, text in item.context)
    bucket = "short" if n < 300 else "medium" if n < 900 else "long"
    return Instance(item_id(item), item, source=source, kind="reply", length_bucket=bucket)


def load_items(path: str | Path, db: Database) -> list[Instance]:
    out: list[Instance] = []
    for did, d in read_dialogues(path).items():
        try:
            items = items_from_dialogue(did, d["log"], db)
        except (TypeError, AttributeError, IndexError, KeyError) as exc:
            raise DataError(f"{path}: dialogue {did!r}: malformed log: {exc}") from None
        out += [item_instance(i) for i in items]
    if not out:
        raise DataError(f"{path}: no customer turn asks for a slot the clerk then gave: no items")
    return out


def dialogue_of(instance_id: str) -> str:
    """The dialogue an instance comes from (an item's id is DIALOGUE:TURN)."""
    return instance_id.partition(":")[0]


def goal_instance(did: str, payload: DialogueGoal) -> Instance:
    n = len(payload.goal.domains)
    return Instance(
        f"{did}:goal:{payload.persona}",
        payload,
        source=SOURCE,
        difficulty=payload.difficulty,
        kind=payload.persona,
        length_bucket="short" if n == 1 else "medium" if n == 2 else "long",
    )


def load_goals(
    path: str | Path,
    db: Database,
    personas: str = "mixed",
    exclude_dialogues: Collection[str] = (),
) -> list[Instance]:
    """The file's goals as conversations: with ``personas="mixed"`` each dialogue's customer
    gets a persona by a hash of its id (every kind alike), else every customer is cooperative
    (the fixed simulator of the second objective). Dialogues in ``exclude_dialogues`` are left
    out (those whose items validate)."""
    skip = set(exclude_dialogues)
    out = []
    for did, d in read_dialogues(path).items():
        if did in skip:
            continue
        order = _domain_order(d["log"])
        try:
            goal = goal_from_multiwoz(d["goal"], order, db)
        except ValueError as exc:
            raise DataError(f"{path}: dialogue {did!r}: {exc}") from None
        persona = KINDS[short_hash(did) % len(KINDS)] if personas == "mixed" else COOPERATIVE
        seed = short_hash(did, "seed", n=4)
        out.append(goal_instance(did, DialogueGoal(goal, persona, REAL_DIFFICULTY, seed, did)))
    return out


def _domain_order(log: list[Any]) -> list[str]:
    order: list[str] = []
    for turn in log[0::2]:
        acts = turn.get("dialog_act") if isinstance(turn, dict) else None
        for name in acts or {}:
            domain = str(name).partition("-")[0].lower()
            if domain in DOMAINS and domain not in order:
                order.append(domain)
    return order
