"""The parts of ``evotrainer run`` and ``evotrainer resume`` beyond their options (app.py):
the observers that show a run, the closing lines, ``--data``'s settings and the resume hint."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from evotrainer.cli.common import err, out
from evotrainer.errors import TooManyErrors
from evotrainer.evaluation.paired import difference_text
from evotrainer.run.estimate import calls_text
from evotrainer.run.events import JsonStdout
from evotrainer.tasks.registry import task_default, task_words

if TYPE_CHECKING:
    from evotrainer.coevolution import CoEvolution
    from evotrainer.config import RunConfig
    from evotrainer.engine.outcome import RunResult


def observers(as_json: bool) -> list[Any]:
    # lazy: start-up time
    from evotrainer.run.console import ConsoleProgress

    return [JsonStdout()] if as_json else [ConsoleProgress(err)]


def conclude(co: CoEvolution, result: RunResult, as_json: bool, report: bool) -> None:
    s = result.summary
    if report and co.run_dir is not None:
        try:
            # lazy: start-up time
            from evotrainer.report.build import build_report

            path = build_report(co.run_dir)
            if not as_json:
                err.print(f"report: {path}", markup=False)
        except ImportError:
            pass
    if as_json:
        return

    out.print()
    initial = s["initial_s_val"]
    out.print(
        f"[bold]initial s_val[/] {s_val_text(initial)}  ->  "
        f"[bold]final s_val[/] {s['final_s_val']:.4f}   ({escape(s['validation']['source'])}, "
        f"n={s['validation']['n']})"
    )
    c = s.get("confirmation")
    if c:
        lo, hi = c["difference"]["ci95"]
        returned = "the evolved policy"
        if c["returned"] == c["best_seed"]:  # the baseline: the best of the first population
            seedlike = c.get("returned_is_seed", True)
            returned = "the best seed" if seedlike else "the best first-generation variation"
        out.print(
            f"[bold]on {c['n']} {task_words(co.components.task.name).instances} not used for "
            "selection:[/] returned policy "
            f"{c['winner_s_val'] if c['returned'] == c['winner'] else c['best_seed_s_val']:.4f}"
            f", best seed {c['best_seed_s_val']:.4f} (s_val); evolved winner - best seed "
            f"{difference_text(c['difference']['mean'], lo, hi, c['difference']['n'], 4)} "
            f"({escape(c.get('measure') or 's_val')})"
        )
        out.print(f"returned {returned}: {c['reason']}", markup=False)
    elif s["validation"].get("confirmation_note"):
        out.print(f"not confirmed: {s['validation']['confirmation_note']}", markup=False)
    out.print(closing_counts(s, co.components.cfg.budget.max_calls), markup=False, highlight=False)
    out.print("[bold]best prompt:[/]")
    out.print(result.best.render(), markup=False)
    if co.run_dir is not None:
        out.print(f"[bold]run directory:[/] {escape(str(co.run_dir))}")


def closing_counts(s: dict[str, Any], cap: int | None) -> str:
    """The closing line's counts: generations, outer steps taken (and skipped: never counted
    as taken, as in the report), the backend calls (the one count, across resumes) with the
    cached answers beside them, tokens and wall time."""
    rt = s.get("runtime") or {}
    skipped = s.get("outer_steps_skipped") or 0
    return (
        f"generations {s['generations']}, outer steps {s['outer_steps']}"
        + (f" ({skipped} skipped)" if skipped else "")
        + f", {calls_text(rt.get('backend_calls'), rt.get('cache_hits'))}"
        + (f" of max_calls {cap}" if cap else "")
        + f", tokens {s['prompt_tokens'] + s['completion_tokens']}, wall {s['wall_s']:.0f}s"
    )


def data_values(data: str, cfg: RunConfig) -> dict[str, str]:
    """``run --data FILE``: the validation data, and the real training pool and terminal-reward
    pool where the task draws them from real data by default (``--val-data`` still wins)."""
    values = {"validation.data": data}
    for section, key in (("harness", "real_data"), ("defences", "terminal_data")):
        if task_default(cfg.task.name, section, key) is not None:
            values[f"{section}.{key}"] = data
    return values


def s_val_text(x: float | None) -> str:
    """An s_val for the closing lines; '-' when the run never measured it (a budget that
    stopped it before its seeds were validated)."""
    return f"{x:.4f}" if x is not None and math.isfinite(x) else "- (not measured)"


def interrupted(run_dir: Path | None) -> None:
    """Ctrl-C: say so, and what stands (typer would end the command with a silent exit 130).
    A summary already written is marked interrupted (engine/outcome.py)."""
    # lazy: start-up time
    from evotrainer.engine.outcome import mark_interrupted

    if run_dir is None:
        err.print("interrupted", markup=False)
    elif mark_interrupted(run_dir):
        err.print(
            f"interrupted after the run wrote its results to {run_dir} (summary.json now says "
            f"interrupted); `evotrainer report {run_dir}` builds the report",
            markup=False,
        )
    else:
        err.print(
            f"interrupted: the run did not finish; `evotrainer resume {run_dir}` continues from "
            "its last checkpoint",
            markup=False,
        )
    raise typer.Exit(130)


def resume_hint(exc: Exception, run_dir: Path | None) -> str:
    if isinstance(exc, TooManyErrors) and run_dir and (run_dir / "checkpoints").is_dir():
        return f" Then `evotrainer resume {run_dir}` continues from the last checkpoint."
    return ""
