"""The built-in operators by name, their default choice weights, and weighted choice.

``InnerConfig.operators`` (name -> weight) overrides the defaults; unknown names are an error.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping

from evotrainer.operators.base import Operator
from evotrainer.operators.crossover import SentenceCrossover
from evotrainer.operators.decoding import DecodingOperator
from evotrainer.operators.feedback import FeedbackEditOperator
from evotrainer.operators.fewshot import FewShotOperator
from evotrainer.operators.keywords import KeywordOperator
from evotrainer.operators.llm_ops import LLMMerge, LLMParaphrase, ReflectiveMutation
from evotrainer.operators.restructure import ReorderOperator
from evotrainer.operators.structure import TemplateCrossover, TemplateOperator
from evotrainer.operators.synonyms import SynonymOperator

OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        SynonymOperator(),
        ReorderOperator(),
        KeywordOperator(),
        SentenceCrossover(),
        LLMParaphrase(),
        LLMMerge(),
        ReflectiveMutation(),
        TemplateOperator(),
        TemplateCrossover(),
        FewShotOperator(),
        FeedbackEditOperator(),
        DecodingOperator(),
    )
}


def default_operator_weights() -> dict[str, float]:
    """Lexical and LLM operators 1.0 each; reflective mutation, the most informed, 1.5; the
    structural ones (template, few-shot example, feedback-directed edit) 1.5, since a small
    model reacts to structure more than to wording; ``decoding`` (one decoding or loop-cut gene
    moved a step) 1.0. With ``inner.operator_choice: bandit``
    these are the prior; observed success moves the choice."""
    return {
        "synonym": 1.0,
        "reorder": 1.0,
        "keyword": 1.0,
        "sentence_crossover": 1.0,
        "llm_paraphrase": 1.0,
        "llm_merge": 1.0,
        "reflective": 1.5,
        "template": 1.5,
        "template_crossover": 1.0,
        "fewshot": 1.5,
        "feedback_edit": 1.5,
        "decoding": 1.0,
    }


def eligible(
    weights: Mapping[str, float] | None = None,
    llm_available: bool = False,
    *,
    arity: int | None = None,
    exclude: Collection[str] = (),
    operators: Mapping[str, Operator] | None = None,
) -> list[tuple[str, float]]:
    """(name, weight) of the operators that may be drawn, sorted by name.

    LLM operators are left out when ``llm_available`` is False; ``arity`` restricts the pool to
    mutations (1) or crossovers (2); ``exclude`` drops names. Raises ValueError for an unknown
    name or when nothing is left."""
    ops = OPERATORS if operators is None else operators
    weights = default_operator_weights() if weights is None else weights
    unknown = sorted(set(weights) - set(ops))
    if unknown:
        raise ValueError(f"unknown operator(s) {unknown}; known: {sorted(ops)}")
    pool = [
        (name, float(w))
        for name, w in sorted(weights.items())
        if w > 0
        and name not in exclude
        and (llm_available or not ops[name].uses_llm)
        and (arity is None or ops[name].arity == arity)
    ]
    if not pool:
        raise ValueError(
            f"no operator to choose (llm_available={llm_available}, arity={arity}, "
            f"weights={dict(weights)})"
        )
    return pool


def choose_operator(
    rng: random.Random,
    weights: Mapping[str, float] | None = None,
    llm_available: bool = False,
    *,
    arity: int | None = None,
    exclude: Collection[str] = (),
    operators: Mapping[str, Operator] | None = None,
) -> Operator:
    """Draw an operator with probability proportional to its weight (see ``eligible``)."""
    ops = OPERATORS if operators is None else operators
    pool = eligible(weights, llm_available, arity=arity, exclude=exclude, operators=ops)
    names, ws = zip(*pool, strict=True)
    return ops[rng.choices(names, weights=ws, k=1)[0]]
