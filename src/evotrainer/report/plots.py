"""The report's plots: matplotlib (Agg backend, imported lazily), one PNG per function.

Every function takes the loaded run and the output folder and returns the PNG's path, or None
when the run has no data for that plot yet (e.g. no outer step so far).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evotrainer.report.data import RunData, SValPoint
from evotrainer.report.deltas import deltas_plot
from evotrainer.report.distillation import loss_plot
from evotrainer.report.figure import COLORS, _figure
from evotrainer.report.lineage import lineage_plot
from evotrainer.report.meta import front_plot
from evotrainer.report.progress import calls_plot
from evotrainer.report.readability import readability_plot


def _outer_generations(run: RunData) -> list[int]:
    return [int(e.get("generation", 0)) for e in run.outer_steps()]


def _mark_outer_steps(ax: Any, run: RunData) -> None:
    for i, g in enumerate(_outer_generations(run)):
        ax.axvline(g, color="#9ca3af", lw=0.8, ls=":", label="outer step" if i == 0 else None)


def fitness_plot(run: RunData, out: Path) -> Path | None:
    gens = run.generations()
    if not gens:
        return None
    path = out / "fitness.png"
    x = [int(e["generation"]) for e in gens]
    with _figure(path) as (_fig, (ax,)):
        ax.plot(x, [e.get("best_fitness") for e in gens], marker="o", ms=3, label="best")
        ax.plot(x, [e.get("mean_fitness") for e in gens], marker="o", ms=3, label="mean")
        _mark_outer_steps(ax, run)
        ax.set_xlabel("generation")
        ax.set_ylabel("fitness (training reward)")
        ax.set_title("Inner loop: fitness per generation")
        ax.legend(loc="best")
    return path


def s_val_plot(run: RunData, out: Path) -> Path | None:
    main, trials = run.s_val_track()
    if not main and not trials:
        return None
    path = out / "s_val.png"
    with _figure(path) as (_fig, (ax,)):
        if main:
            ax.plot(
                [p.generation for p in main],
                [p.s_val for p in main],
                marker="o",
                ms=4,
                color=COLORS[0],
                label="incumbent best (archived)",
            )
        for kind, marker, color, label in (
            ("trial", "x", "#6b7280", "harness variant trials (archived)"),
            ("seed", "D", "#0e7490", "other seed policies (archived)"),
            ("candidate", ".", "#a16207", "children validated after their generation"),
        ):
            pts = [p for p in trials if p.kind == kind]
            if pts:
                ax.scatter(
                    [p.generation for p in pts],
                    [p.s_val for p in pts],
                    marker=marker,
                    s=22,
                    color=color,
                    label=label,
                    zorder=3,
                )
        best = _archive_best(run, main + trials)
        if best is not None:
            ax.scatter(
                [best.generation],
                [best.s_val],
                marker="*",
                s=180,
                color="#eab308",
                edgecolor="#854d0e",
                zorder=4,
                label="best archived pair",
            )
        at = {p.outer_step: p.generation for p in main if p.kind == "outer"}
        for i, rb in enumerate(run.rollbacks()):
            g = at.get(int(rb.get("outer_step", -1)))
            if g is None:
                continue
            ax.axvline(g, color=COLORS[3], ls="--", lw=1, label="rollback" if i == 0 else None)
            if rb.get("s_val") is not None:
                ax.annotate(
                    f"rollback to {float(rb['s_val']):.3f}",
                    (g, float(rb["s_val"])),
                    textcoords="offset points",
                    xytext=(4, 6),
                    color=COLORS[3],
                    fontsize=8,
                )
        ax.set_xlabel("generation")
        ax.set_ylabel("s_val (validation)")
        ax.set_title("Outer loop: s_val of the best policy")
        ax.legend(loc="best")
    return path


def _archive_best(run: RunData, points: list[SValPoint]) -> SValPoint | None:
    if not points:
        return None
    if run.archive:
        scored = [e for e in run.archive if isinstance(e.get("s_val"), int | float)]
        if scored:
            top = max(scored, key=lambda e: e["s_val"])
            pid = (top.get("policy") or {}).get("id")
            matches = [p for p in points if p.policy_id == pid]
            if matches:
                return max(matches, key=lambda p: p.s_val)
    return max(points, key=lambda p: p.s_val)


def _weight_names(gens: list[dict[str, Any]]) -> list[str]:
    comps: list[str] = []
    for e in gens:
        for k in e["harness"].get("weights") or {}:
            if k not in comps:
                comps.append(k)
    return comps


def harness_panels(run: RunData) -> list[str]:
    """The harness plot's panels, in order: one per reward weight (so no weight line hides
    under another), then the difficulty L and the real share of the training batch."""
    gens = [e for e in run.generations() if isinstance(e.get("harness"), dict)]
    return [*_weight_names(gens), "difficulty L", "real share"] if gens else []


def harness_plot(run: RunData, out: Path) -> Path | None:
    gens = [e for e in run.generations() if isinstance(e.get("harness"), dict)]
    panels = harness_panels(run)
    if not panels:
        return None
    path = out / "harness.png"
    x = [int(e["generation"]) for e in gens]
    comps = _weight_names(gens)
    series: dict[str, list[float]] = {
        k: [float((e["harness"].get("weights") or {}).get(k, 0.0) or 0.0) for e in gens]
        for k in comps
    }
    series["difficulty L"] = [float(e["harness"].get("difficulty", 0.0) or 0.0) for e in gens]
    series["real share"] = [float(e["harness"].get("real_share") or 0.0) for e in gens]
    top = max([0.05, *(v for k in comps for v in series[k])])
    ncols = 2 if len(panels) > 3 else 1
    nrows = -(-len(panels) // ncols)
    with _figure(path, nrows=nrows, ncols=ncols, height=1.25 * nrows + 0.6) as (_fig, axes):
        for i, (ax, name) in enumerate(zip(axes, panels, strict=False)):
            weight = name in series and name in comps
            color = COLORS[i % len(COLORS)] if weight else "#374151"
            ax.step(x, series[name], where="post", marker="o", ms=2.5, lw=1.4, color=color)
            ax.set_ylim(-0.02, top * 1.08 + 0.01 if weight else 1.04)
            ax.set_title(("weight: " if weight else "") + name, loc="left", fontsize=9)
            _mark_outer_steps(ax, run)
        for i in range(len(panels), len(axes)):
            axes[i].set_visible(False)
            axes[i - ncols].xaxis.set_tick_params(labelbottom=True)  # the column's lowest
        for col in range(ncols):
            lowest = max(i for i in range(col, len(panels), ncols))
            axes[lowest].set_xlabel("generation")
    return path


def diversity_plot(run: RunData, out: Path) -> Path | None:
    gens = [e for e in run.generations() if e.get("diversity") is not None]
    if not gens:
        return None
    path = out / "diversity.png"
    with _figure(path, height=2.8) as (_fig, (ax,)):
        ax.plot(
            [int(e["generation"]) for e in gens],
            [float(e["diversity"]) for e in gens],
            marker="o",
            ms=3,
            color=COLORS[2],
        )
        _mark_outer_steps(ax, run)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("generation")
        ax.set_ylabel("mean pairwise distance")
        ax.set_title("Population diversity (1 - Jaccard of word sets)")
    return path


OP_FIELDS = ("tried", "produced", "rejected", "improved")


def operator_stats(run: RunData) -> dict[str, dict[str, int]]:
    gens = run.generations()
    stats = (gens[-1].get("operator_stats") if gens else None) or {}
    return {
        name: {f: int(s.get(f, 0) or 0) for f in OP_FIELDS}
        for name, s in sorted(stats.items())
        if isinstance(s, dict)
    }


def operators_plot(run: RunData, out: Path) -> Path | None:
    stats = operator_stats(run)
    if not stats:
        return None
    path = out / "operators.png"
    names = list(stats)
    height = max(2.6, 0.5 * len(names) + 1.2)
    with _figure(path, height=height) as (_fig, (ax,)):
        bar = 0.2
        for i, f in enumerate(OP_FIELDS):
            ys = [n + (i - 1.5) * bar for n in range(len(names))]
            ax.barh(ys, [stats[n][f] for n in names], height=bar, label=f, color=COLORS[i])
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names)
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("count (cumulative)")
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=len(OP_FIELDS))
    return path


def all_plots(run: RunData, out: Path) -> dict[str, Path]:
    """Every plot that has data: name -> PNG path."""
    plots = {
        "fitness": fitness_plot,
        "s_val": s_val_plot,
        "harness": harness_plot,
        "diversity": diversity_plot,
        "readability": readability_plot,
        "operators": operators_plot,
        "front": front_plot,
        "distill_loss": loss_plot,
        "calls": calls_plot,
        "lineage": lineage_plot,
        "deltas": deltas_plot,
    }
    made = {}
    for name, fn in plots.items():
        try:
            path = fn(run, out)
        except Exception as exc:  # noqa: BLE001 - malformed run data: no plot, say so
            run.notes.append(f"could not draw the {name} plot ({type(exc).__name__}: {exc})")
            continue
        if path is not None:
            made[name] = path
    return made
