"""The rich console observer: a progress bar over generations with best/mean fitness, last s_val,
the harness (L and weights), LLM calls/tokens and ETA; one line per outer step and rollback."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from evotrainer.run import events as ev


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _weights(h: dict[str, Any]) -> str:
    return " ".join(f"{k[:6]}={v:.2f}" for k, v in h["weights"].items() if v > 0)


class ConsoleProgress:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.progress: Progress | None = None
        self.task_id: Any = None

    def _bar(self, total: int) -> None:
        if self.progress is None:
            self.progress = Progress(
                TextColumn("[bold]gen {task.completed}/{task.total}"),
                BarColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
                transient=False,
            )
            self.progress.start()
            self.task_id = self.progress.add_task("gen", total=total, status="")

    def __call__(self, event: ev.Event) -> None:
        d = event.data
        p = self.console.print
        if event.type == ev.RUN_STARTED:
            p(f"[bold]EvoTrainer[/] model: {d['model'].get('model')} ({d['model'].get('backend')})")
        elif event.type in (ev.VALIDATION_SET, ev.WARNING):
            p(("[yellow]warning:[/] " if event.type == ev.WARNING else "") + d["message"])
        elif event.type == ev.GENERATION:
            b = d["budget"]
            status = (
                f"best {_num(d['best_fitness'])} mean {_num(d['mean_fitness'])} | "
                f"s_val {_num(d['last_s_val'])} | "
                f"L {d['harness']['difficulty']:.2f} {_weights(d['harness'])} | "
                f"calls {b['llm_calls']} tok {b['prompt_tokens'] + b['completion_tokens']}"
            )
            if not self.console.is_terminal:  # a log file: one plain line per generation
                p(
                    f"gen {d['generation']}/{d['total_generations']} {status} "
                    f"| {d['elapsed_s']:.0f}s",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )
                return
            self._bar(d["total_generations"])
            assert self.progress is not None
            self.progress.update(self.task_id, completed=d["generation"], status=status)
        elif event.type == ev.OUTER_STEP:
            s = ", ".join(f"{x:.3f}" for x in d["s_vals"])
            p(f"[cyan]outer step {d['outer_step']}[/]: s_val of variants [{s}] -> {d['reason']}")
        elif event.type == ev.ALERT:
            p(f"[bold red]alert ({d['kind']}):[/] {d['message']}")
        elif event.type == ev.CONSTITUTION:
            p(f"[red]rejected[/] policy {d['policy_id']}: {d['detail']}")
        elif event.type == ev.ROLLBACK:
            p(f"[magenta]rollback[/] to {d['to_policy']} (s_val {d['s_val']:.3f})")
        elif event.type == ev.BUDGET_EXHAUSTED:
            p(f"[red]stopped:[/] {d['message']}")
        elif event.type == ev.RUN_FINISHED:
            self.close()

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
