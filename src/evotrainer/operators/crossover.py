"""Sentence/paragraph crossover of two parents' system instructions.

Paragraph level when both parents have several paragraphs, sentence level otherwise. Two
schemes: one-point (head of one parent + tail of the other) and interleaving (sentences taken in
turn, each kept with some probability). Repeated or near-identical sentences are dropped, and
the child must keep at least one sentence of each parent. The other components (examples,
template) are inherited whole from one parent or the other.
"""

from __future__ import annotations

import random
import re

from evotrainer.operators.base import BaseOperator, OperatorContext
from evotrainer.operators.synonym_table import canonical_words, same_meaning
from evotrainer.operators.text import DEPENDENT_STARTS, Doc, first_word, near_duplicate, normalise
from evotrainer.operators.vocabulary import GENERAL, InstructionVocabulary
from evotrainer.policy.genome import PolicyGenome


def one_point(a: list[str], b: list[str], rng: random.Random) -> list[str]:
    """a[:i] + b[j:] with at least one unit from each."""
    i = rng.randint(1, len(a))
    j = rng.randint(0, len(b) - 1)
    return a[:i] + b[j:]


def interleave(a: list[str], b: list[str], rng: random.Random, keep: float = 0.7) -> list[str]:
    """Units of a and b in turn (a0, b0, a1, b1, ...), each kept with probability ``keep``."""
    out: list[str] = []
    for k in range(max(len(a), len(b))):
        for side in (a, b):
            if k < len(side) and rng.random() < keep:
                out.append(side[k])
    return out


_FILLER = frozenset(
    {"be", "and", "or", "to", "of", "do", "is", "are", "that", "as", "in", "it", "use", "always"}
)
CONTAINED = 0.85


def _contained(a: str, b: str, vocab: InstructionVocabulary = GENERAL) -> bool:
    """Nearly all of a's words (synonyms folded) occur in b: a adds nothing to b."""
    table = vocab.table
    wa = canonical_words(a, drop=_FILLER, table=table)
    wb = canonical_words(b, drop=_FILLER, table=table)
    return bool(wa) and len(wa & wb) / len(wa) >= CONTAINED


def dedupe(units: list[str], vocab: InstructionVocabulary = GENERAL) -> list[str]:
    """Drop units that repeat an earlier one (up to case, punctuation and synonyms) or that say
    nothing a kept unit does not say already; a unit that covers a kept one replaces it."""
    kept: list[str] = []
    for u in units:
        if any(same_meaning(u, k, table=vocab.table) or _contained(u, k, vocab) for k in kept):
            continue
        covered = [i for i, k in enumerate(kept) if _contained(k, u, vocab)]
        if covered:
            kept[covered[0]] = u
            kept = [k for i, k in enumerate(kept) if i not in covered[1:]]
        else:
            kept.append(u)
    return kept


def drop_conflicts(units: list[str], vocab: InstructionVocabulary = GENERAL) -> list[str]:
    """Keep only the first style phrase of each topic ("Be concise." vs "Be thorough and
    detailed.": the child must not say both)."""
    seen: set[str] = set()
    out = []
    for u in units:
        topic = vocab.phrases.get(vocab.phrase_keys.get(normalise(u), ""))
        if topic is not None and topic in seen:
            continue
        if topic is not None:
            seen.add(topic)
        out.append(u)
    return out


def _has_both(child: list[str], a: list[str], b: list[str]) -> bool:
    """The child is not made of one parent's units alone (so it takes something from each)."""
    only_a = all(any(near_duplicate(c, x) for x in a) for c in child)
    only_b = all(any(near_duplicate(c, x) for x in b) for c in child)
    return bool(child) and not only_a and not only_b


_ROLE = re.compile(r"^(?:you are|you're|as an? |act as)", re.I)


def _fix_start(units: list[str]) -> list[str]:
    """Put a role sentence ("You are ...") first; move leaning sentences ("Then ...") off the
    front."""
    roles = [u for u in units if _ROLE.match(u)]
    if roles:
        units = roles[:1] + [u for u in units if u is not roles[0]]
    for k, u in enumerate(units):
        if first_word(u) not in DEPENDENT_STARTS:
            return [units[k]] + units[:k] + units[k + 1 :]
    return units


def inherit_components(pa: PolicyGenome, pb: PolicyGenome, rng: random.Random) -> dict[str, str]:
    """Each non-system component from a random parent (absent if that parent lacks it)."""
    out: dict[str, str] = {}
    for key in sorted((set(pa.components) | set(pb.components)) - {"system"}):
        donor = pa if rng.random() < 0.5 else pb
        if key in donor.components:
            out[key] = donor.components[key]
    return out


class SentenceCrossover(BaseOperator):
    """Combine the sentences (or paragraphs) of two parents into one instruction."""

    name = "sentence_crossover"
    arity = 2
    uses_llm = False
    targets = ("system",)

    def __init__(self, tries: int = 6) -> None:
        self.tries = tries

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        pa, pb = parents
        rng = ctx.rng
        if rng.random() < 0.5:  # no positional bias between the two parents
            pa, pb = pb, pa
        da, db = Doc.parse(pa.system), Doc.parse(pb.system)
        paragraph_level = len(da.paragraphs) >= 2 and len(db.paragraphs) >= 2
        others = inherit_components(pa, pb, rng)
        for _ in range(self.tries):
            scheme = "one-point" if rng.random() < 0.5 else "interleave"
            cross = one_point if scheme == "one-point" else interleave
            if paragraph_level:
                a = [
                    ("\n" if m else " ").join(p)
                    for p, m in zip(da.paragraphs, da.multiline, strict=True)
                ]
                b = [
                    ("\n" if m else " ").join(p)
                    for p, m in zip(db.paragraphs, db.multiline, strict=True)
                ]
                units = dedupe(cross(a, b, rng), ctx.vocabulary)
                if not _has_both(units, a, b):
                    continue
                text = "\n\n".join(_fix_start(units))
                level = "paragraphs"
            else:
                a, b = da.sentences(), db.sentences()
                units = drop_conflicts(dedupe(cross(a, b, rng), ctx.vocabulary), ctx.vocabulary)
                if not _has_both(units, a, b):
                    continue
                text = " ".join(_fix_start(units))
                level = "sentences"
            note = f"{scheme} over {level}: {len(units)} from {len(a)}+{len(b)}"
            child = self.child(parents, {**others, "system": text}, ctx, note)
            if child is not None:
                return child
        return None
