"""The rich console observer: the run's estimated calls first, then a progress bar over
generations with best/mean fitness, last s_val, the harness (L, real share and weights), LLM
calls (of those expected)/tokens and the ETA at the measured pace (a pace line once known); one
line per outer step, harness trial, validation round and rollback, and the confirmation at the
end.

Everything that comes from the run (model answers quoted in a verdict, file names, messages,
policy ids) is escaped before it reaches rich, so text such as ``[/b]`` prints as it is, and every
line goes through ``terminal.printable``, so control sequences in it are written out, never
obeyed."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from evotrainer.config.base import DEFAULT_TASK
from evotrainer.evaluation.paired import difference_text
from evotrainer.run import events as ev
from evotrainer.run.estimate import format_duration
from evotrainer.tasks.registry import task_words
from evotrainer.terminal import SafeConsole, printable


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _weights(h: dict[str, Any]) -> str:
    return " ".join(f"{k[:6]}={v:.2f}" for k, v in h["weights"].items() if v > 0)


def _harness(h: dict[str, Any]) -> str:
    real = h.get("real_share") or 0.0
    return f"L {h['difficulty']:.2f} real {real:.2f} {_weights(h)}"


def _threads(n: Any) -> str:
    return f"{n} thread" + ("" if n == 1 else "s")


def _e(value: Any) -> str:
    return escape(printable(str(value)))


class ConsoleProgress:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or SafeConsole(stderr=True)
        self.progress: Progress | None = None
        self.task_id: Any = None
        self.noun = "meetings"  # what the task's instances are called (set at run_started)
        self.paced = False  # the pace line was printed

    def _bar(self, total: int) -> None:
        if self.progress is None:
            self.progress = Progress(
                TextColumn("[bold]gen {task.completed}/{task.total}"),
                BarColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self.progress.start()
            self.task_id = self.progress.add_task("gen", total=total, status="")

    def __call__(self, event: ev.Event) -> None:
        d = event.data
        p = self._print
        if event.type == ev.RUN_STARTED:
            self._run_started(d)
        elif event.type == ev.THREADS:
            self._line(
                f"llama.cpp threads: {d['previous']} -> {d['threads']} from generation "
                f"{d['generation']} (decided again from the cores free now)"
            )
        elif event.type == ev.ESTIMATE:
            self._line(d["message"])
        elif event.type in (ev.VALIDATION_SET, ev.TRAINING_SET, ev.WARNING, ev.OUTER_STEP_SKIPPED):
            p(("[yellow]warning:[/] " if event.type == ev.WARNING else "") + _e(d["message"]))
        elif event.type == ev.GENERATION:
            self._generation(d)
        elif event.type == ev.VALIDATION_STARTED:
            how = f"racing: a few {self.noun} first" if d.get("race") else f"all {self.noun}"
            self._line(
                f"validating {d['policies']} {d['role']} policies on {d['instances']} "
                f"{self.noun} ({how})"
            )
        elif event.type == ev.VALIDATION:
            part = f" (estimate from {d['n']} {self.noun}, raced out)" if d.get("partial") else ""
            self._line(f"  {d['role']} {d['policy_id']}: s_val {d['s_val']:.3f}{part}")
        elif event.type in (ev.DISTILL_STARTED, ev.DISTILL_PROGRESS, ev.DISTILL_FINISHED):
            self._distill(event.type, d)
        elif event.type == ev.TRIAL_STARTED:
            self._line(
                f"outer step {d['outer_step']}: trial {d['trial']}/{d['trials']} of harness "
                f"{_harness(d['harness'])}"
            )
        elif event.type == ev.TRIAL_FINISHED:
            self._line(
                f"  trial {d['trial']}/{d['trials']} done: best fitness "
                f"{_num(d['best_fitness'])}, calls {d['budget']['llm_calls']}"
            )
        elif event.type == ev.CONFIRMATION:
            self._confirmation(d)
        elif event.type == ev.OUTER_STEP:
            s = ", ".join(f"{x:.3f}" if x is not None else "-" for x in d["s_vals"])
            p(
                f"[cyan]outer step {d['outer_step']}[/]: s_val of variants {_e(f'[{s}]')} -> "
                f"{_e(d['reason'])}"
            )
        elif event.type == ev.ALERT:
            p(f"[bold red]alert ({_e(d['kind'])}):[/] {_e(d['message'])}")
        elif event.type == ev.CONSTITUTION:
            p(f"[red]rejected[/] policy {_e(d['policy_id'])}: {_e(d['detail'])}")
        elif event.type == ev.ROLLBACK:
            p(f"[magenta]rollback[/] to {_e(d['to_policy'])} (s_val {d['s_val']:.3f})")
        elif event.type == ev.BUDGET_EXHAUSTED:
            p(f"[red]stopped:[/] {_e(d['message'])}")
        elif event.type == ev.RUN_FAILED:
            self.close()
            p(f"[bold red]run failed:[/] {_e(d['message'])}")
        elif event.type == ev.OBSERVER_DETACHED:
            p(f"[yellow]warning:[/] observer {_e(d['observer'])} detached: {_e(d['error'])}")
        elif event.type in (ev.RUN_FINISHED, ev.RUN_INTERRUPTED):
            self.close()  # the command line says it was interrupted, once the bar is gone

    def _run_started(self, d: dict[str, Any]) -> None:
        """The model (and the operator model, if another): the task's noun noted."""
        task = (d.get("config") or {}).get("task") or {}
        self.noun = task_words(str(task.get("name", DEFAULT_TASK))).instances
        m = d["model"]
        threads = f", {_threads(m['threads'])}" if m.get("threads") else ""
        self._print(
            f"[bold]EvoTrainer[/] model: {_e(m.get('model'))} ({_e(m.get('backend'))}{threads})"
        )
        teacher = d.get("operator_model")
        if teacher:
            self._line(
                f"operator model (mutation, reflection, paraphrase): {teacher.get('model')} "
                f"({teacher.get('backend')})"
            )

    def _generation(self, d: dict[str, Any]) -> None:
        """The progress bar's status (a plain line per generation in a log file)."""
        b = d["budget"]
        expected = d.get("expected_calls")
        status = (
            f"best {_num(d['best_fitness'])} mean {_num(d['mean_fitness'])} | "
            f"s_val {_num(d['last_s_val'])} | "
            f"{_harness(d['harness'])} | "
            f"calls {b['llm_calls']}{f'/~{expected}' if expected else ''} "
            f"tok {b['prompt_tokens'] + b['completion_tokens']} | "
            f"ETA {format_duration(d.get('eta_s'))}"
        )
        self._pace(d)
        if not self.console.is_terminal:  # a log file: one plain line per generation
            self._print(
                f"gen {d['generation']}/{d['total_generations']} {status} | {d['elapsed_s']:.0f}s",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            return
        self._bar(d["total_generations"])
        assert self.progress is not None
        self.progress.update(self.task_id, completed=d["generation"], status=_e(status))

    def _distill(self, type_: str, d: dict[str, Any]) -> None:
        """A distillation round's start, its training's progress (about ten lines) and end."""
        if type_ == ev.DISTILL_STARTED:
            refs = f" + {d['references']} human references" if d.get("references") else ""
            self._line(
                f"distillation {d['round']}: {d['from_policies']} answers kept of "
                f"{d['from_policies'] + len(d.get('dropped') or [])} (reward >= "
                f"{_num(d.get('threshold'))}){refs}; training a LoRA adapter"
            )
        elif type_ == ev.DISTILL_PROGRESS:
            step, steps = d["step"], d["steps"]
            if step == steps or step % max(1, steps // 10) == 0:  # about ten lines a training
                self._line(
                    f"  adapter step {step}/{steps}: loss {d['loss']:.3f}, "
                    f"{d['tokens_per_s']:.0f} tokens/s, {d['eta_s']:.0f}s left"
                )
        else:
            what = "kept" if d["kept"] else "set aside"
            self._line(f"distillation {d['round']}: adapter {what}: {_e(d['why'])}")

    def _confirmation(self, d: dict[str, Any]) -> None:
        diff = d["difference"]
        lo, hi = diff["ci95"]
        self._line(
            f"confirmation on {diff['n']} held-out {self.noun}: winner {d['winner_s_val']:.3f} "
            f"vs best seed {d['best_seed_s_val']:.3f}, paired difference "
            f"{difference_text(diff['mean'], lo, hi, diff['n'])} -> {d['reason']}"
        )

    def _pace(self, d: dict[str, Any]) -> None:
        """Once the backend's pace is measured (generation events carry it): one line with the
        seconds per call and the time the run is expected to take."""
        per_call = d.get("s_per_call")
        if self.paced or per_call is None or d.get("eta_s") is None:
            return
        self.paced = True
        calls = d["budget"]["llm_calls"]
        self._line(
            f"pace: {per_call:.2f} s per LLM call so far ({calls} calls): about "
            f"{format_duration(d['eta_s'])} left for the ~{d['expected_calls']} calls expected"
        )

    def _line(self, text: str) -> None:
        """A plain line (no markup: run text prints as it is)."""
        self._print(text, markup=False, highlight=False, soft_wrap=True)

    def _print(self, text: str, **kwargs: Any) -> None:
        self.console.print(printable(text), **kwargs)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
