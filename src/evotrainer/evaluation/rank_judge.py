"""Judging a harness by how its reward *ranks* what the meta-objective ranks (``outer.trials:
rank``; issue 32).

A reward is good when it orders policies as the validation set does: the policy it prefers is
the one that validates higher. The engine already knows, for every policy it validated in full,
its s_val and its answers on the selection meetings, and every reward component scored those
answers (the weights are applied late, so any harness variant re-weights them without an LLM
call). A variant's score is Spearman's rank correlation, over the validated policies, between
its reward (the mean over the selection meetings of its weighted reward) and their s_val.

When the training pool is unlabelled, the answers are re-scored on the selection meetings with
their references removed (``Task.unlabelled``), so that each component is judged as it will
score in training (reference-free completeness, not the reference summary's words); the labels
enter only as the s_val the ranking is compared with. A learned reward fitted on these very
answers would rank them in-sample: each policy's answers get the learned score of a model
fitted without that policy (``LearnedRewardModel.without``).

Fewer than ``MIN_POLICIES`` validated policies, or no spread in their s_val: no judgement
(``None``), and the outer step trials its variants as it would otherwise.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from evotrainer.evaluation.correlation import spearman
from evotrainer.harness.reward import weighted_reward
from evotrainer.types import ValidationResult

MIN_POLICIES = 5

# (policy id, one of its validation rows) -> the applicable component scores of its answer
Rescore = Callable[[str, Mapping[str, object]], Mapping[str, float]]


@dataclass(frozen=True)
class RankEvidence:
    """What the ranking is judged on: per validated policy, its s_val and the component scores
    of its answer on each selection meeting."""

    policies: tuple[str, ...]
    s_vals: tuple[float, ...]
    scores: tuple[tuple[Mapping[str, float], ...], ...]

    def reward(self, i: int, weights: Mapping[str, float]) -> float:
        return statistics.fmean(weighted_reward(v, weights) for v in self.scores[i])

    def correlation(self, weights: Mapping[str, float]) -> float:
        """Spearman's rho between the weights' reward and s_val over the policies (0 when the
        reward does not vary)."""
        rewards = [self.reward(i, weights) for i in range(len(self.policies))]
        rho = spearman(rewards, list(self.s_vals))
        return 0.0 if rho is None else rho


def _fully_validated(validated: Mapping[str, ValidationResult]) -> dict[str, ValidationResult]:
    """Raced-out, partial results left out."""
    return {pid: r for pid, r in validated.items() if not r.partial and r.per_instance}


def _enough(full: Mapping[str, ValidationResult]) -> bool:
    return len(full) >= MIN_POLICIES and len({float(r.s_val) for r in full.values()}) >= 2


def rankable(validated: Mapping[str, ValidationResult]) -> bool:
    """Whether ``evidence`` finds enough to rank, without rescoring any answer (the outer
    step's cost estimate asks before every step)."""
    return _enough(_fully_validated(validated))


def evidence(validated: Mapping[str, ValidationResult], rescore: Rescore) -> RankEvidence | None:
    """The evidence from every fully validated policy (raced-out, partial results left out),
    or None when there is too little to rank."""
    full = _fully_validated(validated)
    if not _enough(full):
        return None
    ids = tuple(sorted(full))
    s_vals = tuple(float(full[p].s_val) for p in ids)
    scores = tuple(tuple(rescore(p, row) for row in full[p].per_instance) for p in ids)
    return RankEvidence(ids, s_vals, scores)


def judge(ev: RankEvidence, variants: Sequence[Mapping[str, float]]) -> list[float]:
    """Each variant's rank correlation (its weights' reward against s_val)."""
    return [ev.correlation(w) for w in variants]


def unseen_correlations(
    validated: Mapping[str, ValidationResult],
    decisions: Sequence[Mapping[str, object]],
    base: Mapping[str, float],
    rescore: Rescore,
) -> list[dict[str, object]]:
    """How well each rank decision's chosen reward, and the base reward, rank the policies
    validated *after* that decision (the ones it never saw), in the order ``validated`` holds
    them: one entry per decision that recorded ``validated_before`` (the number of policies
    validated when it was made). ``chosen``/``base``: Spearman's rho, None when fewer than
    ``MIN_POLICIES`` came later."""
    order = list(validated.items())
    out: list[dict[str, object]] = []
    for d in decisions:
        before = d.get("validated_before")
        if not isinstance(before, int):
            continue
        later = dict(order[before:])
        found = evidence(later, rescore)
        chosen = d.get("chosen")
        weights = chosen.get("weights", {}) if isinstance(chosen, Mapping) else {}
        entry: dict[str, object] = {"outer_step": d.get("step"), "n_later": len(later)}
        if found is None:
            entry.update(chosen_rho=None, base_rho=None)
        else:
            entry.update(
                chosen_rho=found.correlation(weights),
                base_rho=found.correlation(base),
            )
        out.append(entry)
    return out
