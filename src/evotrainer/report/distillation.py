"""The report's distillation section (issue 31): each adapter's training loss, the pairs kept
and dropped and why, whether the adapter was kept, its lineage, and the returned policy with and
without its adapter on the selection and the confirmation part."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from evotrainer.report.data import RunData
from evotrainer.report.figure import _figure


def loss_plot(run: RunData, out: Path) -> Path | None:
    """The training loss per optimizer step, one line per distillation round."""

    by_round: dict[int, list[tuple[int, float]]] = {}
    for e in run.of("distill_progress"):
        by_round.setdefault(int(e["round"]), []).append((int(e["step"]), float(e["loss"])))
    if not by_round:
        return None
    path = out / "distill_loss.png"
    with _figure(path) as (_, (ax,)):
        for n, points in sorted(by_round.items()):
            points.sort()
            ax.plot([s for s, _ in points], [loss for _, loss in points], label=f"round {n}")
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("training loss (completion tokens)")
        ax.legend()
    return path


def distillation_section(
    run: RunData,
    plot: Path | None,
    img: Callable[[Path | None, str], str],
    table: Callable[..., str],
    esc: Callable[[Any], str],
) -> str:
    records = (run.summary or {}).get("distillations") or [e for e in run.of("distill_finished")]
    if not records:
        return '<p class="missing">No distillation (distill.enabled is off, or not yet due).</p>'
    rounds = []
    for r in records:
        t = r.get("training") or {}
        v = r.get("validation") or {}
        losses = t.get("losses") or []
        rounds.append(
            [
                r.get("round"),
                r.get("generation"),
                (r.get("adapter") or "–")[:12],
                (r.get("pairs") or {}).get("pairs"),
                (r.get("pairs") or {}).get("references"),
                losses[0] if losses else None,
                losses[-1] if losses else None,
                t.get("seconds"),
                (v.get("with_adapter") or {}).get("s_val"),
                (v.get("without") or {}).get("s_val"),
                "trial" if r.get("trial") else "kept" if r.get("kept") else "set aside",
            ]
        )
    head = [
        "round",
        "after generation",
        "adapter",
        "pairs",
        "of them human",
        "first loss",
        "last loss",
        "training s",
        "s_val with",
        "s_val without",
        "decision",
    ]
    parts = [img(plot, "training loss"), table(head, rounds, num=(1, 3, 4, 5, 6, 7, 8, 9))]
    parts += [f"<p>Round {esc(r.get('round'))}: {esc(r.get('why'))}</p>" for r in records]
    parts.append(_pairs(records[-1], table))
    parts.append(_effect((run.summary or {}).get("adapter_effect"), table, esc))
    return "".join(parts)


def _pairs(record: dict[str, Any], table: Callable[..., str]) -> str:
    pairs = record.get("pairs") or {}
    rows = [
        [p.get("instance"), p.get("policy"), p.get("reward"), p.get("why")]
        for p in [*(pairs.get("kept") or []), *(pairs.get("dropped") or [])]
    ]
    if not rows:
        return ""
    notes = "".join(f"<li>{n}</li>" for n in pairs.get("notes") or [])
    return (
        f"<h3>Pairs of round {record.get('round')}: the best-rewarded answer per training "
        "instance, kept when the harness ranks it high</h3>"
        + table(["instance", "policy", "reward", "fate"], rows, num=(2,))
        + (f"<ul>{notes}</ul>" if notes else "")
    )


def _effect(effect: dict[str, Any] | None, table: Callable[..., str], esc: Callable) -> str:
    if not effect:
        return ""
    rows = [
        [part, (effect.get(part) or {}).get("with"), (effect.get(part) or {}).get("without")]
        for part in ("selection", "confirmation")
        if effect.get(part)
    ]
    return (
        f"<h3>The returned policy with and without its adapter</h3><p>Policy "
        f"{esc(effect.get('policy'))} carries adapter {esc(str(effect.get('adapter'))[:12])}; "
        f"{esc(effect.get('base'))} is the same text on the base model's weights.</p>"
        + table(["validation part", "s_val with the adapter", "s_val without"], rows, num=(1, 2))
    )
