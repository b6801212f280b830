"""LLM-driven operators: paraphrase, merge (crossover) and reflective mutation (GEPA-style).

Prompts are short (well under 250 tokens besides the policy text): the default model is a 135M
model on two CPU cores. Every answer goes through repair; an LLMError, an empty, echoed,
truncated-to-nothing or unreadable answer makes the operator return None. Each call's sampling
seed is drawn from ``ctx.rng``.
"""

from __future__ import annotations

import re

from evotrainer.errors import LLMError
from evotrainer.llm.base import Completion
from evotrainer.operators.base import USER_COMPONENTS, BaseOperator, OperatorContext
from evotrainer.operators.crossover import inherit_components
from evotrainer.policy.genome import PolicyGenome, component_label
from evotrainer.types import Message

SYSTEM = "You improve instructions for an AI assistant. Reply with the new text only."

PARAPHRASE = (
    "Rewrite the {what} below in other words. Keep every requirement and its meaning. "
    "Reply with ONLY the new {what}.\n\n{What}:\n{text}\n\nNew {what}:"
)
MERGE = (
    "Merge the two instructions below into one instruction that keeps the best parts of both "
    "and does not repeat itself. Reply with ONLY the merged instruction.\n\n"
    "Instruction 1:\n{a}\n\nInstruction 2:\n{b}\n\nMerged instruction:"
)
REFLECT = (
    "An assistant followed the instruction below, and its answers had these problems:\n"
    "{feedback}\n\nRewrite the instruction so that the assistant avoids these problems. Keep "
    "what works. Reply with ONLY the new instruction.\n\nInstruction:\n{text}\n\n"
    "New instruction:"
)

REFLECT_PART = (
    "An assistant followed the instructions below, and its answers had these problems:\n"
    "{feedback}\n\nInstructions:\n{policy}\n\nRewrite only their {what} part so that the "
    "assistant avoids these problems. Keep what works. Reply with ONLY the new {what}.\n\n"
    "{What}:\n{text}\n\nNew {what}:"
)

_WHAT = {"system": "instruction", "examples": "example", "template": "output template"}


def what(component: str) -> str:
    """How a prompt names a component: instruction, example, output template, or a user
    component's own name ("glossary", "style guide")."""
    return _WHAT.get(component) or component_label(component).lower()


# Lines of our own prompts: an answer containing one echoed the prompt instead of answering.
_ECHO_MARKERS = (
    "reply with only",
    "instruction 1:",
    "instruction 2:",
    "its answers had these problems",
    "keep every requirement",
    "merge the two instructions",
)
MAX_FEEDBACK_CHARS = 600
MIN_LENGTH_RATIO = 0.3  # an answer much shorter than its parent lost content


def clip_feedback(feedback: str, limit: int = MAX_FEEDBACK_CHARS) -> str:
    """Feedback shortened to ``limit`` characters, at a line or word boundary."""
    feedback = feedback.strip()
    if len(feedback) <= limit:
        return feedback
    cut = feedback[:limit]
    at = cut.rfind("\n")
    if at < limit // 2:
        at = cut.rfind(" ")
    return cut[: at if at > 0 else limit].rstrip() + " ..."


def drop_cut_tail(text: str) -> str:
    """For an answer cut by max_tokens: drop the unfinished last sentence when one precedes it."""
    text = text.rstrip()
    if re.search(r"[.!?][\"'”’)\]]*$", text):
        return text
    ends = list(re.finditer(r"[.!?][\"'”’)\]]*(?=\s)", text))
    if ends and ends[-1].end() >= 25:
        return text[: ends[-1].end()]
    return text


class LLMOperator(BaseOperator):
    """Shared call path: one chat request, errors and junk become None."""

    uses_llm = True

    def ask(self, prompt: str, ctx: OperatorContext) -> str | None:
        assert ctx.llm is not None
        messages = [Message("system", SYSTEM), Message("user", prompt)]
        try:
            out: Completion = ctx.llm.complete(messages, ctx.call_params())
        except LLMError:
            return None
        text = out.text if isinstance(out.text, str) else ""
        if out.finish_reason == "length":
            text = drop_cut_tail(text)
        low = text.lower()
        if not text.strip() or any(m in low for m in _ECHO_MARKERS):
            return None
        return text

    def finish(
        self,
        parents: list[PolicyGenome],
        components: dict[str, str],
        component: str,
        answer: str | None,
        reference: str,
        ctx: OperatorContext,
        note: str,
    ) -> PolicyGenome | None:
        if answer is None:
            return None
        child = self.child(parents, {**components, component: answer}, ctx, note)
        if child is None:
            return None
        if len(child.components[component]) < MIN_LENGTH_RATIO * len(reference):
            return None
        return child


class LLMParaphrase(LLMOperator):
    """Ask the LLM to reword a component, keeping its meaning."""

    name = "llm_paraphrase"
    arity = 1
    targets = ("system", "examples", "template", USER_COMPONENTS)
    other_component_p = 0.15

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        component = self.pick_component(parent, ctx)
        name = what(component)
        text = parent.components[component]
        prompt = PARAPHRASE.format(what=name, What=name.capitalize(), text=text)
        answer = self.ask(prompt, ctx)
        return self.finish(
            parents,
            dict(parent.components),
            component,
            answer,
            text,
            ctx,
            f"{component}: paraphrase",
        )


class LLMMerge(LLMOperator):
    """Ask the LLM to merge two parents' instructions (crossover)."""

    name = "llm_merge"
    arity = 2

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        pa, pb = parents
        if pa.system.strip() == pb.system.strip():
            return None
        if ctx.rng.random() < 0.5:  # no positional bias between the two parents
            pa, pb = pb, pa
        others = inherit_components(pa, pb, ctx.rng)
        answer = self.ask(MERGE.format(a=pa.system, b=pb.system), ctx)
        reference = max(pa.system, pb.system, key=len)
        return self.finish(parents, others, "system", answer, reference, ctx, "merge of system")


class ReflectiveMutation(LLMOperator):
    """Rewrite the instruction from the feedback on its worst examples (GEPA's reflection).
    With ``component_choice: round_robin`` it rewrites the component whose turn it is (the
    whole policy shown as context), else always the instruction.

    Needs ``ctx.feedback[parent.id]``; without it, returns None without calling the LLM."""

    name = "reflective"
    arity = 1
    targets = ("system", "examples", "template", USER_COMPONENTS)
    other_component_p = 0.0  # weighted choice: the instruction only

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        feedback = (ctx.feedback.get(parent.id) or "").strip()
        if not feedback:
            return None
        feedback = clip_feedback(feedback)
        component = self.pick_component(parent, ctx)
        text = parent.components[component]
        if component == "system":
            prompt = REFLECT.format(feedback=feedback, text=text)
        else:
            name = what(component)
            prompt = REFLECT_PART.format(
                feedback=feedback,
                policy=parent.render(),
                what=name,
                What=name.capitalize(),
                text=text,
            )
        answer = self.ask(prompt, ctx)
        note = "reflect on: " + " ".join(feedback.split())[:120]
        if component != "system":
            note = f"{component}: {note}"
        return self.finish(parents, dict(parent.components), component, answer, text, ctx, note)
