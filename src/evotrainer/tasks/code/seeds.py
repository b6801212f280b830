"""The hand-written seed policies of the code gym."""

from __future__ import annotations

from evotrainer.policy.genome import PolicyGenome

SEED_TEXTS: dict[str, str] = {
    "A": (
        "You are an expert Python programmer. Write a correct and efficient implementation of "
        "the function that handles edge cases such as empty inputs."
    ),
    "B": (
        "Read the docstring and its examples carefully, then write the complete function. "
        "Reply with only the code in a single Python code block."
    ),
    "C": (
        "First think about the edge cases and the size of the inputs, then write a short, "
        "readable solution that raises ValueError when the docstring asks for it."
    ),
}


def seed_policies() -> list[PolicyGenome]:
    return [PolicyGenome.from_text(text, name=name) for name, text in SEED_TEXTS.items()]
