"""The code gym's reward components, each a score in [0, 1] with feedback. The hidden tests are
not among them: they are the sparse terminal reward and the validation metric (metric.py).

- ``visible_tests``: share of the docstring's examples the final code passes;
- ``defines_function``: the answer holds code that defines the function (a shape requirement);
- ``lint``: ruff's findings on the code (1 with none, 0.25 less per finding);
- ``runtime``: the performance test answered correctly within its time budget, in CPU seconds
  (budget / time when slower; not applicable to a problem without one);
- ``safety``: no dangerous call in the code (eval, exec, subprocess, os.system, sockets, file
  writes, reading a file by an absolute path, ctypes, pickle, frame introspection, writing on
  descriptors, subinterpreters ...), read on the host from the code's text. What the sandbox
  says it refused is the code's own word and is shown, never scored (execution.py);
- ``length``: no longer than twice the ground truth (non-blank, non-comment lines), then
  decreasing.
"""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import threading
from collections import OrderedDict
from typing import Any

from evotrainer.tasks.base import RewardComponent
from evotrainer.tasks.code.execution import Runs, Verdict
from evotrainer.tasks.code.problem import CodeProblem
from evotrainer.tasks.code.render import ParsedCode, defines_function, parse_code, program
from evotrainer.types import ComponentScore, Instance

DANGEROUS_CALLS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "breakpoint",
    "globals",
    "os.system",
    "os.popen",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.kill",
    "os.fork",
    "os.execv",
    "os.execvp",
    "shutil.rmtree",
    "shutil.move",
    "subprocess.run",
    "subprocess.call",
    "subprocess.Popen",
    "subprocess.check_output",
    "subprocess.check_call",
    "socket.socket",
    "socket.create_connection",
    "pickle.loads",
    "pickle.load",
    "marshal.loads",
    "sys._getframe",
    "inspect.stack",
    "inspect.currentframe",
    "gc.get_objects",
    "gc.get_referrers",
    # the runner's report and its process: writing on its descriptors, leaving before it does
    "os._exit",
    "os.write",
    "os.dup",
    "os.dup2",
    "os.close",
    "os.open",
    "os.fdopen",
    "os.killpg",
    # frames: the runner's locals are reached through them
    "traceback.walk_stack",
    "traceback.walk_tb",
    "traceback.extract_stack",
    "inspect.trace",
    "inspect.getouterframes",
    "sys._current_frames",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    # the runner's timers
    "signal.signal",
    "signal.setitimer",
    "signal.alarm",
}
DANGEROUS_MODULES = {
    "ctypes",
    "subprocess",
    "socket",
    "pickle",
    "marshal",
    "multiprocessing",
    "gc",
    "builtins",
    "_xxsubinterpreters",  # a subinterpreter runs without the sandbox's audit hook
    "_xxinterpchannels",
    "_interpreters",
    "_interpchannels",
    "_interpqueues",
    "_testcapi",
    "_testinternalcapi",
}
# attributes that lead to frames, another function's globals or the class tree
DANGEROUS_ATTRIBUTES = {
    "f_locals",
    "f_back",
    "f_globals",
    "f_builtins",
    "tb_frame",
    "gi_frame",
    "cr_frame",
    "ag_frame",
    "__globals__",
    "__closure__",
    "__code__",
    "__subclasses__",
    "__builtins__",
}
LINT_STEP = 0.25


def _problem(instance: Instance) -> CodeProblem | None:
    p = instance.payload
    return p if isinstance(p, CodeProblem) else None


def _code_of(output: str, parsed: Any) -> ParsedCode:
    """The task's parse of the answer, or the answer parsed here when none was passed."""
    return parsed if isinstance(parsed, ParsedCode) else parse_code(output)


