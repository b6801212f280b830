"""HumanEval's assert-style tests turned into (input, expected) pairs, EvalPlus's way.

A HumanEval problem's hidden test is a program, ``def check(candidate): assert candidate(...)
== ...``. Running it with a candidate's code in one process would make the verdict the
candidate's to forge (it shares a process with the asserts, their constants and the "passed"
bookkeeping). So the program runs once per problem, in the sandbox, against the problem's
*reference* solution, and every call it makes is recorded: the arguments as a literal and what
the reference returned (or raised). Those pairs are the problem's hidden tests. A candidate then
only ever receives arguments, and the host compares what it returned with the reference's
answer as data (``problem.same_answer``: floats to 1e-6).

What this changes against HumanEval's own harness: a test program that accepts several answers
(HumanEval/32: any root of the polynomial) accepts only the reference's here; a call whose
arguments are not literal data (a function, keyword arguments) cannot be sent and is left out
(counted in ``Oracle.note``). Random inputs are drawn with ``random.seed(0)``, once.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass, replace

from evotrainer.tasks.code.problem import CodeProblem, TestCase
from evotrainer.tasks.code.sandbox import Recorded, Sandbox

log = logging.getLogger(__name__)
HARNESS_FAULTS = ("Timeout", "MemoryError", "HarnessError", "ReprError")


@dataclass(frozen=True)
class Recording:
    """The hidden tests recorded for one problem, and what could not be turned into one."""

    cases: tuple[TestCase, ...]
    left_out: int = 0  # calls whose arguments or answer are not literal data
    reference_failed: int = 0  # asserts of the test program the reference itself fails
    error: str = ""  # the recording did not run (the reference did not load ...)

    @property
    def note(self) -> str:
        parts = [f"{len(self.cases)} recorded calls"]
        if self.left_out:
            parts.append(f"{self.left_out} left out (not literal data)")
        if self.reference_failed:
            parts.append(f"the reference fails {self.reference_failed} of the program's asserts")
        if self.error:
            parts.append(f"not recorded: {self.error}")
        return "; ".join(parts)


def case_of(row: Recorded) -> TestCase | None:
    """One recorded call as a test, or None when it cannot be one."""
    r = row.result
    if row.args is None:
        return None
    if r.ok:
        return TestCase(row.args, r.value) if r.plain else None
    return TestCase(row.args, raises=r.raised) if r.raised not in HARNESS_FAULTS else None


def record(sandbox: Sandbox, problem: CodeProblem) -> Recording:
    ex = sandbox.record(problem.solution, problem.entry_point, problem.check)
    if not ex.ran:
        return Recording((), error=ex.error or ex.status)
    cases = [case_of(r) for r in ex.recorded]
    kept = tuple(c for c in cases if c is not None)
    failed = sum(not u.ok for u in ex.units)
    return Recording(kept, len(cases) - len(kept), failed)


class Oracle:
    """The problems with their test programs recorded into hidden tests, memoised (once per
    problem and process; thread-safe)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._done: dict[str, tuple[CodeProblem, Recording]] = {}
        self._lock = threading.Lock()

    def tests_of(self, problem: CodeProblem) -> CodeProblem:
        """``problem`` with its hidden tests: as given, or recorded from its test program."""
        if not problem.check:
            return problem
        return self.recording(problem)[0]

    def recording(self, problem: CodeProblem) -> tuple[CodeProblem, Recording]:
        key = hashlib.sha256(
            "\0".join((problem.id, problem.entry_point, problem.solution, problem.check)).encode()
        ).hexdigest()
        with self._lock:
            if key not in self._done:
                rec = record(self.sandbox, problem)
                if rec.error or rec.left_out or rec.reference_failed:
                    log.warning("%s: hidden tests: %s", problem.id, rec.note)
                self._done[key] = (replace(problem, hidden=problem.hidden + rec.cases), rec)
            return self._done[key]
