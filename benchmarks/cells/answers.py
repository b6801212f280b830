"""What the answers behind a table are (issue 46): for a method's returned policies over the
test meetings, the mean share of distinct word 4-grams (human minutes 0.99), the loop share
(answers under 0.5), the mean words per answer, and ROUGE-L on the answer with its repeated
sentences dropped (``rougeL_dedup``: what the loop costs in ROUGE-L). benchmarks/answers.py
prints them for a results directory (and backfills ``rougeL_dedup`` into older ones)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evotrainer.policy.postprocess import drop_repeats
from evotrainer.policy.repetition import degeneracy
from evotrainer.types import Instance

DEDUP_KEY = "rougeL_dedup"


def rouge_l_dedup(task: Any, inst: Instance, output: str) -> float | None:
    """ROUGE-L of ``output`` with its repeated sentences and lines dropped."""
    text = drop_repeats(output or "")
    return task.validation_metric().score(inst, text, task.parse(text)).get("rougeL")


def columns(scores: dict, meetings: Sequence[tuple[str, str]], pids: Sequence[str]) -> dict:
    """The answer columns of the policies ``pids`` over ``meetings`` (set name, meeting id)."""
    rows = [scores.get(name, {}).get(mid, {}).get(pid) for pid in pids for name, mid in meetings]
    rows = [r for r in rows if isinstance(r, dict)]
    deg = degeneracy("" if r.get("error") else str(r.get("output") or "") for r in rows)
    dedup = [float(r[DEDUP_KEY]) for r in rows if r.get(DEDUP_KEY) is not None]
    return {
        **deg.to_json(),
        DEDUP_KEY: sum(dedup) / len(dedup) if dedup else None,
        "n_dedup": len(dedup),
    }
