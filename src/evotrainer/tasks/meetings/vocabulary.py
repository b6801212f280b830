"""Vocabulary of the synthetic meeting generator: names, roles, entities, phrasings and the
domains with their topics. The words are data: they live in ``data/vocabulary/*.json`` (each
file's ``about`` says what every list is for), and this module reads them once, as tuples (and
one frozenset), under the names below; the logic lives in ``generator.py`` and ``dialogue.py``.

Templates use ``str.format`` slots:
- topic texts: ``{vendor}``, ``{client}``, ``{product}``, ``{city}``, ``{month}``, ``{weekday}``,
  ``{pct}``, ``{num}``, ... (see ``ENTITIES`` and ``NUMBER_SLOTS``; a domain may add its own
  entity lists), filled once per topic so a meeting stays self-consistent;
- dialogue acts: ``{opt}`` (a decision option, a verb phrase: "we {opt}"), ``{task}`` (a verb
  phrase: "{owner} will {task}"), ``{point}`` (a clause: "I checked and {point}"), ``{kw}`` (a
  topic keyword), ``{title}`` (the topic as a noun phrase), ``{due}`` (" by Friday" or ""),
  ``{name}``/``{other}`` (a participant's first name), ``{reason}`` (a clause).

Topic rules (checked by tests/test_generator.py): every keyword occurs in the topic's title, so
introducing a topic by its title puts all its keywords in the transcript; options and tasks are
lower-case verb phrases without a final full stop; points are lower-case clauses.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

FILES = ("dialogue", "domains", "entities", "hostile", "offtopic", "people", "references")
SETS = frozenset({"NON_NOUN_KEYWORDS"})  # read as a frozenset; every JSON list else a tuple


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


def _load() -> dict[str, Any]:
    out: dict[str, Any] = {}
    folder = files("evotrainer.tasks.meetings").joinpath("data", "vocabulary")
    for name in FILES:
        data = json.loads(folder.joinpath(f"{name}.json").read_text(encoding="utf-8"))["data"]
        for key, value in data.items():
            out[key] = frozenset(value) if key in SETS else _frozen(value)
    return out


_WORDS = _load()

# data/vocabulary/people.json
FIRST_NAMES: tuple[str, ...] = _WORDS["FIRST_NAMES"]
SURNAMES: tuple[str, ...] = _WORDS["SURNAMES"]
GENERIC_ROLES: tuple[str, ...] = _WORDS["GENERIC_ROLES"]
# data/vocabulary/entities.json
ENTITIES: dict[str, tuple[str, ...]] = _WORDS["ENTITIES"]
NUMBER_SLOTS: dict[str, tuple[int, int]] = _WORDS["NUMBER_SLOTS"]
NON_NOUN_KEYWORDS: frozenset[str] = _WORDS["NON_NOUN_KEYWORDS"]
DUES: tuple[tuple[str, tuple[str, ...]], ...] = _WORDS["DUES"]
MONTH_DAYS: tuple[str, ...] = _WORDS["MONTH_DAYS"]
# data/vocabulary/dialogue.json
OPENINGS: tuple[str, ...] = _WORDS["OPENINGS"]
GREETINGS: tuple[str, ...] = _WORDS["GREETINGS"]
INTRODUCTIONS: tuple[str, ...] = _WORDS["INTRODUCTIONS"]
INTRO_PROMPTS: tuple[str, ...] = _WORDS["INTRO_PROMPTS"]
PURPOSES: dict[str, tuple[str, ...]] = _WORDS["PURPOSES"]
VAGUE_PURPOSES: tuple[str, ...] = _WORDS["VAGUE_PURPOSES"]
FIRST_TOPIC_INTROS: tuple[str, ...] = _WORDS["FIRST_TOPIC_INTROS"]
TOPIC_INTROS: tuple[str, ...] = _WORDS["TOPIC_INTROS"]
IMPLICIT_TOPIC_INTROS: tuple[str, ...] = _WORDS["IMPLICIT_TOPIC_INTROS"]
POINT_FRAMES: tuple[str, ...] = _WORDS["POINT_FRAMES"]
REMARKS: tuple[str, ...] = _WORDS["REMARKS"]
ELABORATIONS: tuple[str, ...] = _WORDS["ELABORATIONS"]
GENERIC_FACTS: tuple[str, ...] = _WORDS["GENERIC_FACTS"]
OPTION_REMARKS: tuple[str, ...] = _WORDS["OPTION_REMARKS"]
QUESTIONS: tuple[str, ...] = _WORDS["QUESTIONS"]
ANSWERS: tuple[str, ...] = _WORDS["ANSWERS"]
YES_NO_QUESTIONS: tuple[str, ...] = _WORDS["YES_NO_QUESTIONS"]
YES_NO_ANSWERS: tuple[str, ...] = _WORDS["YES_NO_ANSWERS"]
PROPOSALS: tuple[str, ...] = _WORDS["PROPOSALS"]
IDEAS: tuple[str, ...] = _WORDS["IDEAS"]
IDEA_REACTIONS: tuple[str, ...] = _WORDS["IDEA_REACTIONS"]
AGREEMENTS: tuple[str, ...] = _WORDS["AGREEMENTS"]
REMARK_REACTIONS: tuple[str, ...] = _WORDS["REMARK_REACTIONS"]
DISAGREEMENTS: tuple[str, ...] = _WORDS["DISAGREEMENTS"]
REASONS: tuple[str, ...] = _WORDS["REASONS"]
PARKED: tuple[str, ...] = _WORDS["PARKED"]
DECISIONS_EXPLICIT: tuple[str, ...] = _WORDS["DECISIONS_EXPLICIT"]
DECISIONS_IMPLICIT: tuple[str, ...] = _WORDS["DECISIONS_IMPLICIT"]
DECISIONS_BY_REFERENCE: tuple[str, ...] = _WORDS["DECISIONS_BY_REFERENCE"]
CONFIRMATIONS: tuple[str, ...] = _WORDS["CONFIRMATIONS"]
ASSIGNMENTS: tuple[str, ...] = _WORDS["ASSIGNMENTS"]
VOLUNTEERS: tuple[str, ...] = _WORDS["VOLUNTEERS"]
ACKS: tuple[str, ...] = _WORDS["ACKS"]
REQUESTS_ADDRESSED: tuple[str, ...] = _WORDS["REQUESTS_ADDRESSED"]
REQUESTS_OPEN: tuple[str, ...] = _WORDS["REQUESTS_OPEN"]
ACCEPTANCES: tuple[str, ...] = _WORDS["ACCEPTANCES"]
ACCEPTANCES_WITH_DUE: tuple[str, ...] = _WORDS["ACCEPTANCES_WITH_DUE"]
LATE_ACCEPTANCES: tuple[str, ...] = _WORDS["LATE_ACCEPTANCES"]
DECLINES: tuple[str, ...] = _WORDS["DECLINES"]
REASSIGNMENTS: tuple[str, ...] = _WORDS["REASSIGNMENTS"]
REASSIGN_ACCEPTS: tuple[str, ...] = _WORDS["REASSIGN_ACCEPTS"]
RECAP_OPENERS: tuple[str, ...] = _WORDS["RECAP_OPENERS"]
CLOSINGS: tuple[str, ...] = _WORDS["CLOSINGS"]
CLOSING_REPLIES: tuple[str, ...] = _WORDS["CLOSING_REPLIES"]
BACKCHANNELS: tuple[str, ...] = _WORDS["BACKCHANNELS"]
STATUS_UPDATES: tuple[str, ...] = _WORDS["STATUS_UPDATES"]
STATUS_PROMPTS: tuple[str, ...] = _WORDS["STATUS_PROMPTS"]
INCIDENT_PROMPTS: tuple[str, ...] = _WORDS["INCIDENT_PROMPTS"]
INCIDENT_STEPS: tuple[str, ...] = _WORDS["INCIDENT_STEPS"]
INTERRUPTIONS: tuple[tuple[str, str, str], ...] = _WORDS["INTERRUPTIONS"]
GENERIC_TASKS: tuple[str, ...] = _WORDS["GENERIC_TASKS"]
# data/vocabulary/offtopic.json
OFFTOPIC: tuple[tuple[str, ...], ...] = _WORDS["OFFTOPIC"]
OFFTOPIC_LINES: tuple[str, ...] = _WORDS["OFFTOPIC_LINES"]
# data/vocabulary/hostile.json
PRIVATE_EMAIL_LINES: tuple[str, ...] = _WORDS["PRIVATE_EMAIL_LINES"]
PRIVATE_PHONE_LINES: tuple[str, ...] = _WORDS["PRIVATE_PHONE_LINES"]
PRIVATE_IBAN_LINES: tuple[str, ...] = _WORDS["PRIVATE_IBAN_LINES"]
EMAIL_DOMAINS: tuple[str, ...] = _WORDS["EMAIL_DOMAINS"]
PHONE_FORMATS: tuple[str, ...] = _WORDS["PHONE_FORMATS"]
IBAN_FORMATS: tuple[tuple[str, str], ...] = _WORDS["IBAN_FORMATS"]
INJECTIONS: tuple[str, ...] = _WORDS["INJECTIONS"]
INJECTION_LEADS: tuple[str, ...] = _WORDS["INJECTION_LEADS"]
# data/vocabulary/references.json
SUMMARY_OPENERS: dict[str, tuple[str, ...]] = _WORDS["SUMMARY_OPENERS"]
SUMMARY_DECIDED: tuple[str, ...] = _WORDS["SUMMARY_DECIDED"]
SUMMARY_OPEN: tuple[str, ...] = _WORDS["SUMMARY_OPEN"]
SUMMARY_FACT: tuple[str, ...] = _WORDS["SUMMARY_FACT"]
SUMMARY_ACTIONS: tuple[str, ...] = _WORDS["SUMMARY_ACTIONS"]
DECISION_REFERENCES: tuple[str, ...] = _WORDS["DECISION_REFERENCES"]
# data/vocabulary/domains.json
DOMAINS: dict[str, dict] = _WORDS["DOMAINS"]
