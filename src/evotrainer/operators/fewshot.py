"""Few-shot examples bootstrapped from data (DSPy's BootstrapFewShot is the model): add, replace,
shorten or drop the policy's example. The candidates (``OperatorContext.examples``) are the
human references of real training instances written as outputs and the best training outputs
seen so far, already cut to the token budget by the driver; never a validation instance.

One example at most: a small model's context is precious, and the constitution rejects a policy
whose answers copy its example instead of reading the input (rule ``copies_example``).
"""

from __future__ import annotations

from evotrainer.operators.base import BaseOperator, OperatorContext, quote
from evotrainer.operators.repair import shorten
from evotrainer.policy.genome import PolicyGenome

CHARS_PER_TOKEN = 4.0  # rough estimate, for cutting examples to a token budget


def cut_to_tokens(text: str, max_tokens: int) -> str | None:
    """``text`` cut at a line or sentence boundary to about ``max_tokens`` tokens."""
    return shorten(text.strip(), int(max_tokens * CHARS_PER_TOKEN), prose=False)


class FewShotOperator(BaseOperator):
    name = "fewshot"
    arity = 1

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        comps = dict(parent.components)
        current = comps.get("examples", "")
        if current:
            action = ctx.rng.choices(["replace", "drop", "shorten"], [0.6, 0.25, 0.15])[0]
            if action == "drop":
                comps.pop("examples")
                return self.child(parents, comps, ctx, "example: drop")
            if action == "shorten":
                short = shorten(current, max(40, len(current) // 2), prose=False)
                if short and short != current:
                    comps["examples"] = short
                    return self.child(parents, comps, ctx, "example: shorten by half")
        pool = [e for e in ctx.examples if e.strip() and e.strip() != current.strip()]
        if not pool:
            return None
        example = ctx.rng.choice(pool)
        comps["examples"] = example
        verb = "replace with" if current else "add"
        return self.child(parents, comps, ctx, f"example: {verb} {quote(example, 40)}")
