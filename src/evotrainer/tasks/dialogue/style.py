"""The dialogue task's hand-written seed policies and its words for the operators: style
phrases by topic and synonyms (lexical operators), reply templates (the template operator) and
the edit that addresses each reward component's low score (the feedback-directed edit)."""

from __future__ import annotations

from evotrainer.operators.base import FeedbackEdit
from evotrainer.operators.vocabulary import InstructionVocabulary
from evotrainer.policy.genome import PolicyGenome

SEED_TEXTS: dict[str, str] = {
    "A": (
        "You are a clerk at the Cambridge tourist information desk. Answer the customer using "
        "only the database rows shown. Give the exact phone number, address, postcode or "
        "reference they ask for."
    ),
    "B": (
        "Be brief and friendly. Offer one matching place by name, and give the details the "
        "customer asks for, copied exactly from the rows."
    ),
    "C": (
        "First check which rows match what the customer wants, then answer their question in "
        "one or two sentences. If nothing matches, say so and ask what to change. Never make "
        "up phone numbers, postcodes or references."
    ),
}


def seed_policies() -> list[PolicyGenome]:
    return [PolicyGenome.from_text(text, name=name) for name, text in SEED_TEXTS.items()]


STYLE_PHRASES: dict[str, str] = {
    "Copy phone numbers, postcodes and references exactly from the rows.": "grounding",
    "Never invent a detail that is not in the rows.": "grounding",
    "Answer every question the customer asks.": "requests",
    "Give all the details the customer asks for in one reply.": "requests",
    "Recommend a place by its name.": "offer",
    "Offer only places from the rows shown.": "offer",
    "Keep each reply to one or two sentences.": "length",
    "Be brief.": "length",
    "Be polite and friendly.": "tone",
    "Thank the customer and acknowledge what they said.": "tone",
    "If nothing matches, say so and suggest changing one thing.": "failure",
    "When a booking is confirmed, give the reference number.": "booking",
    "Ask one short question when you need more information.": "questions",
}

SEED_PHRASES: tuple[str, ...] = (
    "Copy phone numbers, postcodes and references exactly from the rows.",
    "Answer every question the customer asks.",
    "Recommend a place by its name.",
    "Keep each reply to one or two sentences.",
    "If nothing matches, say so and suggest changing one thing.",
    "When a booking is confirmed, give the reference number.",
)

SYNONYMS: dict[str, tuple[str, ...]] = {
    "customer": ("visitor", "caller"),
    "visitor": ("customer",),
    "clerk": ("assistant", "agent"),
    "rows": ("database rows", "records"),
    "database rows": ("rows",),
    "details": ("facts", "information"),
    "reply": ("answer", "response"),
    "place": ("venue",),
    "booking": ("reservation",),
}

VOCABULARY = InstructionVocabulary(
    phrases=STYLE_PHRASES, seed_phrases=SEED_PHRASES, synonyms=SYNONYMS
)

TEMPLATES = (
    "<the place's name>: <the details asked for, copied from the rows>.",
    "<one sentence answering the question>. <one short question, if you need to know more>",
    "Sorry, <what does not match>. <a suggestion of what to change>",
)

EDITS: dict[str, tuple[FeedbackEdit, ...]] = {
    "success": (
        FeedbackEdit("system", "Help the customer until they have everything they asked for."),
    ),
    "inform": (FeedbackEdit("system", "Offer only places from the rows shown, by name."),),
    "requests": (
        FeedbackEdit("system", "Give every detail the customer asks for, copied from the rows."),
    ),
    "grounded": (
        FeedbackEdit(
            "system", "Never invent a phone number, postcode or reference: copy them from the rows."
        ),
    ),
    "efficiency": (FeedbackEdit("system", "Answer in as few replies as possible."),),
    "patience": (FeedbackEdit("system", "Answer the customer's question right away."),),
    "mood": (FeedbackEdit("system", "Be polite and acknowledge what the customer said."),),
    "brevity": (FeedbackEdit("system", "Keep each reply to one or two sentences."),),
}
