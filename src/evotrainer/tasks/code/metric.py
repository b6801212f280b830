"""The code gym's validation metric: the hidden tests, run in the sandbox.

``pass_at_1``: 1 when the answer passes every hidden test (for HumanEval: gives the reference
solution's answer on every call its ``check`` makes, oracle.py), else 0; its mean over problems
is pass@1 (one answer per problem, greedy by default). ``tests_passed``: the share of hidden
tests passed, a denser signal for a weak model that rarely passes a whole problem. Both are
decided on the host from the returned values alone: what the sandboxed process says it was
refused is its own word (execution.py) and counts in neither; unsafe code costs the ``safety``
reward component, which reads the code on the host.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evotrainer.tasks.code.execution import Runs
from evotrainer.tasks.code.problem import CodeProblem
from evotrainer.tasks.code.render import ParsedCode
from evotrainer.types import Instance


class HiddenTestsMetric:
    keys: tuple[str, ...] = ("pass_at_1", "tests_passed")

    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    def score(self, instance: Instance, output: str, parsed: Any) -> dict[str, float | None]:
        problem = instance.payload
        if not isinstance(problem, CodeProblem) or not self.runs.tests_of(problem).hidden:
            return {"pass_at_1": None, "tests_passed": None}
        if not output.strip():
            return {"pass_at_1": 0.0, "tests_passed": 0.0}
        p = parsed if isinstance(parsed, ParsedCode) else None
        v = self.runs.judge(problem, output, p)
        return {
            "pass_at_1": float(v.passes_hidden),
            "tests_passed": v.hidden_share,
        }

    def aggregate(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        out: dict[str, float] = {}
        for key in self.keys:
            values = [float(r[key]) for r in rows if isinstance(r.get(key), int | float)]
            if values:
                out[key] = sum(values) / len(values)
        return out
