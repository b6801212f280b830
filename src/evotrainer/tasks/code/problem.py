"""A programming problem with its ground truth: what the agent sees (a signature and a docstring
with examples), the ground-truth implementation, the visible tests (the docstring's examples:
what the agent may be shown failing), the hidden tests (never shown: the sparse terminal reward
and the validation metric) and an optional performance test with a time budget.

A test is a call: the arguments as a Python literal and the expected return value (or the
exception it must raise). The sandbox only ever receives the arguments; the host compares the
answer, so the expected values never enter the process that runs model-written code. A
HumanEval problem instead carries its original test program (``check``: asserts that hold the
expected values), run unit by unit in the sandbox.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TestCase:
    """One call: ``args`` a literal tuple of positional arguments, ``expected`` the literal
    return value, or ``raises`` the name of the exception the call must raise."""

    __test__ = False  # not a pytest class

    args: str
    expected: str = ""
    raises: str = ""

    def call_text(self, entry_point: str) -> str:
        inner = self.args[1:-1].rstrip(",") if self.args.startswith("(") else self.args
        return f"{entry_point}({inner})"

    def want_text(self) -> str:
        return f"raises {self.raises}" if self.raises else self.expected

    def to_json(self) -> dict[str, str]:
        return {"args": self.args, "expected": self.expected, "raises": self.raises}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> TestCase:
        return cls(str(d["args"]), str(d.get("expected", "")), str(d.get("raises", "")))


@dataclass(frozen=True)
class CodeProblem:
    id: str
    entry_point: str
    prompt: str  # signature + docstring (with the visible examples): what the agent sees
    solution: str  # ground-truth implementation (the whole program)
    visible: tuple[TestCase, ...] = ()
    hidden: tuple[TestCase, ...] = ()
    check: str = ""  # a HumanEval-style test program (def check(candidate): asserts)
    perf: TestCase | None = None
    perf_budget_s: float = 1.0
    kind: str = "basic"
    family: str = ""
    difficulty: float | None = None
    source: str = "synthetic"
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def text(self) -> str:
        return self.prompt

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.id,
            "entry_point": self.entry_point,
            "prompt": self.prompt,
            "solution": self.solution,
            "visible": [t.to_json() for t in self.visible],
            "hidden": [t.to_json() for t in self.hidden],
            "check": self.check,
            "perf": self.perf.to_json() if self.perf else None,
            "perf_budget_s": self.perf_budget_s,
            "kind": self.kind,
            "family": self.family,
            "difficulty": self.difficulty,
            "source": self.source,
        }


def literal(value: Any) -> str:
    """``repr`` that ``ast.literal_eval`` reads back (the argument and answer format)."""
    text = repr(value)
    if len(text) < 4096:  # large inputs (performance tests) are built from literals anyway
        ast.literal_eval(text)  # refuses anything else (a generator bug, not user input)
    return text


def same_answer(got: str, expected: str) -> bool:
    """Whether the literal ``got`` (from the sandbox) equals ``expected``: compared as data on
    the host, never with the candidate's own ``__eq__``. Integers exactly (also inside lists,
    tuples, dicts ...); an expected float to 1e-6. A value that cannot be read or compared (a
    literal too long or too deep, an integer too large for a float) is a different answer."""
    try:
        a, b = ast.literal_eval(got), ast.literal_eval(expected)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    try:
        return _equal(a, b)
    except (OverflowError, RecursionError):
        return False


def _equal(a: Any, b: Any) -> bool:
    """``a`` (got) equals ``b`` (expected). Python's own ``==`` between an int and a float is
    exact (no rounding to a float), so an expected integer is matched exactly whatever the
    answer's type; only an expected float allows a tolerance."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        if isinstance(b, float) and math.isfinite(b):
            return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)  # OverflowError: too large
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)
