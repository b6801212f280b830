"""``evotrainer eval``'s progress (issue 51: it printed nothing until it ended): fed by the
budget's listener after every answer, a bar on a terminal (answers of those expected, the backend
calls and cached answers, the ETA at the backend's pace) and, in a log file, a line whenever
``HEARTBEAT_S`` seconds passed without one."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from evotrainer.llm.budget import Budget
from evotrainer.run.estimate import calls_text, format_duration

HEARTBEAT_S = 20.0
MIN_CALLS = 4  # backend calls before the pace (and an ETA) is given


class EvalProgress:
    """A context manager: the listener of ``budget`` while it is open. ``total``: the answers
    expected (policies x instances x calls a rollout may make); ``what``: the first line."""

    def __init__(self, budget: Budget, total: int, console: Console, what: str) -> None:
        self.budget, self.total, self.console, self.what = budget, total, console, what
        self.t0 = time.perf_counter()
        self.last = time.monotonic()
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> EvalProgress:
        self.console.print(self.what, markup=False, highlight=False, soft_wrap=True)
        if self.console.is_terminal:
            self.bar = Progress(
                TextColumn("[bold]evaluating"),
                BarColumn(bar_width=24),
                TextColumn("{task.completed}/{task.total} answers"),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("eval", total=self.total, status="")
        self.t0 = time.perf_counter()
        self.budget.listen(self)
        return self

    def __call__(self) -> None:
        """An answer came: the bar moves; in a log file, a line now and then."""
        backend, cached = self.budget.backend_calls, self.budget.cache_hits
        done = backend + cached
        status = f"{calls_text(backend, cached)} | ETA {format_duration(self.eta(backend, done))}"
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=done, status=status)
        elif time.monotonic() - self.last >= HEARTBEAT_S:
            self.last = time.monotonic()
            self.console.print(
                f"  ... {done}/{self.total} answers | {status}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

    def eta(self, backend: int, done: int) -> float | None:
        """The answers left at the backend's pace (cached answers come at once: they are no
        measure of it)."""
        if backend < MIN_CALLS:
            return None
        return max(0, self.total - done) * (time.perf_counter() - self.t0) / backend

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.budget.listen(None)
        if self.bar is not None:
            self.bar.stop()
