"""The report's rank-judgement section (``outer.trials: rank``): how each outer step's chosen
reward ranked the policies validated before it (what it was chosen on) and the policies
validated after it (what it never saw), against the base reward on the same policies."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evotrainer.report.data import RunData


def ranking_section(run: RunData, table: Callable[..., str]) -> str:
    ranked = [e for e in run.outer_steps() if e.get("selection") == "rank"]
    if not ranked:
        return (
            '<p class="missing">No outer step judged its variants by rank (outer.trials: rank '
            "is off, or fewer than 5 policies were validated).</p>"
        )
    later: Mapping[Any, Mapping[str, Any]] = {
        p.get("outer_step"): p for p in (run.summary or {}).get("rank_picture") or []
    }
    rows: list[Sequence[Any]] = []
    for e in ranked:
        scores = e.get("rank_scores") or []
        chosen = (e.get("chosen") or {}).get("id")
        ids = [v.get("id") for v in e.get("variants") or []]
        rho = (
            scores[ids.index(chosen)] if chosen in ids and ids.index(chosen) < len(scores) else None
        )
        after = later.get(e.get("outer_step")) or {}
        rows.append(
            [
                e.get("outer_step"),
                e.get("ranked_policies"),
                rho,
                after.get("n_later"),
                after.get("chosen_rho"),
                after.get("base_rho"),
            ]
        )
    note = (
        '<p class="sub">Spearman&#39;s rho between a reward and s_val over validated policies. '
        "&ldquo;Seen&rdquo;: the policies the step judged its variants on; &ldquo;later&rdquo;: "
        "the policies validated after the step, which the choice never saw, ranked by the "
        "chosen reward and by the run&#39;s base reward (its starting weights). A chosen reward "
        "that ranks later policies better than the base reward tracks the meta-objective.</p>"
    )
    head = [
        "outer step",
        "policies seen",
        "rho, chosen (seen)",
        "policies later",
        "rho, chosen (later)",
        "rho, base (later)",
    ]
    return table(head, rows, num=(1, 2, 3, 4, 5)) + note
