"""Prompt layout and answer parsing of the code gym.

One user message: the problem (the signature and docstring, shared by the whole population)
first, the policy's text after it (prefix reuse, as for meetings). When the agent may revise,
the next turn adds its answer and a user message with the visible tests' failures.

Parsing takes the code out of the answer: the last fenced block that defines the function (or
the last fenced block), else the text from the first ``def``/``import`` line; a bare function
body (the HumanEval completion style) is put under the problem's signature. The program that
runs is the problem's own import lines followed by that code.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from evotrainer.tasks.code.problem import CodeProblem
from evotrainer.types import Message

INSTRUCTION = (
    "Write the Python function below. Reply with the complete function (its `def` line "
    "included) in one ```python code block."
)
REVISE = (
    "Your function does not pass these tests from the docstring:\n{failures}\n"
    "Fix it and reply with the complete corrected function in one ```python code block."
)
_FENCE = re.compile(r"```[ \t]*(?:python|py|Python)?[ \t]*\n(.*?)(?:```|\Z)", re.S)
_START = re.compile(r"^(?:def |async def |import |from |class |@)", re.M)


@dataclass(frozen=True)
class ParsedCode:
    """The code found in an answer (``code``) and whether it parses as Python."""

    code: str
    syntax_error: str = ""

    @property
    def empty(self) -> bool:
        return not self.code.strip()


def render_messages(problem: CodeProblem, instructions: str) -> list[Message]:
    content = f"{INSTRUCTION}\n\n```python\n{problem.prompt.rstrip()}\n```\n\n{instructions}"
    return [Message("user", content)]


def revision_messages(messages: list[Message], answer: str, failures: str) -> list[Message]:
    return [
        *messages,
        Message("assistant", answer),
        Message("user", REVISE.format(failures=failures)),
    ]


def extract_code(output: str) -> str:
    blocks = [b.strip("\n") for b in _FENCE.findall(output or "")]
    with_def = [b for b in blocks if re.search(r"^\s*def ", b, re.M)]
    if with_def:
        return with_def[-1]
    if blocks and any(b.strip() for b in blocks):
        return [b for b in blocks if b.strip()][-1]
    text = output or ""
    m = _START.search(text)
    return text[m.start() :].strip("\n") if m else text.strip("\n")


def parse_code(output: str) -> ParsedCode:
    code = extract_code(output)
    try:
        ast.parse(code)
    except SyntaxError as exc:
        return ParsedCode(code, f"line {exc.lineno}: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return ParsedCode(code, str(exc)[:120])
    return ParsedCode(code)


def _imports(problem: CodeProblem) -> list[str]:
    return [
        ln
        for ln in problem.prompt.splitlines()
        if ln.startswith(("import ", "from ")) and not ln.startswith("from __future__")
    ]


def _defines(code: str, name: str) -> bool:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name for n in tree.body
    )


def program(problem: CodeProblem, parsed: ParsedCode) -> str:
    """What runs: the problem's import lines, then the answer's code (a bare body goes under
    the problem's signature)."""
    code = parsed.code
    if code.strip() and not _defines(code, problem.entry_point):
        body = problem.prompt.rstrip() + "\n" + _indent(code)
        if _defines(body, problem.entry_point):
            code = body
    have = set(code.splitlines())
    return "\n".join([*(i for i in _imports(problem) if i not in have), code]) + "\n"


def defines_function(problem: CodeProblem, parsed: ParsedCode) -> bool:
    return _defines(program(problem, parsed), problem.entry_point)


def _indent(code: str) -> str:
    lines = code.splitlines()
    if lines and all(not ln.strip() or ln.startswith((" ", "\t")) for ln in lines):
        return code
    return "\n".join(("    " + ln) if ln.strip() else ln for ln in lines)
