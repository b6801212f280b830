"""Synonym substitution: replace one (sometimes two) words or phrases of a policy with a curated
synonym (the table, and the task's additions to it: synonym_table.py, vocabulary.py).

Replacements are whole words or phrases, keep the original's capitalisation, fix "a"/"an"
before them, and never touch quoted text (a quoted output format such as 'Owner: task' is a
contract, not wording). Words that are also nouns ("list", "record", "turn") are only replaced
where they stand as an imperative verb.
"""

from __future__ import annotations

from evotrainer.operators.base import BaseOperator, OperatorContext, quote
from evotrainer.operators.synonym_table import (
    candidates,
    match_case,
    substitute,
    synonym_choices,
)
from evotrainer.policy.genome import PolicyGenome

__all__ = ["SynonymOperator"]


class SynonymOperator(BaseOperator):
    """Replace one (sometimes two) words or phrases with a curated synonym."""

    name = "synonym"
    arity = 1
    uses_llm = False
    targets = ("system", "examples", "template")

    def __init__(self, max_edits: int = 2) -> None:
        self.max_edits = max_edits

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        component = self.pick_component(parent, ctx)
        text, edits = self.rewrite(parent.components[component], ctx)
        if not edits:
            return None
        note = f"{component}: " + ", ".join(f"{quote(a, 20)}->{quote(b, 20)}" for a, b in edits)
        return self.child(parents, {**parent.components, component: text}, ctx, note)

    def rewrite(self, text: str, ctx: OperatorContext) -> tuple[str, list[tuple[str, str]]]:
        edits: list[tuple[str, str]] = []
        n = (
            1
            if self.max_edits <= 1 or ctx.rng.random() < 0.7
            else ctx.rng.randint(2, self.max_edits)
        )
        for _ in range(n):
            table = ctx.vocabulary.table
            found = candidates(text, table)
            # Not a word we already replaced (would undo or stack edits).
            found = [c for c in found if all(text[c[0] : c[1]] != new for _, new in edits)]
            if not found:
                break
            start, end, key = ctx.rng.choice(found)
            options = [o for o in synonym_choices(key, text, start, table) if o != key]
            if not options:
                break
            replacement = ctx.rng.choice(options)
            original = text[start:end]
            text = substitute(text, start, end, replacement)
            edits.append((original, match_case(original, replacement)))
        return text, edits
