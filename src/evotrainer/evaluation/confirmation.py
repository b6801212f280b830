"""Confirmation: the selection winner against the best seed on meetings selection never saw.

The run chooses its best policy on the selection part of the validation data, so that choice's
selection score is optimistic (the maximum of noisy estimates). At the end both the winner and
the best hand-written seed are validated on the held-out confirmation part; their paired
difference, with a 95% bootstrap interval, is the number the run reports, and ``return_rule``
decides what it returns:

- ``better_mean``: the winner if its mean paired difference is > 0, else the best seed;
- ``ci_above_zero``: the winner only if the interval's lower end is > 0;
- ``selection``: the winner regardless (the confirmation is then only reported).

A winner whose answers on the confirmation meetings loop more often than the seed's (its
loop share: answers with distinct word 4-grams under half, policy/repetition.py) is refused
by both rules that confirm (``refuse_loopier``): no gain in score pays for minutes nobody
would keep.

What is compared per meeting is s_val, or what the run selected on: ``row_scores`` (the driver
passes the meta score per meeting: quality, conciseness and people's predicted preference; see
evaluation/meta_judge.py), named by ``measure``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evotrainer.evaluation.paired import PairedDifference, paired_difference
from evotrainer.evaluation.validation import Validator
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.repetition import is_loop
from evotrainer.types import ValidationResult

RowScores = Callable[[str, ValidationResult], dict[str, float]]  # policy id, result -> per meeting


@dataclass(frozen=True)
class Confirmation:
    winner: str  # policy id of the selection winner
    best_seed: str
    winner_s_val: float
    seed_s_val: float
    difference: PairedDifference  # winner - best seed, per confirmation instance
    rule: str
    returned: str  # policy id the run returns
    reason: str
    ids: tuple[str, ...] = ()
    measure: str = "s_val"  # what the paired difference is of
    winner_loop_share: float = 0.0  # share of the winner's confirmation answers that loop
    seed_loop_share: float = 0.0
    # the ids of the run's seeds: ``best_seed`` is the best starting point validated (it may be
    # a variation of a seed the first generation made), so "the returned policy is a seed" is
    # asked of these, not of ``best_seed``
    seed_ids: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.difference.n,
            "instance_ids": list(self.ids),
            "winner": self.winner,
            "best_seed": self.best_seed,
            "winner_s_val": self.winner_s_val,
            "best_seed_s_val": self.seed_s_val,
            "difference": self.difference.to_json(),
            "rule": self.rule,
            "returned": self.returned,
            "returned_is_seed": self.returned in self.seed_ids,
            "returned_is_baseline": self.returned == self.best_seed,
            "reason": self.reason,
            "measure": self.measure,
            "winner_loop_share": self.winner_loop_share,
            "best_seed_loop_share": self.seed_loop_share,
        }


def confirm(
    validator: Validator,
    winner: PolicyGenome,
    best_seed: PolicyGenome,
    rule: str,
    seed: int = 0,
    row_scores: RowScores | None = None,
    measure: str = "s_val",
    refuse_loopier: bool = True,
    seed_ids: frozenset[str] = frozenset(),
) -> Confirmation:
    """Validate both on the confirmation instances (``validator``) and apply ``rule``.
    ``seed_ids``: the run's seeds (``returned_is_seed`` says whether the returned policy is
    one of them)."""
    results = validator.validate([winner, best_seed])
    w, s = results[winner.id], results[best_seed.id]
    if row_scores is None:
        a, b = validator.row_s_vals(w), validator.row_s_vals(s)
    else:
        a, b = row_scores(winner.id, w), row_scores(best_seed.id, s)
    diff = paired_difference(a, b, seed=seed)
    loops_w, loops_s = loop_share(w), loop_share(s)
    loopier = refuse_loopier and loops_w > loops_s
    if winner.id == best_seed.id:
        returned, reason = winner.id, "the selection winner is the best seed"
    elif rule == "selection":
        returned, reason = winner.id, "return_rule 'selection': the selection winner"
    elif loopier:
        returned = best_seed.id
        reason = (
            f"not confirmed: the winner's answers loop more often than the best seed's "
            f"({loops_w:.0%} vs {loops_s:.0%} of the confirmation answers; paired "
            f"difference {diff})"
        )
    elif rule == "ci_above_zero":
        ok = diff.above_zero
        returned = winner.id if ok else best_seed.id
        reason = (
            f"confirmed: paired difference {diff} is above zero"
            if ok
            else f"not confirmed: the interval of the paired difference {diff} reaches zero"
        )
    else:
        ok = diff.n > 0 and diff.mean > 0
        returned = winner.id if ok else best_seed.id
        if not ok:
            reason = f"not confirmed: the winner does not beat the best seed ({diff})"
        elif diff.above_zero:
            reason = f"confirmed: the winner beats the best seed by {diff}"
        else:  # the rule returns it, but the reader should not take the gain as established
            reason = (
                f"confirmed on the mean only: the winner beats the best seed by {diff}, an "
                "interval that reaches zero (return_rule ci_above_zero would return the seed)"
            )
    return Confirmation(
        winner.id,
        best_seed.id,
        w.s_val,
        s.s_val,
        diff,
        rule,
        returned,
        reason,
        tuple(i.id for i in validator.instances),
        measure,
        loops_w,
        loops_s,
        seed_ids,
    )


def loop_share(result: ValidationResult) -> float:
    """The share of a validation's answers that are repetition loops (a failed answer counts:
    it is no minutes either)."""
    rows = result.per_instance
    if not rows:
        return 0.0
    return sum(1 for r in rows if r.get("error") or is_loop(str(r.get("output") or ""))) / len(rows)
