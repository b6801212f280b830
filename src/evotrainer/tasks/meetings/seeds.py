"""The hand-written seed policies of the meeting-minutes task (SPEC: initial policies A, B, C)."""

from __future__ import annotations

from evotrainer.policy.genome import PolicyGenome

SEED_TEXTS: dict[str, str] = {
    "A": (
        "You are a professional secretary. Turn the dialogue into meeting minutes with the date, "
        "topics, decisions and action items."
    ),
    "B": (
        "Summarise the key points of the dialogue as bullet points, and strictly pick out the "
        "tasks that need follow-up, formatted as 'Owner: task'."
    ),
    "C": (
        "First extract the key statements, then summarise how the discussion developed, and "
        "finally list the to-do items."
    ),
}


def seed_policies() -> list[PolicyGenome]:
    return [PolicyGenome.from_text(text, name=name) for name, text in SEED_TEXTS.items()]
