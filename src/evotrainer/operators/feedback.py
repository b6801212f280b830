"""Feedback-directed edits that need no capable reflector: find the weighted reward component
on which the parent loses most (weight x (1 - score) on its training batch) and apply one of
the task's edits for it (``Task.feedback_edits``), e.g. action-item recall low -> add an
"Action items:" section to the template, or a sentence to the instruction. The lineage note says
which component and score drove the edit.
"""

from __future__ import annotations

from evotrainer.operators.base import BaseOperator, FeedbackEdit, OperatorContext, quote
from evotrainer.operators.structure import heading, join, sections
from evotrainer.policy.genome import PolicyGenome


def apply_edit(components: dict[str, str], edit: FeedbackEdit) -> bool:
    """Apply ``edit`` in place; False when the policy already has it (nothing to do)."""
    if edit.target == "template":
        current = components.get("template", "")
        secs = sections(current) if current else []
        new = sections(edit.text)
        have = {heading(s) for s in secs}
        if all(heading(s) in have for s in new):
            return False
        components["template"] = join(secs + [s for s in new if heading(s) not in have])
        return True
    current = components.get(edit.target, "")
    if edit.text.lower() in current.lower():
        return False
    components[edit.target] = f"{current.rstrip()} {edit.text}".strip()
    return True


class FeedbackEditOperator(BaseOperator):
    name = "feedback_edit"
    arity = 1

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        scores = ctx.scores.get(parent.id) or {}
        deficits = sorted(
            (
                (ctx.weights.get(c, 0.0) * (1.0 - scores[c]), c)
                for c in ctx.edits
                if ctx.weights.get(c, 0.0) > 0 and c in scores
            ),
            reverse=True,
        )
        for deficit, comp in deficits:
            if deficit <= 0:
                break
            options = list(ctx.edits[comp])
            ctx.rng.shuffle(options)
            for edit in options:
                comps = dict(parent.components)
                if not apply_edit(comps, edit):
                    continue
                note = f"{comp} {scores[comp]:.2f}: +{edit.target} {quote(edit.text, 40)}"
                child = self.child(parents, comps, ctx, note)
                if child is not None:
                    return child
        return None
