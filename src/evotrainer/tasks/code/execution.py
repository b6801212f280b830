"""One run of an answer against its problem, read into verdicts.

``Runs.judge(problem, output)`` runs the answer's program in the sandbox (memoised by problem
and code) with the arguments of every test the problem has: the visible tests and the hidden
tests (for HumanEval, the calls its test program made of the reference solution: oracle.py).
The performance test runs in an execution of its own, timed by the host's kernel. The host
compares each returned value with the expected one as data, so a verdict never depends on the
code's own ``==``, on anything the code wrote about itself, or on a test program sharing its
process. What the runner's audit hook noted (``violations``) comes from inside the process the
code controls (it can switch the hook's view off, erase the list or write its own report), so
it is shown as feedback and never decides a verdict: pass or fail is the returned values and
what the host saw of the execution (its exit, its kernel-counted CPU time). The reward
components, the validation metric and the next turn's feedback all read the same ``Verdict``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from evotrainer.tasks.code.oracle import Oracle
from evotrainer.tasks.code.problem import CodeProblem, TestCase, same_answer
from evotrainer.tasks.code.render import ParsedCode, defines_function, parse_code, program
from evotrainer.tasks.code.sandbox import CallResult, Execution, ExecutionCache, Sandbox

PERF_TIMEOUT_FACTOR = 2.0  # the performance call may run this many budgets before it is cut


@dataclass(frozen=True)
class TestVerdict:
    __test__ = False

    case: TestCase | None
    passed: bool
    detail: str  # what happened, for feedback ("returned 3, expected 4", "raised KeyError")
    seconds: float = 0.0


@dataclass(frozen=True)
class Verdict:
    """What an answer did on its problem."""

    parsed: ParsedCode
    defines: bool
    execution: Execution | None  # None: no code to run
    visible: tuple[TestVerdict, ...] = ()
    hidden: tuple[TestVerdict, ...] = ()
    perf: TestVerdict | None = None
    violations: tuple[str, ...] = ()  # what the runner's hook noted: the code's word, feedback
    error: str = ""  # the code did not load, or the run was killed

    @property
    def visible_share(self) -> float:
        return sum(t.passed for t in self.visible) / len(self.visible) if self.visible else 0.0

    @property
    def hidden_share(self) -> float:
        return sum(t.passed for t in self.hidden) / len(self.hidden) if self.hidden else 0.0

    @property
    def passes_hidden(self) -> bool:
        return bool(self.hidden) and all(t.passed for t in self.hidden)

    def visible_failures(self, entry_point: str, limit: int = 3) -> str:
        """The feedback a revising agent sees: visible tests only (never a hidden one)."""
        if self.error:
            return f"- the code fails: {self.error}"
        lines = []
        for t in self.visible:
            if not t.passed and t.case is not None:
                lines.append(f"- {t.case.call_text(entry_point)}: {t.detail}")
        for v in self.violations[:2]:
            lines.append(f"- refused by the sandbox: {v}")  # feedback only, never a score
        return "\n".join(lines[:limit])


def _verdict(case: TestCase, result: CallResult | None) -> TestVerdict:
    if result is None:
        return TestVerdict(case, False, "not run")
    if case.raises:
        if not result.ok and result.raised == case.raises:
            return TestVerdict(case, True, f"raised {case.raises}", result.seconds)
        got = f"returned {result.value[:80]}" if result.ok else f"raised {result.raised}"
        return TestVerdict(case, False, f"{got}, expected it to raise {case.raises}")
    if not result.ok:
        what = f"{result.raised}: {result.error}" if result.error else result.raised
        return TestVerdict(case, False, f"raised {what[:120]}", result.seconds)
    if not result.plain:
        return TestVerdict(case, False, "returned a non-builtin object", result.seconds)
    if same_answer(result.value, case.expected):
        return TestVerdict(case, True, "passed", result.seconds)
    return TestVerdict(
        case, False, f"returned {result.value[:80]}, expected {case.expected[:80]}", result.seconds
    )


class Runs:
    """The sandbox, the oracle of recorded hidden tests and the memo of verdicts
    (thread-safe)."""

    def __init__(self, sandbox: Sandbox, cache: ExecutionCache | None = None) -> None:
        self.sandbox = sandbox
        self.oracle = Oracle(sandbox)
        self.cache = cache or ExecutionCache()
        self._startup_cpu_s: float | None = None

    def tests_of(self, problem: CodeProblem) -> CodeProblem:
        return self.oracle.tests_of(problem)

    def judge(self, problem: CodeProblem, output: str, parsed: ParsedCode | None = None) -> Verdict:
        parsed = parsed if parsed is not None else parse_code(output)
        if parsed.empty:
            return Verdict(parsed, False, None, error="no code in the answer")
        problem = self.tests_of(problem)
        code = program(problem, parsed)
        defines = defines_function(problem, parsed)
        key = (problem.id, hashlib.sha1(code.encode()).hexdigest())
        verdict = self.cache.get(key)
        if verdict is None:
            limit = self.sandbox.limits.call_s
            calls = [(t.args, limit) for t in (*problem.visible, *problem.hidden)]
            ex = self.sandbox.run(code, problem.entry_point, calls)
            verdict = read(problem, parsed, defines, ex)
            if problem.perf is not None and ex.ran:
                verdict = replace(verdict, perf=self._perf(problem, code))
            self.cache.put(key, verdict)
        return verdict

    def _perf(self, problem: CodeProblem, code: str) -> TestVerdict:
        """The performance test in an execution of its own: the answer compared on the host,
        the time from the kernel's count of the execution's CPU seconds less what starting
        Python costs here (never the code's own report of itself)."""
        assert problem.perf is not None
        limit = problem.perf_budget_s * PERF_TIMEOUT_FACTOR
        ex = self.sandbox.run(code, problem.entry_point, [(problem.perf.args, limit)])
        result = ex.calls[0] if ex.ran and ex.calls else None
        verdict = _verdict(problem.perf, result)
        seconds = max(0.0, ex.cpu_s - self.startup_cpu_s())
        verdict = replace(verdict, seconds=seconds)
        if verdict.passed and seconds > problem.perf_budget_s:
            detail = f"correct but took {seconds:.2f} s (budget {problem.perf_budget_s:g} s)"
            return TestVerdict(problem.perf, False, detail, seconds)
        return verdict

    def startup_cpu_s(self) -> float:
        """CPU seconds of an execution that loads a one-line function and calls nothing (the
        least of three)."""
        if self._startup_cpu_s is None:
            runs = [self.sandbox.run("def f():\n    pass\n", "f").cpu_s for _ in range(3)]
            self._startup_cpu_s = min(runs)
        return self._startup_cpu_s


def read(problem: CodeProblem, parsed: ParsedCode, defines: bool, ex: Execution) -> Verdict:
    """The verdicts of one execution: its call results in the order ``Runs`` sent them."""
    if not ex.ran:
        return Verdict(parsed, defines, ex, violations=ex.violations, error=ex.error or ex.status)
    results = list(ex.calls)
    nv = len(problem.visible)

    def at(i: int) -> CallResult | None:
        return results[i] if i < len(results) else None

    visible = tuple(_verdict(t, at(i)) for i, t in enumerate(problem.visible))
    hidden = tuple(_verdict(t, at(nv + i)) for i, t in enumerate(problem.hidden))
    return Verdict(parsed, defines, ex, visible, hidden, None, ex.violations)
