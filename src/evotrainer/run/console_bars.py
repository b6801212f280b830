"""The console's two bars on a terminal (run/console.py): the generations, with the run's
status (fitness, the best validated s_val, the backend calls and the ETA), and the stretch of
work under way (the first population, a validation round, a trial ...), with the calls answered
of those it may make. rich redraws them on its own (the elapsed time moves even while one long
call is answered) and prints the console's lines above them."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class Bars:
    def __init__(self, console: Console) -> None:
        self.live = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            TextColumn("{task.fields[count]}"),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.live.start()
        # the generations first, the work under way below it (its total: once known)
        self.run: TaskID = self.live.add_task("generations", total=None, count="", status="")
        self.work: TaskID | None = None
        self.work_total: int | None = None

    def generation(self, done: int, total: int, status: str) -> None:
        """The generations bar: ``done`` of ``total``, the run's status beside it."""
        self.live.update(
            self.run, completed=done, total=total, count=f"{done}/{total}", status=status
        )

    def phase(self, name: str, calls: int | None) -> None:
        """A new stretch of work: the second bar starts again (without ``calls``, it only
        counts)."""
        self.work_total = calls
        if self.work is None:
            self.work = self.live.add_task(name, total=calls, count="", status="")
        self.live.reset(self.work, total=calls, description=name, count="", status="")

    def progress(self, answered: int, status: str) -> None:
        """Calls answered in the stretch; ``status``: the run's calls and ETA."""
        if self.work is None:
            return
        total = self.work_total
        count = f"{answered}/{total} calls" if total else f"{answered} calls"
        self.live.update(self.work, completed=answered, count=count, status=status)

    def close(self) -> None:
        self.live.stop()
