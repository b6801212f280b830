"""Keyword edits: insert or remove a style phrase at a sentence boundary.

The curated phrases are whole sentences, so an insertion stays grammatical. Phrases carry a
topic; a phrase is not inserted when the text already has one on the same topic (no "Be
concise." next to "Be thorough and detailed."). Removal drops a known phrase, or a random
sentence when the text has at least three.
"""

from __future__ import annotations

from evotrainer.operators.base import BaseOperator, OperatorContext, quote
from evotrainer.operators.synonyms import canonical_words
from evotrainer.operators.text import DEPENDENT_STARTS, Doc, first_word, near_duplicate, normalise
from evotrainer.policy.genome import PolicyGenome

# phrase -> topic. Phrases of the same topic exclude each other.
STYLE_PHRASES: dict[str, str] = {
    "Be rigorous.": "rigour",
    "Be accurate and rigorous.": "rigour",
    "Be concise.": "length",
    "Keep the minutes short and to the point.": "length",
    "Be thorough and detailed.": "length",
    "Group items by department.": "grouping",
    "Group the action items by department.": "grouping",
    "Group the notes by topic.": "grouping",
    "Use bullet points.": "bullets",
    "Write every point as a bullet point.": "bullets",
    "Give each action item an owner.": "owner",
    "Write each action item as 'Owner: task'.": "owner",
    "Start with a one-line title.": "title",
    "Begin with a short title for the meeting.": "title",
    "List at most 5 action items.": "count",
    "List between 2 and 5 action items.": "count",
    "Only include decisions that were actually made.": "decisions",
    "State every decision that was made.": "decisions",
    "Do not invent names, dates or facts.": "faithful",
    "Use only information from the transcript.": "faithful",
    "Ignore small talk and off-topic chatter.": "noise",
    "Skip greetings and small talk.": "noise",
    "Include the date of the meeting.": "date",
    "Mention deadlines when they are given.": "deadline",
    "Add a short section for each topic.": "sections",
    "Use clear headings for topics, decisions and action items.": "sections",
    "Write in plain, neutral language.": "tone",
    "Use the exact names of the participants.": "names",
    "Check that every action item was really agreed in the meeting.": "verify",
    "Keep the order in which topics were discussed.": "order",
}

# The SPEC's examples of seed variation keywords ("rigorous", "concise", "group by department").
SEED_PHRASES: tuple[str, ...] = (
    "Be rigorous.",
    "Be concise.",
    "Group items by department.",
    "Use bullet points.",
    "Give each action item an owner.",
    "Start with a one-line title.",
    "List at most 5 action items.",
    "Only include decisions that were actually made.",
    "Do not invent names, dates or facts.",
    "Ignore small talk and off-topic chatter.",
)

_KEYS = {normalise(p): p for p in STYLE_PHRASES}


def present_phrases(text: str) -> list[str]:
    """Known phrases found (as sentences, up to case and punctuation) in ``text``."""
    return [_KEYS[normalise(s)] for s in Doc.parse(text).sentences() if normalise(s) in _KEYS]


def covered_topics(text: str) -> set[str]:
    """Topics of the known phrases whose content words all occur in ``text`` (also when a
    phrase was reworded by synonyms or joined into a longer sentence)."""
    words = canonical_words(text)
    return {
        topic
        for phrase, topic in STYLE_PHRASES.items()
        if (cw := content_words(phrase)) and cw <= words
    }


_FUNCTION_WORDS = frozenset(
    "a an the be use each every of and or to with in at for only that were was do not as by "  # noqa: SIM905
    "write give start list keep add include make it its is are from when they them their".split()
)


def content_words(phrase: str) -> set[str]:
    """The phrase's canonical words that carry its meaning (not "be", "use", "each", ...)."""
    return canonical_words(phrase, drop=_FUNCTION_WORDS)


def insertable(text: str, phrases: tuple[str, ...] | None = None) -> list[str]:
    """Phrases whose topic ``text`` does not cover yet and whose content words it does not
    already hold ("Use bullet points." adds nothing to "... as bullet points ...")."""
    doc_sents = Doc.parse(text).sentences()
    topics = covered_topics(text) | {STYLE_PHRASES[p] for p in present_phrases(text)}
    pool = phrases if phrases is not None else tuple(STYLE_PHRASES)
    return [
        p
        for p in pool
        if p not in present_phrases(text)
        and STYLE_PHRASES.get(p) not in topics
        and not any(near_duplicate(p, s) for s in doc_sents)
    ]


def insert_phrase(text: str, phrase: str, position: float) -> tuple[str, int]:
    """Insert ``phrase`` as a sentence at a relative ``position`` (0 = front, 1 = end) of the
    last prose paragraph (a new paragraph when the text has none). Returns text and index."""
    doc = Doc.parse(text)
    prose = doc.prose_indices()
    if not prose:
        doc.paragraphs.append([phrase])
        doc.multiline.append(False)
        return doc.render(), len(doc.sentences()) - 1
    p = prose[-1] if position > 0 else prose[0]
    units = doc.paragraphs[p]
    i = round(position * len(units))
    # Keep a leaning sentence ("Then ...") behind what it leans on: never insert in front of it.
    while 0 < i < len(units) and first_word(units[i]) in DEPENDENT_STARTS:
        i += 1
    units.insert(i, phrase)
    return doc.render(), i


class KeywordOperator(BaseOperator):
    """Insert a curated style phrase, or remove one (or, in longer texts, any sentence)."""

    name = "keyword"
    arity = 1
    uses_llm = False
    targets = ("system",)

    def __init__(self, p_remove: float = 0.3, phrases: tuple[str, ...] | None = None) -> None:
        self.p_remove = p_remove
        self.phrases = phrases

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        text = parent.components["system"]
        rng = ctx.rng
        can_remove = bool(present_phrases(text)) or len(Doc.parse(text).sentences()) >= 3
        options = insertable(text, self.phrases)
        remove = can_remove and (not options or rng.random() < self.p_remove)
        if remove:
            new, note = self.remove(text, ctx)
        elif options:
            phrase = rng.choice(options)
            # Style phrases read best after the main instruction: mostly at the end.
            position = 1.0 if rng.random() < 0.6 else rng.random()
            new, _ = insert_phrase(text, phrase, position)
            note = f"+{quote(phrase, 60)}"
        else:
            return None
        if new is None:
            return None
        return self.child(parents, {**parent.components, "system": new}, ctx, note)

    def remove(self, text: str, ctx: OperatorContext) -> tuple[str | None, str]:
        doc = Doc.parse(text)
        known = present_phrases(text)
        sents = doc.sentences()
        if known:
            target = ctx.rng.choice(known)
            key = normalise(target)
        elif len(sents) >= 3:
            target = ctx.rng.choice(sents)
            key = normalise(target)
        else:
            return None, ""
        for p, units in enumerate(doc.paragraphs):
            for i, u in enumerate(units):
                if normalise(u) == key:
                    del units[i]
                    if not units:
                        del doc.paragraphs[p]
                        del doc.multiline[p]
                    new = doc.render()
                    if not new.strip() or not _starts_ok(new):
                        return None, ""
                    return new, f"-{quote(u, 60)}"
        return None, ""


def _starts_ok(text: str) -> bool:
    sents = Doc.parse(text).sentences()
    return bool(sents) and first_word(sents[0]) not in DEPENDENT_STARTS