def dangerous_calls(code: str) -> list[str]:
    """Dangerous calls, imports and attributes found in the code (static: names as written;
    the host reads the text, so nothing the code does when it runs changes this)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"import {n}" for n in names if n.split(".")[0] in DANGEROUS_MODULES]
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in DANGEROUS_CALLS:
                found.append(f"{name}()")
            elif name in ("open", "io.open") and _writes(node):
                found.append("open(..., 'w')")
            if name in ("open", "io.open", "os.open", "pathlib.Path", "Path") and node.args:
                path = _outside(node.args[0])
                if path is not None:
                    found.append(f"{name}({path!r})")
        elif isinstance(node, ast.Attribute) and node.attr in DANGEROUS_ATTRIBUTES:
            found.append(f".{node.attr}")
        elif isinstance(node, ast.Name) and node.id == "__builtins__":
            found.append("__builtins__")
    return sorted(set(found))


def _outside(arg: ast.expr) -> str | None:
    """A path written as a literal that leaves the work directory (absolute, or with ``..``),
    else None."""
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str | bytes)):
        return None
    path = arg.value.decode(errors="replace") if isinstance(arg.value, bytes) else arg.value
    return path[:60] if path.startswith(("/", "~")) or ".." in path.split("/") else None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else node.attr
    return ""


def _writes(call: ast.Call) -> bool:
    modes = [a for a in call.args[1:2]] + [k.value for k in call.keywords if k.arg == "mode"]
    return any(
        isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax+")
        for m in modes
    )


def code_lines(code: str) -> int:
    return sum(1 for ln in code.splitlines() if ln.strip() and not ln.strip().startswith("#"))


class _CodeComponent:
    name = ""
    description = ""

    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    def verdict(self, instance: Instance, output: str, parsed: Any) -> Verdict | None:
        problem = _problem(instance)
        if problem is None:
            return None
        p = parsed if isinstance(parsed, ParsedCode) else None
        return self.runs.judge(problem, output, p)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class VisibleTests(_CodeComponent):
    name = "visible_tests"
    description = "share of the docstring's examples (visible tests) the code passes"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        problem = _problem(instance)
        if problem is None or not problem.visible:
            return ComponentScore(self.name, 0.0, "no visible tests", False)
        v = self.verdict(instance, output, parsed)
        assert v is not None
        if v.error or not v.visible:
            return ComponentScore(self.name, 0.0, v.error or "not run")
        fails = v.visible_failures(problem.entry_point, limit=1)
        n = sum(t.passed for t in v.visible)
        return ComponentScore(
            self.name,
            v.visible_share,
            f"{n}/{len(v.visible)} visible tests pass" + (f"; {fails[2:]}" if fails else ""),
        )


class DefinesFunction(_CodeComponent):
    name = "defines_function"
    description = "the answer holds code that defines the asked function"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        problem = _problem(instance)
        if problem is None:
            return ComponentScore(self.name, 0.0, "not a code problem", False)
        p = _code_of(output, parsed)
        if p.empty:
            return ComponentScore(self.name, 0.0, "no code in the answer")
        if p.syntax_error:
            return ComponentScore(self.name, 0.0, f"syntax error: {p.syntax_error}")
        ok = defines_function(problem, p)
        return ComponentScore(
            self.name,
            float(ok),
            "defines the function" if ok else f"does not define {problem.entry_point}()",
        )


class Runtime(_CodeComponent):
    name = "runtime"
    description = "the performance test is answered correctly within its time budget"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        problem = _problem(instance)
        if problem is None or problem.perf is None:
            return ComponentScore(self.name, 0.0, "no performance test", False)
        v = self.verdict(instance, output, parsed)
        assert v is not None
        if v.perf is None:
            return ComponentScore(self.name, 0.0, f"performance test not run: {v.error}"[:160])
        if v.perf.passed:
            return ComponentScore(self.name, 1.0, f"performance test in {v.perf.seconds:.3f} s")
        if v.perf.seconds > 0 and v.perf.detail.startswith("correct but"):
            return ComponentScore(
                self.name, problem.perf_budget_s / v.perf.seconds, v.perf.detail[:160]
            )
        return ComponentScore(self.name, 0.0, f"performance test: {v.perf.detail}"[:160])


class Safety(_CodeComponent):
    """Read on the host from the code's text only. The sandbox's own list of refusals is not
    read: it comes from the process the code controls, which can erase it (issue 50)."""

    name = "safety"
    description = "no dangerous call in the code (read on the host)"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        problem = _problem(instance)
        if problem is None:
            return ComponentScore(self.name, 0.0, "not a code problem", False)
        p = _code_of(output, parsed)
        if p.empty:
            return ComponentScore(self.name, 0.0, "no code in the answer")
        found = dangerous_calls(p.code)
        if found:
            return ComponentScore(self.name, 0.0, "; ".join(found)[:200])
        return ComponentScore(self.name, 1.0, "no dangerous call")


class Length(_CodeComponent):
    name = "length"
    description = "no longer than twice the ground-truth implementation"

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        problem = _problem(instance)
        if problem is None:
            return ComponentScore(self.name, 0.0, "not a code problem", False)
        p = _code_of(output, parsed)
        n = code_lines(p.code)
        if n == 0:
            return ComponentScore(self.name, 0.0, "no code")
        ref = max(1, code_lines(problem.solution))
        score = min(1.0, 2 * ref / n)
        return ComponentScore(self.name, score, f"{n} lines (ground truth {ref})")


class Lint:
    """ruff's findings (pyflakes, pycodestyle, bugbear, simplify; line length off) on the
    program, memoised by its text. Not applicable when ruff is not installed."""

    name = "lint"
    description = "ruff finds nothing in the code (0.25 less per finding)"
    RULES = "E,F,W,B,SIM"

    def __init__(self, size: int = 4096) -> None:
        self._memo: OrderedDict[str, list[str] | None] = OrderedDict()
        self._lock = threading.Lock()
        self.size = size

    def findings(self, code: str) -> list[str] | None:
        key = hashlib.sha1(code.encode()).hexdigest()
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        found = _ruff(code, self.RULES)
        with self._lock:
            self._memo[key] = found
            while len(self._memo) > self.size:
                self._memo.popitem(last=False)
        return found

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        problem = _problem(instance)
        if problem is None:
            return ComponentScore(self.name, 0.0, "not a code problem", False)
        p = _code_of(output, parsed)
        if p.empty:
            return ComponentScore(self.name, 0.0, "no code")
        found = self.findings(program(problem, p))
        if found is None:
            return ComponentScore(self.name, 0.0, "ruff is not installed", False)
        score = max(0.0, 1.0 - LINT_STEP * len(found))
        return ComponentScore(self.name, score, "; ".join(found[:3]) or "no findings")

    def __repr__(self) -> str:
        return "Lint()"


def _ruff(code: str, rules: str) -> list[str] | None:
    """ruff's findings ("F841 local variable ... (line 3)") on ``code``; None without ruff.
    ruff only reads the text (it never runs it)."""
    try:
        # lazy: optional dependency (extra code)
        from ruff.__main__ import find_ruff_bin
    except ImportError:
        return None
    argv = [
        find_ruff_bin(),
        "check",
        "--isolated",
        "--no-cache",
        "--output-format",
        "json",
        "--select",
        rules,
        "--ignore",
        "E501",
        "--stdin-filename",
        "solution.py",
        "-",
    ]
    try:
        run = subprocess.run(argv, input=code.encode(), capture_output=True, timeout=30)
        rows = json.loads(run.stdout or b"[]")
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return [
        f"{r.get('code') or 'syntax'} {r.get('message', '')} (line {r['location']['row']})"
        for r in rows
        if isinstance(r, dict) and isinstance(r.get("location"), dict)
    ]


def component_registry(runs: Runs) -> dict[str, RewardComponent]:
    comps: list[RewardComponent] = [
        VisibleTests(runs),
        DefinesFunction(runs),
        Lint(),
        Runtime(runs),
        Safety(runs),
        Length(runs),
    ]
    return {c.name: c for c in comps}
