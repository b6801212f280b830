"""Keyword edits: insert or remove a style phrase at a sentence boundary.

The phrases come from the task (``InstructionVocabulary.phrases``, operators/vocabulary.py; the
meeting task's are in tasks/meetings/style.py). They are whole sentences, so an insertion stays
grammatical. Phrases carry a topic; a phrase is not inserted when the text already has one on the same topic (no "Be
concise." next to "Be thorough and detailed."). Removal drops a known phrase, or a random
sentence when the text has at least three.
"""

from __future__ import annotations

from evotrainer.operators.base import BaseOperator, OperatorContext, quote
from evotrainer.operators.synonym_table import canonical_words
from evotrainer.operators.text import DEPENDENT_STARTS, Doc, first_word, near_duplicate, normalise
from evotrainer.operators.vocabulary import GENERAL, InstructionVocabulary
from evotrainer.policy.genome import PolicyGenome


def present_phrases(text: str, vocab: InstructionVocabulary = GENERAL) -> list[str]:
    """Known phrases found (as sentences, up to case and punctuation) in ``text``."""
    keys = vocab.phrase_keys
    return [keys[normalise(s)] for s in Doc.parse(text).sentences() if normalise(s) in keys]


def covered_topics(text: str, vocab: InstructionVocabulary = GENERAL) -> set[str]:
    """Topics of the known phrases whose content words all occur in ``text`` (also when a
    phrase was reworded by synonyms or joined into a longer sentence)."""
    words = canonical_words(text, table=vocab.table)
    return {
        topic
        for phrase, topic in vocab.phrases.items()
        if (cw := content_words(phrase, vocab)) and cw <= words
    }


_FUNCTION_WORDS = frozenset(
    "a an the be use each every of and or to with in at for only that were was do not as by "  # noqa: SIM905
    "write give start list keep add include make it its is are from when they them their".split()
)


def content_words(phrase: str, vocab: InstructionVocabulary = GENERAL) -> set[str]:
    """The phrase's canonical words that carry its meaning (not "be", "use", "each", ...)."""
    return canonical_words(phrase, drop=_FUNCTION_WORDS, table=vocab.table)


def insertable(
    text: str, phrases: tuple[str, ...] | None = None, vocab: InstructionVocabulary = GENERAL
) -> list[str]:
    """Phrases of ``vocab`` (or ``phrases`` of it) whose topic ``text`` does not cover yet and
    whose content words it does not already hold ("Use bullet points." adds nothing to "... as
    bullet points ...")."""
    doc_sents = Doc.parse(text).sentences()
    present = present_phrases(text, vocab)
    topics = covered_topics(text, vocab) | {vocab.phrases[p] for p in present}
    pool = phrases if phrases is not None else tuple(vocab.phrases)
    return [
        p
        for p in pool
        if p not in present
        and vocab.phrases.get(p) not in topics
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
        vocab = ctx.vocabulary
        can_remove = bool(present_phrases(text, vocab)) or len(Doc.parse(text).sentences()) >= 3
        options = insertable(text, self.phrases, vocab)
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
        known = present_phrases(text, ctx.vocabulary)
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
