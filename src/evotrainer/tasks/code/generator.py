"""The code gym's task generator: programming problems with ground truth at difficulty L.

L decides which families can be drawn (a family's ``level`` at most L + 0.35: hard problems
only at higher L), how many examples the agent sees (3 below L 1/3, 2 below 2/3, then 1: fewer
visible tests leave more room to overfit them), how many hidden cases there are and how large
their inputs and the performance test's input are. The mix of kinds (edge cases, performance
traps, input validation, security pitfalls ...) is the harness's to evolve. Every expected
answer comes from running the family's ground-truth implementation here, on the host.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import random
import textwrap
from collections.abc import Mapping

from evotrainer.tasks.code.families import FAMILIES, KINDS, Args, Family
from evotrainer.tasks.code.problem import CodeProblem, TestCase, literal
from evotrainer.types import Instance

REACH = 0.35  # a family is drawn from difficulty level - REACH on


def expected_case(family: Family, args: Args) -> TestCase:
    """The test case for ``args``: the ground truth's answer, or the exception it raises."""
    try:
        value = family.reference(*copy.deepcopy(args))
    except Exception as exc:  # noqa: BLE001 - the exception is the expected behaviour
        return TestCase(literal(tuple(args)), raises=type(exc).__name__)
    return TestCase(literal(tuple(args)), literal(value))


def render_prompt(family: Family, visible: tuple[TestCase, ...]) -> str:
    """The signature and a docstring with the visible examples (doctest style)."""
    doc = textwrap.fill(family.doc, 84, initial_indent="    ", subsequent_indent="    ")
    lines = [family.signature, '    """' + doc.strip(), ""]
    for t in visible:
        lines.append(f"    >>> {t.call_text(family.name)}")
        lines.append(
            f"    {t.want_text() if not t.raises else 'Traceback (most recent call last):'}"
        )
        if t.raises:
            lines.append(f"    {t.raises}")
    lines.append('    """')
    return "\n".join(lines) + "\n"


def _bucket(difficulty: float) -> str:
    return "short" if difficulty < 1 / 3 else "medium" if difficulty < 2 / 3 else "long"


def visible_count(difficulty: float) -> int:
    return 3 if difficulty < 1 / 3 else 2 if difficulty < 2 / 3 else 1


class CodeGenerator:
    """``sample(n, L, rng, mix)``: ``n`` problems; ``mix`` weights the kinds (uniform when
    None; kinds with no family open at L are left out)."""

    kinds: tuple[str, ...] = KINDS

    def __init__(self, families: tuple[Family, ...] = FAMILIES) -> None:
        self.families = families

    def open_families(self, difficulty: float) -> dict[str, list[Family]]:
        out: dict[str, list[Family]] = {}
        for f in self.families:
            if f.level <= difficulty + REACH:
                out.setdefault(f.kind, []).append(f)
        return out

    def sample(
        self,
        n: int,
        difficulty: float,
        rng: random.Random,
        mix: Mapping[str, float] | None = None,
    ) -> list[Instance]:
        open_ = self.open_families(difficulty)
        kinds = [k for k in self.kinds if k in open_]
        weights = [max(0.0, float((mix or {}).get(k, 1.0 if mix is None else 0.0))) for k in kinds]
        if sum(weights) <= 0:
            weights = [1.0] * len(kinds)
        out = []
        for _ in range(n):
            kind = rng.choices(kinds, weights)[0]
            family = rng.choice(open_[kind])
            out.append(self.instance(family, difficulty, rng))
        return out

    def problem(self, family: Family, difficulty: float, rng: random.Random) -> CodeProblem:
        examples = family.examples(rng)[: visible_count(difficulty)]
        visible = tuple(expected_case(family, a) for a in examples)
        seen = {t.args for t in visible}
        hidden = []
        for args in family.cases(rng, difficulty):
            case = expected_case(family, args)
            if case.args not in seen:
                seen.add(case.args)
                hidden.append(case)
        perf = expected_case(family, family.perf(rng, difficulty)) if family.perf else None
        prompt = render_prompt(family, visible)
        digest = hashlib.sha1("\n".join([prompt, *(t.args for t in hidden)]).encode()).hexdigest()[
            :10
        ]
        return CodeProblem(
            id=f"code-{family.name}-{digest}",
            entry_point=family.name,
            prompt=prompt,
            solution=textwrap.dedent(inspect.getsource(family.reference)),
            visible=visible,
            hidden=tuple(hidden),
            perf=perf,
            perf_budget_s=family.perf_budget_s,
            kind=family.kind,
            family=family.name,
            difficulty=round(difficulty, 4),
        )

    def instance(self, family: Family, difficulty: float, rng: random.Random) -> Instance:
        p = self.problem(family, difficulty, rng)
        return Instance(
            id=p.id,
            payload=p,
            difficulty=p.difficulty,
            kind=p.kind,
            length_bucket=_bucket(difficulty),
        )
