"""Readable answers: is the run producing minutes or repetition loops? (docs/readability.md)

From the generation events (``answers``: the training answers of the generation's best policy
and of its whole population) and the validation events (``answers`` of each validated policy):
the share of distinct word 4-grams (human minutes 0.99) and the loop share (answers under 0.5),
over generations; the best policy's decoding and loop-cut genes; the confirmation's loop shares.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from evotrainer.report.data import RunData
from evotrainer.report.figure import COLORS, _figure


def _answers(e: dict[str, Any], who: str | None = None) -> dict[str, Any] | None:
    a = e.get("answers")
    if isinstance(a, dict) and who is not None:
        a = a.get(who)
    if isinstance(a, dict) and all(
        isinstance(a.get(k), int | float) for k in ("distinct4", "loop_share")
    ):
        return a
    return None


def readability_plot(run: RunData, out: Path) -> Path | None:
    gens = [
        (int(e["generation"]), a) for e in run.generations() if (a := _answers(e, "population"))
    ]
    vals = [
        (int(e.get("generation") or 0), a)
        for e in run.of("validation")
        if not e.get("partial") and (a := _answers(e))
    ]
    if not gens and not vals:
        return None
    path = out / "readability.png"
    with _figure(path, height=2.8) as (_fig, (ax,)):
        if gens:
            xs = [g for g, _ in gens]
            ax.plot(
                xs,
                [a["loop_share"] for _, a in gens],
                marker="o",
                ms=3,
                color=COLORS[3],
                label="loop share, population (training)",
            )
            ax.plot(
                xs,
                [a["distinct4"] for _, a in gens],
                marker="o",
                ms=3,
                color=COLORS[0],
                label="distinct 4-grams, population (training)",
            )
        if vals:
            ax.scatter(
                [g for g, _ in vals],
                [a["distinct4"] for _, a in vals],
                s=12,
                color=COLORS[2],
                label="distinct 4-grams, validated policy",
            )
        ax.axhline(0.5, color="#9ca3af", lw=0.8, ls=":")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("generation")
        ax.set_ylabel("share")
        ax.set_title("Answers: distinct 4-grams (human minutes 0.99) and loops (< 0.5)")
        ax.legend(loc="lower left", fontsize=7)
    return path


def readability_section(
    run: RunData,
    plot: Path | None,
    img: Callable[[Path | None, str], str],
    table: Callable[..., str],
    esc: Callable[[Any], str],
) -> str:
    parts = []
    last = next((a for e in reversed(run.generations()) if (a := _answers(e, "best"))), None)
    if last is not None:
        parts.append(
            f"<p>The last generation's best policy on its training batch: "
            f"<strong>{last['distinct4']:.2f}</strong> distinct word 4-grams, "
            f"<strong>{last['loop_share']:.0%}</strong> of its answers repetition loops, "
            f"{last.get('words', 0):.0f} words per answer.</p>"
        )
    c = (run.summary or {}).get("confirmation") or run.last("confirmation") or {}
    if "winner_loop_share" in c:
        parts.append(
            f"<p>On the confirmation meetings, loop share: selection winner "
            f"<strong>{c['winner_loop_share']:.0%}</strong>, best seed "
            f"<strong>{c.get('best_seed_loop_share', 0.0):.0%}</strong> "
            "(a loopier winner is not returned: <code>validation.refuse_loopier</code>).</p>"
        )
    p = run.policy or {}
    rows = [[k, str(v)] for k, v in (p.get("decoding") or {}).items()]
    rows += [[f"loop cut: {k}", str(v)] for k, v in (p.get("postprocess") or {}).items()]
    if rows:
        parts.append("<h3>The best policy's decoding and loop-cut genes</h3>")
        parts.append(table(["gene", "value"], rows))
    elif p:
        parts.append('<p class="sub">The best policy decodes with the defaults, no loop cut.</p>')
    parts.append(img(plot, "readability"))
    if not parts[:-1] and plot is None:
        return '<p class="missing">No answers measured yet.</p>'
    return "".join(parts)
