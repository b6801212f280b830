"""Score against calls: what the run had found for what it had spent. s_val of every validated
policy, the best validated so far (a step line that never falls) and the best training fitness
of each generation, against the LLM calls the backend had answered at that point (cache hits are
free: ``backend_calls``). Runs recorded before validation events carried ``backend_calls`` are
drawn against all calls (``llm_calls``: cache hits included), and the axis says so."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotrainer.report.data import RunData
from evotrainer.report.figure import COLORS, _figure
from evotrainer.run import events as ev


@dataclass
class ScoreVsCalls:
    axis: str  # "backend calls" or "LLM calls (cache hits included)"
    validated: list[tuple[int, float]] = field(default_factory=list)  # every validation
    best_s_val: list[tuple[int, float]] = field(default_factory=list)  # each new best
    fitness: list[tuple[int, float]] = field(default_factory=list)  # best fitness per generation

    @property
    def empty(self) -> bool:
        return not (self.validated or self.fitness)


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def score_vs_calls(run: RunData) -> ScoreVsCalls:
    vals = [e for e in run.of(ev.VALIDATION) if _num(e.get("s_val")) is not None]
    gens = [e for e in run.generations() if isinstance(e.get("budget"), dict)]
    backend = all(_num(e.get("backend_calls")) is not None for e in vals) and all(
        _num(e["budget"].get("backend_calls")) is not None for e in gens
    )
    key = "backend_calls" if backend else "llm_calls"
    out = ScoreVsCalls("backend calls" if backend else "LLM calls (cache hits included)")
    best = None
    for e in vals:
        calls = _num(e.get(key))
        if calls is None or e.get("partial"):  # a raced-out estimate is not a validation
            continue
        s = float(e["s_val"])
        out.validated.append((int(calls), s))
        if best is None or s > best:
            best = s
            out.best_s_val.append((int(calls), s))
    for e in gens:
        calls, fit = _num(e["budget"].get(key)), _num(e.get("best_fitness"))
        if calls is not None and fit is not None:
            out.fitness.append((int(calls), fit))
    return out


def calls_plot(run: RunData, out: Path) -> Path | None:

    s = score_vs_calls(run)
    if s.empty:
        return None
    path = out / "calls.png"
    with _figure(path, nrows=2, height=4.4) as (_fig, (ax_s, ax_f)):
        if s.validated:
            ax_s.scatter(
                [c for c, _ in s.validated],
                [v for _, v in s.validated],
                s=14,
                color="#9ca3af",
                label="a validated policy",
                zorder=2,
            )
        if s.best_s_val:
            xs = [c for c, _ in s.best_s_val]
            ys = [v for _, v in s.best_s_val]
            last = max([xs[-1], *(c for c, _ in s.validated), *(c for c, _ in s.fitness)])
            ax_s.step(
                [*xs, last],
                [*ys, ys[-1]],
                where="post",
                color=COLORS[0],
                lw=1.8,
                label="best validated so far",
                zorder=3,
            )
            ax_s.scatter(xs, ys, s=22, color=COLORS[0], zorder=4)
        ax_s.set_ylabel("s_val (validation)")
        ax_s.set_title("What the run had found for what it had spent")
        if s.validated:
            ax_s.legend(loc="lower right")
        if s.fitness:
            ax_f.plot(
                [c for c, _ in s.fitness],
                [v for _, v in s.fitness],
                marker="o",
                ms=3,
                color=COLORS[1],
                label="best fitness of the generation",
            )
            ax_f.legend(loc="lower right")
        ax_f.set_ylabel("fitness (training)")
        ax_f.set_xlabel(s.axis)
    return path


def calls_section(run: RunData, plot: Path | None, img: Any, esc: Any) -> str:
    s = score_vs_calls(run)
    if s.empty:
        return '<p class="missing">No validation or generation yet.</p>'
    note = (
        f"x: {esc(s.axis)} when the score was known. Top: s_val of every policy validated (grey) "
        "and the best validated so far (blue steps); bottom: the best training fitness of each "
        "generation. Raced-out estimates are left out."
    )
    if s.best_s_val:
        (c0, v0), (c1, v1) = s.best_s_val[0], s.best_s_val[-1]
        note += (
            f" The best s_val went from {v0:.3f} (at {c0:,} calls) to {v1:.3f} (at {c1:,} calls)."
        )
    return img(plot, "score against calls") + f'<p class="sub">{note}</p>'
