"""Per-meeting differences: the returned policy's s_val on each validation meeting minus the
best seed's (summary.json ``per_meeting``: the validation rows of both, on the selection part
and on the held-out confirmation part). Where it wins and where it loses, meeting by meeting:
a mean can hide one meeting lost badly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evotrainer.report.data import RunData
from evotrainer.report.figure import _figure

PART_COLORS = {"selection": "#2563eb", "confirmation": "#f97316"}


def per_meeting(run: RunData) -> dict[str, Any] | None:
    pm = (run.summary or {}).get("per_meeting")
    if not isinstance(pm, dict) or not isinstance(pm.get("rows"), list):
        return None
    rows = [
        r
        for r in pm["rows"]
        if isinstance(r, dict)
        and all(isinstance(r.get(k), int | float) for k in ("returned", "best_seed", "delta"))
    ]
    return {**pm, "rows": rows} if rows else None


def deltas_plot(run: RunData, out: Path) -> Path | None:

    pm = per_meeting(run)
    if pm is None or pm.get("returned") == pm.get("best_seed"):  # nothing but zeros
        return None
    rows = pm["rows"]
    path = out / "deltas.png"
    height = max(2.6, 0.22 * len(rows) + 1.2)
    with _figure(path, height=min(height, 12.0), integer_x=False) as (_fig, (ax,)):
        ys = list(range(len(rows)))
        ax.barh(
            ys,
            [float(r["delta"]) for r in rows],
            color=[PART_COLORS.get(str(r.get("part")), "#6b7280") for r in rows],
            height=0.7,
        )
        ax.axvline(0, color="#111827", lw=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels([f"{r.get('instance_id')} ({r.get('part')})" for r in rows])
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("s_val difference on the meeting (returned - best seed)")
        # lazy: start-up time (matplotlib)
        from matplotlib.patches import Patch

        parts = [p for p in PART_COLORS if any(r.get("part") == p for r in rows)]
        ax.legend(
            handles=[Patch(color=PART_COLORS[p], label=f"{p} meetings") for p in parts],
            loc="lower right",
        )
    return path


def deltas_section(run: RunData, plot: Path | None, img: Any, table: Any, esc: Any) -> str:
    pm = per_meeting(run)
    if pm is None:
        return '<p class="missing">Per-meeting scores are written when the run finishes.</p>'
    rows = pm["rows"]
    same = pm.get("returned") == pm.get("best_seed")
    parts = []
    for part in ("selection", "confirmation"):
        mine = [float(r["delta"]) for r in rows if r.get("part") == part]
        if mine:
            wins = sum(d > 0 for d in mine)
            losses = sum(d < 0 for d in mine)
            parts.append(
                f"{part}: mean {sum(mine) / len(mine):+.3f} over {len(mine)} "
                f"({wins} better, {losses} worse)"
            )
    head = (
        "The returned policy is the best seed itself: every difference is 0."
        if same
        else f"Returned policy {pm.get('returned')} against the best seed {pm.get('best_seed')}; "
        + "; ".join(parts)
        + "."
    )
    body = [
        [r.get("instance_id"), r.get("part"), r["returned"], r["best_seed"], r["delta"]]
        for r in rows
    ]
    return (
        ("" if same else img(plot, "per-meeting differences"))
        + f'<p class="sub">{esc(head)}</p>'
        + table(["meeting", "part", "returned", "best seed", "difference"], body, num=(2, 3, 4))
    )
