"""The variation-operator plug-in point of the inner GA (SPEC inner loop, point 4).

An operator turns one parent (mutation, ``arity == 1``) or two (crossover, ``arity == 2``) into
one child. Failure is a value, not an exception: when an operator cannot make a valid child that
differs from its parents (no synonym applies, the LLM failed or answered junk, the result does
not pass repair) it returns None and the loop tries again or picks another operator. Wrong arity
is a programming error and raises ValueError.

Randomness comes only from ``OperatorContext.rng``; LLM operators derive each call's sampling
seed from it, so a run with a seeded rng and a cached LLM is reproducible.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.operators.repair import repair_child
from evotrainer.operators.vocabulary import GENERAL, InstructionVocabulary
from evotrainer.policy.genome import COMPONENT_ORDER, PolicyGenome
from evotrainer.types import Lineage


@dataclass(frozen=True)
class FeedbackEdit:
    """A rule-based edit the ``feedback_edit`` operator applies when a reward component is low
    (no capable reflector needed): add ``text`` to the policy's ``target`` component ("system":
    a sentence appended to the instruction; "template": a section appended to the output
    template, which is created when the policy has none)."""

    target: str
    text: str


USER_COMPONENTS = "*"  # in an operator's targets: every user-defined component


@dataclass
class OperatorContext:
    """What an operator may use besides its parents."""

    rng: random.Random
    """The only source of randomness."""
    generation: int
    """Generation the child is born in (goes into its lineage)."""
    llm: LLMClient | None = None
    """Needed by LLM operators; None makes them unavailable (they return None)."""
    sampling: SamplingParams = SamplingParams(temperature=0.8, max_tokens=256, seed=0)
    """Sampling of LLM operators; the seed is replaced by one drawn from ``rng`` per call."""
    feedback: Mapping[str, str] = field(default_factory=dict)
    """Policy id -> what went wrong on its worst examples (used by reflective mutation)."""
    max_chars: int = 1500
    """Longer child components are shortened at a sentence boundary, or rejected."""
    templates: Sequence[str] = ()
    """The task's library of output templates (``template`` operator)."""
    examples: Sequence[str] = ()
    """Few-shot example texts, already cut to the token budget: human references of real
    training instances and the best training outputs seen so far (``fewshot`` operator). Never
    drawn from validation instances."""
    edits: Mapping[str, Sequence[FeedbackEdit]] = field(default_factory=dict)
    """Reward component -> edits that address a low score (``feedback_edit`` operator)."""
    scores: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Policy id -> mean score of each reward component on its training batch."""
    weights: Mapping[str, float] = field(default_factory=dict)
    """The current harness's reward weights (which components count)."""
    vocabulary: InstructionVocabulary = GENERAL
    """The task's style phrases and domain synonyms (``keyword``, ``synonym``, crossover)."""
    component_choice: str = "weighted"
    """Which component of a parent an operator edits (``inner.component_choice``): weighted or
    round_robin (``BaseOperator.pick_component``)."""
    tunable_genes: Sequence[str] = (
        "repeat_penalty",
        "frequency_penalty",
        "presence_penalty",
        "max_tokens",
        "loop_cut",
    )
    """The decoding and post-processing genes the ``decoding`` operator may change
    (``inner.tunable_genes``)."""
    max_tokens: int = 320
    """The answer cap of a policy without a max_tokens gene (``model.max_tokens``)."""

    def call_params(self) -> SamplingParams:
        """Sampling params for one LLM call, with a seed drawn from ``rng``."""
        return replace(self.sampling, seed=self.rng.randrange(2**31))


@runtime_checkable
class Operator(Protocol):
    """A crossover or mutation operator. ``apply`` returns a repaired child whose lineage names
    the parents, the operator, the generation and the edit, or None; it never raises for a
    failing or misbehaving LLM."""

    name: str
    arity: int
    uses_llm: bool

    def apply(
        self, parents: Sequence[PolicyGenome], ctx: OperatorContext
    ) -> PolicyGenome | None: ...


class BaseOperator:
    """Shared plumbing: arity check, choice of the component to edit, child assembly."""

    name: str = ""
    arity: int = 1
    uses_llm: bool = False
    targets: tuple[str, ...] = ("system",)
    """Components this operator may edit; "system" is always the default one; USER_COMPONENTS
    stands for every user-defined one (e.g. a glossary)."""
    other_component_p: float = 0.2
    """Chance of editing another target component (when the parent has one) instead of system
    (``component_choice: weighted``)."""

    def apply(self, parents: Sequence[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        if len(parents) != self.arity:
            raise ValueError(f"{self.name} takes {self.arity} parent(s), got {len(parents)}")
        if self.uses_llm and ctx.llm is None:
            return None
        return self._apply(list(parents), ctx)

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        raise NotImplementedError

    def editable(self, parent: PolicyGenome) -> list[str]:
        """The parent's components this operator may edit, "system" first, then in name
        order."""
        user = USER_COMPONENTS in self.targets
        return ["system"] + [
            k
            for k in parent.components
            if k != "system" and (k in self.targets or (user and k not in COMPONENT_ORDER))
        ]

    def pick_component(self, parent: PolicyGenome, ctx: OperatorContext) -> str:
        """The one component of ``parent`` a child changes. ``weighted`` (the default): system,
        or with probability ``other_component_p`` another editable one (no random draw when
        there is none, or the probability is 0). ``round_robin``: each editable component in
        turn, a parent's next one every generation (the phase is its id's hash, so parents
        differ): stateless, the same whatever order children are made in."""
        comps = self.editable(parent)
        if ctx.component_choice == "round_robin":
            phase = int(hashlib.sha1(parent.id.encode()).hexdigest(), 16)
            return comps[(ctx.generation + phase) % len(comps)]
        others = comps[1:]
        if others and self.other_component_p > 0 and ctx.rng.random() < self.other_component_p:
            return ctx.rng.choice(others)
        return "system"

    def child(
        self,
        parents: Sequence[PolicyGenome],
        components: Mapping[str, str],
        ctx: OperatorContext,
        note: str,
    ) -> PolicyGenome | None:
        """Assemble, repair (only the components that differ from every parent) and check
        that the child is new. None when it is not."""
        return make_child(parents, components, ctx.generation, self.name, note, ctx.max_chars)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def make_child(
    parents: Sequence[PolicyGenome],
    components: Mapping[str, str],
    generation: int,
    operator: str,
    note: str,
    max_chars: int,
) -> PolicyGenome | None:
    """A repaired child with full lineage, or None if it is invalid or equals a parent."""
    if not (components.get("system") or "").strip():
        return None
    lineage = Lineage(
        parents=tuple(p.id for p in parents),
        operator=operator,
        generation=generation,
        note=note[:200],
    )
    # the child decodes, cuts and is served like its first parent
    child = replace(parents[0], components=dict(components), lineage=lineage, name="")
    changed = [
        k
        for k, v in child.components.items()
        if all(p.components.get(k, "").strip() != v for p in parents)
    ]
    repaired = repair_child(child, max_chars, only=changed)
    if repaired is None or repaired.id in {p.id for p in parents}:
        return None
    return repaired


def quote(text: str, limit: int = 40) -> str:
    """A short quotation for lineage notes."""
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
