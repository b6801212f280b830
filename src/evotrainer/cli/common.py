"""What the CLI's commands share (app.py holds the typer app): the consoles, the options
several commands take, the config overrides they make and the one way they fail."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape
from rich.text import Text

from evotrainer.terminal import SafeConsole, printable

# every string they print has its control characters written out (terminal.py)
err = SafeConsole(stderr=True)
out = SafeConsole()

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="local:smollm2 | local:/path/model.gguf | openai:<model> (with --base-url) | "
        "without a model: fake:echo | fake:minutes | fake:clerk | fake:latency=SECONDS",
    ),
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint for openai: specs")
]
MaxCallsOpt = Annotated[
    int | None,
    typer.Option("--max-calls", min=1, help="stop after this many LLM calls (budget.max_calls)"),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="stop after this many prompt+completion tokens (budget.max_tokens)",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.001,
        help="stop starting generations after this many seconds (budget.max_wall_s); the best "
        "policy is still validated and confirmed. run: no request to a model server waits "
        "longer either (model.timeout_s)",
    ),
]
TaskOpt = Annotated[
    str | None,
    typer.Option(
        "--task",
        help="the task plug-in: meetings (default) | code | dialogue | an installed one | one not "
        "packaged: my_module:PLUGIN (from the current folder) or path/to/file.py:PLUGIN",
    ),
]


def budget_values(
    max_calls: int | None, max_tokens: int | None, timeout: float | None
) -> dict[str, object]:
    values: dict[str, object] = {}
    if max_calls is not None:
        values["budget.max_calls"] = max_calls
    if max_tokens is not None:
        values["budget.max_tokens"] = max_tokens
    if timeout is not None:
        values["budget.max_wall_s"] = timeout
    return values


def fail(exc: Exception, hint: str = "", where: Path | None = None) -> NoReturn:
    """Print ``exc`` as one error paragraph and exit 2; ``where``: the folder the command
    works in, named when an OSError names no file."""
    msg = str(exc) if not isinstance(exc, OSError) else os_error(exc, where)
    text = Text("error: ", style="red") + Text(printable(msg + hint))
    err.print(text, soft_wrap=True, highlight=False)
    raise typer.Exit(2)


def os_error(exc: OSError, where: Path | None = None) -> str:
    """A file-system error (disk full, permission denied, a file where a folder should be ...)
    as one line naming the file, else the folder being worked in; an error that is not about
    a file (e.g. a socket's) is not called one."""
    reason = exc.strerror or str(exc)
    if exc.filename:
        return f"cannot read or write a file ({exc.filename}): {reason}"
    if where is not None:
        return f"cannot read or write a file in {where} (the system did not say which): {reason}"
    return f"{reason} (error {exc.errno})" if exc.errno else reason


def overrides(
    model: str | None, base_url: str | None, val_data: str | None, task: str | None = None
) -> dict[str, str]:
    """Option values as they are (file and model names are never parsed as YAML: with YAML,
    ``meet #2.jsonl`` would become ``meet``)."""
    values = {}
    if task:
        values["task.name"] = task
    if model:
        values["model.spec"] = model
    if base_url:
        values["model.base_url"] = base_url
    if val_data:
        values["validation.data"] = val_data
    return values


def cell(text: str) -> str:
    """Text from the data in a table: markup escaped, control characters written out (a table
    is not a string, so SafeConsole cannot do it)."""
    return escape(printable(text))
