"""The code gym's words for the lexical operators: style phrases by topic (keyword operator,
seed variations) and programming synonyms (operators/vocabulary.py)."""

from __future__ import annotations

from evotrainer.operators.vocabulary import InstructionVocabulary

STYLE_PHRASES: dict[str, str] = {
    "Handle empty inputs.": "edge",
    "Consider edge cases such as empty lists, zero and negative numbers.": "edge",
    "Prefer a linear-time algorithm.": "speed",
    "Avoid nested loops over large inputs.": "speed",
    "Validate the arguments and raise ValueError on bad input.": "validation",
    "Raise ValueError exactly when the docstring says so.": "validation",
    "Never use eval or exec.": "safety",
    "Do not read files, start processes or open network connections.": "safety",
    "Keep the code short and readable.": "length",
    "Write the simplest code that works.": "length",
    "Follow PEP 8.": "style",
    "Use descriptive variable names.": "style",
    "Return the result; do not print it.": "io",
    "Reply with only the code.": "format",
    "Put the whole function in one Python code block.": "format",
    "Check the function against every example in the docstring.": "examples",
    "Make sure the function works for every input, not only the examples.": "general",
}

SEED_PHRASES: tuple[str, ...] = (
    "Handle empty inputs.",
    "Prefer a linear-time algorithm.",
    "Validate the arguments and raise ValueError on bad input.",
    "Never use eval or exec.",
    "Keep the code short and readable.",
    "Return the result; do not print it.",
    "Check the function against every example in the docstring.",
)

SYNONYMS: dict[str, tuple[str, ...]] = {
    "function": ("routine",),
    "implementation": ("solution",),
    "solution": ("implementation",),
    "edge cases": ("corner cases", "boundary cases"),
    "corner cases": ("edge cases",),
    "efficient": ("fast", "performant"),
    "readable": ("clear", "legible"),
    "docstring": ("specification",),
    "examples": ("sample calls",),
    "inputs": ("arguments",),
    "code block": ("fenced block",),
}

VOCABULARY = InstructionVocabulary(
    phrases=STYLE_PHRASES, seed_phrases=SEED_PHRASES, synonyms=SYNONYMS
)
