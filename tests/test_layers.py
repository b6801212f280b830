"""The shape of the code. No import cycles (issue 34): between files, and between evotrainer's
packages, every import counted, those inside functions and behind ``if TYPE_CHECKING:`` too
(issue 49); none among benchmarks/' modules either. The layers themselves are import-linter's
contracts in pyproject.toml (``make lint``); siblings a layer lets import each other must still
not import each other in a circle. A module the layers place apart from its package (the task
registry and the policy genome are core) counts as a package of its own. Small modules and
functions, in src/ and benchmarks/; an import inside a function only with its reason (issue
49); a lazy package root; no meeting metric named in the generic packages."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

from tests.support import REPO

grimp = pytest.importorskip("grimp")  # comes with import-linter (the dev extra)


def _cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def _apart() -> list[str]:
    """The modules the layers contract names below the package level, longest first."""
    doc = tomllib.loads((REPO / "pyproject.toml").read_text())
    names = {
        m.strip()
        for c in doc["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers"
        for layer in c["layers"]
        for m in layer.replace("|", ":").split(":")
    }
    return sorted((m for m in names if m.count(".") >= 2), key=len, reverse=True)


def _graph(packages: bool) -> dict[str, set[str]]:
    # type-only imports count too: a cycle hidden behind ``if TYPE_CHECKING:`` is still two
    # modules that cannot be read apart (issue 49)
    g = grimp.build_graph("evotrainer", exclude_type_checking_imports=False)
    apart = _apart()

    def name(m: str) -> str:
        if not packages:
            return m
        for a in apart:
            if m == a or m.startswith(a + "."):
                return a
        return ".".join(m.split(".")[:2])

    out: dict[str, set[str]] = {}
    for m in g.modules:
        for w in g.find_modules_directly_imported_by(m):
            a, b = name(m), name(w)
            if a != b:
                out.setdefault(a, set()).add(b)
    return out


def _show(cycles: Iterable[list[str]]) -> str:
    return "; ".join(" <-> ".join(c) for c in cycles)


def test_no_module_imports_itself_through_others():
    cycles = _cycles(_graph(packages=False))
    assert not cycles, _show(cycles)


def test_no_two_packages_import_each_other():
    cycles = _cycles(_graph(packages=True))  # evotrainer.<package>
    assert not cycles, _show(cycles)


def _too_big(folder: Path) -> list[str]:
    """Issue 34: no module over 600 lines, no function over 80 (def line to last line); word
    tables live in data files, not code."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(REPO).as_posix()
        if text.count("\n") > 600:
            found.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > 80:
                    found.append(f"{name}:{node.lineno} {node.name}: {size} lines")
    return found


def test_modules_and_functions_stay_small():
    assert _too_big(REPO / "src" / "evotrainer") == []


def test_benchmark_modules_and_functions_stay_small():
    """The same rule over benchmarks/ (issue 49: one runner, profiles as data, methods as small
    modules)."""
    assert _too_big(REPO / "benchmarks") == []


def test_the_benchmarks_import_no_cycle():
    """Issue 49: benchmarks/ is a client of the library, not a second program with modules
    that need each other; every import counts, those inside functions and behind
    ``if TYPE_CHECKING:`` too, as in src/."""
    g = grimp.build_graph("benchmarks", exclude_type_checking_imports=False)
    graph = {m: set(g.find_modules_directly_imported_by(m)) for m in g.modules}
    cycles = _cycles(graph)
    assert not cycles, _show(cycles)


def test_no_benchmark_module_shadows_the_standard_library():
    """``python benchmarks/X.py`` puts benchmarks/ first on sys.path, so a module there named
    like a standard one is imported in its place: benchmarks/profile.py hid ``profile``, and
    torch's import of cProfile failed, so every distilling cell of the quality benchmark
    (sft_refs, weights_*, alternation) stopped with "distillation needs the optional extra"
    (renamed bench_profile.py)."""
    names = {p.stem for p in (REPO / "benchmarks").iterdir() if p.suffix == ".py" or p.is_dir()}
    assert sorted(names & set(sys.stdlib_module_names)) == []


LAZY = re.compile(r"#\s*lazy:\s*(optional dependency|start-up time)\b")


def _function_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: dict[int, ast.Import | ast.ImportFrom] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    found[node.lineno] = node
    return [found[k] for k in sorted(found)]


def test_a_function_level_import_says_why():
    """Issue 49: an import inside a function defers nothing unless it says what it defers, in a
    comment on its line or the line just above (``# lazy: optional dependency (extra X)``, an
    extra's module such as torch or llama_cpp; ``# lazy: start-up time``, a command's modules or
    a module slow to import such as matplotlib); the comment above a run of consecutive imports
    covers the run. Every other import belongs at the top of its module."""
    bare = []
    for path in sorted((REPO / "src" / "evotrainer").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        imports = _function_level_imports(ast.parse(text))
        ends = {node.end_lineno: node for node in imports}
        for node in imports:
            first = node
            while first.lineno - 1 in ends and not LAZY.search(lines[first.lineno - 1]):
                first = ends[first.lineno - 1]  # the run of imports this one ends
            said = (lines[node.lineno - 1], lines[first.lineno - 1], lines[first.lineno - 2])
            if not any(LAZY.search(line) for line in said):
                name = path.relative_to(REPO).as_posix()
                bare.append(f"{name}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    assert bare == [], "\n".join(bare)


def test_the_package_root_is_lazy():
    """``import evotrainer`` loads no other module of the package than its stdlib-only lazy
    namespace helper (evotrainer/lazy.py); a name is loaded the first time it is used (issue
    49)."""
    code = (
        "import sys, evotrainer; a = sorted(m for m in sys.modules if m.startswith('evotrainer'));"
        "evotrainer.PolicyGenome; b = 'evotrainer.policy.genome' in sys.modules; print(a, b)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['evotrainer', 'evotrainer.lazy'] True"


GENERIC = (
    "engine",
    "evaluation",
    "loops",
    "harness",
    "run",
    "report",
    "review",
    "defences",
    "llm",
    "operators",
    "policy",
    "distill",
)
MEETING_METRICS = ("rouge", "action_item", "decision_recall", "conciseness")


def test_generic_packages_name_no_meeting_metric():
    """A name of the meeting task's metrics or reward components in a string of the generic
    packages' code (docstrings aside) ties them to one task; the task's plug-in and the config
    (its defaults, ``meta.concise_component``) say them instead (issue 49)."""
    found = []
    for pkg in GENERIC:
        for path in sorted((REPO / "src" / "evotrainer" / pkg).rglob("*.py")):
            tree = ast.parse(path.read_text())
            docs = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(
                    node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                )
                and node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docs
                    and any(m in node.value.lower() for m in MEETING_METRICS)
                ):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value[:60]!r}")
    assert found == []
