"""Read HumanEval-format JSONL (``task_id``, ``prompt``, ``entry_point``, ``canonical_solution``,
``test``) into code problems: the prompt is what the agent sees, the docstring's ``>>>``
examples become the visible tests (what a revising agent is shown), the original ``check``
program is the hidden test. Generated problems written with ``CodeProblem.to_json`` (``save_problems``) read back
too. Reading never executes anything: the examples are parsed as literals."""

from __future__ import annotations

import ast
import doctest
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evotrainer.errors import DataError
from evotrainer.tasks.code.problem import CodeProblem, TestCase, literal
from evotrainer.types import Instance


def load_problems(path: str | Path) -> list[Instance]:
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DataError(f"{p}: not UTF-8 ({exc})") from None
    except OSError as exc:
        raise DataError(f"{p}: cannot read: {exc}") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            problem = from_record(rec)
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{p}:{n}: not a code problem ({type(exc).__name__}: {exc})") from None
        out.append(
            Instance(
                id=problem.id,
                payload=problem,
                source=problem.source,
                difficulty=problem.difficulty,
                kind=problem.kind,
                length_bucket=_bucket(problem.prompt),
            )
        )
    return out


def save_problems(path: str | Path, problems: Iterable[CodeProblem]) -> Path:
    """Write problems as JSONL (UTF-8, one ``CodeProblem.to_json`` object per line, its tests
    with it), what ``load_problems`` reads back; creates parent folders."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for problem in problems:
            fh.write(json.dumps(problem.to_json(), ensure_ascii=False) + "\n")
    return p


def _bucket(prompt: str) -> str:
    return "short" if len(prompt) < 500 else "medium" if len(prompt) < 900 else "long"


def from_record(rec: dict[str, Any]) -> CodeProblem:
    if not isinstance(rec, dict):
        raise TypeError("a record must be a JSON object")
    if "visible" in rec:  # written by CodeProblem.to_json
        return CodeProblem(
            id=str(rec["task_id"]),
            entry_point=str(rec["entry_point"]),
            prompt=str(rec["prompt"]),
            solution=str(rec.get("solution", "")),
            visible=tuple(TestCase.from_json(t) for t in rec["visible"]),
            hidden=tuple(TestCase.from_json(t) for t in rec.get("hidden") or ()),
            check=str(rec.get("check") or ""),
            perf=TestCase.from_json(rec["perf"]) if rec.get("perf") else None,
            perf_budget_s=float(rec.get("perf_budget_s", 1.0)),
            kind=str(rec.get("kind", "basic")),
            family=str(rec.get("family", "")),
            difficulty=rec.get("difficulty"),
            source=str(rec.get("source", "synthetic")),
        )
    task_id, prompt, entry = str(rec["task_id"]), str(rec["prompt"]), str(rec["entry_point"])
    test = str(rec["test"])
    if "def check" not in test:
        raise ValueError("'test' holds no check(candidate) function")
    return CodeProblem(
        id=task_id,
        entry_point=entry,
        prompt=prompt,
        solution=prompt + str(rec.get("canonical_solution", "")),
        visible=doc_examples(prompt, entry),
        check=test,
        kind="humaneval",
        family=task_id.split("/")[0],
        source=task_id.split("/")[0] or "real",
    )


def doc_examples(prompt: str, entry_point: str) -> tuple[TestCase, ...]:
    """The docstring's examples whose call and expected value are literals: ``>>> f(x)``
    followed by the value, or one line ``f(x) == value`` (also ``➞``, ``=>``, ``->``)."""
    pairs: list[tuple[str, str]] = []
    try:
        for ex in doctest.DocTestParser().get_examples(prompt):
            want = ex.want.split('"""')[0].split("'''")[0]
            pairs.append((ex.source.strip(), want.strip()))
    except ValueError:
        pass
    line = re.compile(rf"^\s*({re.escape(entry_point)}\(.*\))\s*(?:==|➞|=>|->)\s*(.+?)\s*$")
    for text in prompt.splitlines():
        if ">>>" not in text and (m := line.match(text)):
            pairs.append((m.group(1), m.group(2)))
    out: dict[str, TestCase] = {}
    for source, want in pairs:
        case = _case(source, want, entry_point)
        if case is not None and case.args not in out:
            out[case.args] = case
    return tuple(out.values())


def _case(source: str, want: str, entry_point: str) -> TestCase | None:
    try:
        call = ast.parse(source, mode="eval").body
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == entry_point
            and not call.keywords
        ):
            return None
        args = tuple(ast.literal_eval(a) for a in call.args)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    for text in (want, want.splitlines()[0] if want.strip() else ""):
        try:  # the whole expected output, else its first line (prose may follow it)
            return TestCase(literal(args), literal(ast.literal_eval(text)))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None
