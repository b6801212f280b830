"""Variation operators of the inner GA: crossover and mutation, lexical and LLM-driven, plus the
repair that every child passes (SPEC inner loop, point 4)."""

from evotrainer.operators.base import Operator, OperatorContext
from evotrainer.operators.registry import OPERATORS, choose_operator, default_operator_weights
from evotrainer.operators.repair import repair_child, repair_text
from evotrainer.operators.variations import seed_variations

__all__ = [
    "OPERATORS",
    "Operator",
    "OperatorContext",
    "choose_operator",
    "default_operator_weights",
    "repair_child",
    "repair_text",
    "seed_variations",
]
