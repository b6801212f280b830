"""Extra initial policies derived from the hand-written seeds (SPEC inner loop, point 1:
"derived from hand-written ones by variation, e.g. adding 'rigorous', 'concise', 'group by
department'").

Each variation adds one or two of the seed style phrases to a seed and sometimes swaps a
synonym; all are distinct from the seeds and from each other, with lineage "seed_variation".
"""

from __future__ import annotations

import random

from evotrainer.operators.base import OperatorContext, make_child
from evotrainer.operators.keywords import insert_phrase, insertable
from evotrainer.operators.synonyms import SynonymOperator
from evotrainer.operators.vocabulary import GENERAL, InstructionVocabulary
from evotrainer.policy.genome import PolicyGenome

OPERATOR_NAME = "seed_variation"


def seed_variations(
    seeds: list[PolicyGenome],
    n: int,
    rng: random.Random,
    max_chars: int = 1500,
    vocab: InstructionVocabulary = GENERAL,
) -> list[PolicyGenome]:
    """``n`` distinct policies varied from ``seeds`` (round robin), named "<seed>.<k>", with
    the task's seed phrases (``vocab.seed_phrases``) and synonyms.

    Returns fewer only when the seeds admit no more distinct variations (then all there are)."""
    if n <= 0:
        return []
    if not seeds:
        raise ValueError("seed_variations needs at least one seed policy")
    taken = {s.id for s in seeds}
    out: list[PolicyGenome] = []
    counts: dict[str, int] = {}
    synonym = SynonymOperator(max_edits=1)
    ctx = OperatorContext(rng=rng, generation=0, max_chars=max_chars, vocabulary=vocab)
    attempts = 0
    while len(out) < n and attempts < 30 * n + 30:
        seed = seeds[attempts % len(seeds)]
        attempts += 1
        text, edits = seed.system, []
        for _ in range(1 if rng.random() < 0.7 else 2):
            options = insertable(text, vocab.seed_phrases, vocab)
            if not options:
                break
            phrase = rng.choice(options)
            text, _ = insert_phrase(text, phrase, 1.0)
            edits.append(f"+{phrase!r}")
        if rng.random() < 0.3 or not edits:
            text, subs = synonym.rewrite(text, ctx)
            edits += [f"{a!r}->{b!r}" for a, b in subs]
        if not edits:
            continue
        child = make_child(
            [seed],
            {**seed.components, "system": text},
            0,
            OPERATOR_NAME,
            ", ".join(edits),
            max_chars,
        )
        if child is None or child.id in taken:
            continue
        taken.add(child.id)
        k = counts[seed.id] = counts.get(seed.id, 0) + 1
        out.append(child.relabel(f"{seed.name or seed.id}.{k}"))
    return out
