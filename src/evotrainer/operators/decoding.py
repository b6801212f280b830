"""The ``decoding`` operator: "adjusting parameters" (SPEC, mutation). The child keeps its
parent's text and weights and changes one decoding or post-processing gene by one step:

- ``repeat_penalty``: +-0.05 within [1.0, 1.5];
- ``frequency_penalty`` / ``presence_penalty``: +-0.1 within [0, 1.5];
- ``max_tokens``: x1.25 or x0.8 of the current cap (``model.max_tokens`` when the policy has
  none), within [64, 4 x model.max_tokens];
- ``loop_cut``: switch the cut on or off, or, when it is on, switch one of its steps
  (``collapse_runs``, ``drop_repeats``, ``drop_blanks``), move
  ``seen_share`` by 0.1 within [0.5, 1.0], or set ``cut_ngram`` to another of 0, 6, 8, 12.

Which genes it may change is ``inner.tunable_genes`` (e.g. leave ``repeat_penalty`` out for a
server that rejects it). It needs no model, so it also runs where no LLM operator can.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from evotrainer.operators.base import BaseOperator, OperatorContext
from evotrainer.policy.decoding import BOUNDS, DecodingGenes
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.postprocess import SWITCHES, LoopCut
from evotrainer.types import Lineage

TUNABLE_GENES = (
    "repeat_penalty",
    "frequency_penalty",
    "presence_penalty",
    "max_tokens",
    "loop_cut",
)
_STEP = {"repeat_penalty": 0.05, "frequency_penalty": 0.1, "presence_penalty": 0.1}
CUT_NGRAMS = (0, 6, 8, 12)


class DecodingOperator(BaseOperator):
    name = "decoding"
    arity = 1
    uses_llm = False

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        genes = [g for g in ctx.tunable_genes if g in TUNABLE_GENES]
        if not genes:
            return None
        gene = ctx.rng.choice(sorted(genes))
        if gene == "loop_cut":
            cut, note = step_loop_cut(parent.postprocess, ctx)
            decoding = parent.decoding
        else:
            decoding, note = step_decoding(parent.decoding, gene, ctx)
            cut = parent.postprocess
        lineage = Lineage(
            parents=(parent.id,), operator=self.name, generation=ctx.generation, note=note
        )
        child = parent.with_genes(lineage, decoding=decoding, postprocess=cut)
        return None if child.id == parent.id else child


def step_decoding(
    genes: DecodingGenes, gene: str, ctx: OperatorContext
) -> tuple[DecodingGenes, str]:
    """``genes`` with ``gene`` moved one step up or down (within its bounds)."""
    up = ctx.rng.random() < 0.5
    if gene == "max_tokens":
        now = genes.max_tokens or ctx.max_tokens
        cap = max(64, 4 * ctx.max_tokens)
        tokens = min(cap, max(64, int(round(now * (1.25 if up else 0.8)))))
        return replace(genes, max_tokens=tokens), f"max_tokens {now} -> {tokens}"
    lo, hi = BOUNDS[gene]
    was = float(getattr(genes, gene))
    new = round(min(hi, max(lo, was + (_STEP[gene] if up else -_STEP[gene]))), 4)
    moved: dict[str, Any] = {gene: new}
    return replace(genes, **moved), f"{gene} {was:g} -> {new:g}"


def step_loop_cut(cut: LoopCut, ctx: OperatorContext) -> tuple[LoopCut, str]:
    """``cut`` switched on or off, or one of its settings changed."""
    moves: Sequence[str] = ("enabled",)
    if cut.enabled:
        # the draw's order is part of a seeded run's course: keep it
        moves = (
            "enabled",
            "collapse_runs",
            "drop_repeats",
            "seen_share",
            "cut_ngram",
            "drop_blanks",
        )
    move = ctx.rng.choice(list(moves))
    if move in SWITCHES:
        value = not getattr(cut, move)
        return replace(cut, **{move: value}), f"loop cut {move} -> {value}"
    if move == "seen_share":
        up = ctx.rng.random() < 0.5
        new = round(min(1.0, max(0.5, cut.seen_share + (0.1 if up else -0.1))), 4)
        return replace(cut, seen_share=new), f"loop cut seen_share {cut.seen_share:g} -> {new:g}"
    new_n = ctx.rng.choice([n for n in CUT_NGRAMS if n != cut.cut_ngram])
    return replace(cut, cut_ngram=new_n), f"loop cut cut_ngram {cut.cut_ngram} -> {new_n}"
