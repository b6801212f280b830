"""Structural operators on the output template: add, replace or drop a template, add or remove
one of its sections (``template``), and cross two parents' templates section by section
(``template_crossover``). A small model reacts to the structure of its instructions far more
than to their wording, so these reach what word-level edits cannot.

Templates come from the task's library (``Task.output_templates``) or, with an LLM, are written
by it from the policy's instruction. A template is a list of sections; a section starts at a
heading line ("Summary:", "## Decisions", "Action items: ...") and runs to the next one.
"""

from __future__ import annotations

import random
import re

from evotrainer.errors import LLMError
from evotrainer.operators.base import BaseOperator, OperatorContext, quote
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import Message

_HEADING = re.compile(r"^\s*(?:#{1,6}\s+\S.*|[A-Z][A-Za-z /&'()-]{0,40}:.*)$")
WRITE_TEMPLATE = (
    "Write an output template for an assistant that follows this instruction:\n{text}\n\n"
    "Give one heading line per section (for example 'Summary:') followed by a placeholder in "
    "<angle brackets>. Reply with ONLY the template."
)


def sections(template: str) -> list[str]:
    """The template's sections: each heading line with the lines up to the next heading."""
    out: list[list[str]] = []
    for line in template.strip().splitlines():
        if not line.strip():
            continue
        if _HEADING.match(line) or not out:
            out.append([line.rstrip()])
        else:
            out[-1].append(line.rstrip())
    return ["\n".join(s) for s in out]


def heading(section: str) -> str:
    """A section's name, normalised ("## Action items" and "Action items:" are the same)."""
    first = section.split("\n", 1)[0]
    name = first.split(":", 1)[0] if ":" in first else first
    return re.sub(r"[^a-z ]", "", name.lower()).strip()


def is_template(text: str) -> bool:
    """At least two sections, each with a heading: usable as an output template."""
    secs = sections(text)
    return len(secs) >= 2 and all(_HEADING.match(s.split("\n", 1)[0]) for s in secs)


def join(secs: list[str]) -> str:
    return "\n".join(secs)


class TemplateOperator(BaseOperator):
    """Add, replace or drop the output template, or add/remove one section."""

    name = "template"
    arity = 1

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        current = parent.components.get("template", "")
        comps = dict(parent.components)
        if not current:
            new, note = self._new(parent, ctx)
            if new is None:
                return None
            comps["template"] = new
            return self.child(parents, comps, ctx, f"template: add {note}")
        secs = sections(current)
        action = ctx.rng.choices(
            ["replace", "drop", "add_section", "remove_section"], [0.35, 0.15, 0.25, 0.25]
        )[0]
        if action == "drop":
            comps.pop("template")
            return self.child(parents, comps, ctx, "template: drop")
        if action == "remove_section" and len(secs) >= 2:
            gone = secs.pop(ctx.rng.randrange(len(secs)))
            comps["template"] = join(secs)
            return self.child(parents, comps, ctx, f"template: remove section {quote(gone, 30)}")
        if action == "add_section":
            have = {heading(s) for s in secs}
            pool = [s for t in ctx.templates for s in sections(t) if heading(s) not in have]
            if pool:
                extra = ctx.rng.choice(pool)
                secs.insert(ctx.rng.randint(0, len(secs)), extra)
                comps["template"] = join(secs)
                return self.child(parents, comps, ctx, f"template: add section {quote(extra, 30)}")
        new, note = self._new(parent, ctx, exclude=current)
        if new is None:
            return None
        comps["template"] = new
        return self.child(parents, comps, ctx, f"template: replace with {note}")

    def _new(
        self, parent: PolicyGenome, ctx: OperatorContext, exclude: str = ""
    ) -> tuple[str | None, str]:
        """A template from the library, or (sometimes, with an LLM) one the LLM writes."""
        if ctx.llm is not None and (not ctx.templates or ctx.rng.random() < 0.2):
            written = self._written(parent.system, ctx)
            if written is not None:
                return written, "an LLM-written one"
        choices = [t for t in ctx.templates if t.strip() != exclude.strip()]
        if not choices:
            return None, ""
        t = ctx.rng.choice(choices)
        return t, f"library template {quote(t, 30)}"

    @staticmethod
    def _written(instruction: str, ctx: OperatorContext) -> str | None:
        assert ctx.llm is not None
        messages = [Message("user", WRITE_TEMPLATE.format(text=instruction))]
        try:
            out = ctx.llm.complete(messages, ctx.call_params())
        except LLMError:
            return None
        text = out.text.strip() if isinstance(out.text, str) else ""
        return text if is_template(text) else None


class TemplateCrossover(BaseOperator):
    """A child with the first parent's instruction and a template crossed section by section:
    each of its sections comes from either parent (same heading: either version), and a section
    only the second parent has may join. With one template between them, the child inherits it."""

    name = "template_crossover"
    arity = 2

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        a, b = parents
        ta, tb = a.components.get("template", ""), b.components.get("template", "")
        if not ta and not tb or ta.strip() == tb.strip():
            return None
        comps = dict(a.components)
        if not ta or not tb:
            comps["template"] = ta or tb
            return self.child(parents, comps, ctx, "template: inherited from the other parent")
        comps["template"] = cross_sections(sections(ta), sections(tb), ctx.rng)
        return self.child(parents, comps, ctx, "template: sections of both parents")


def cross_sections(sa: list[str], sb: list[str], rng: random.Random) -> str:
    by_b = {heading(s): s for s in sb}
    out = [by_b[heading(s)] if heading(s) in by_b and rng.random() < 0.5 else s for s in sa]
    have = {heading(s) for s in out}
    for s in sb:
        if heading(s) not in have and rng.random() < 0.5:
            out.insert(rng.randint(0, len(out)), s)
    return join(out)
