"""The validated answers' reward scores, as training would score them: what ``outer.trials:
rank`` ranks policies by (evaluation/rank_judge.py), what ``defences.learned_reward_data:
selection`` fits on, and what summary.json's rank picture correlates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from evotrainer.defences.learned import NAMES as LEARNED_NAMES
from evotrainer.defences.learned import LearnedDefences
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.validation import Validator
from evotrainer.harness.reward import score_rollout
from evotrainer.harness.training_set import RealPool
from evotrainer.tasks.base import Task, Unlabels, parse_rollout
from evotrainer.types import Instance, Rollout, Turn, ValidationResult


class RankScores:
    """``rank_scores(policy_id, row)``: a validated answer's scores for the rank judgement."""

    def __init__(
        self,
        task: Task,
        evaluator: Evaluator,
        validator: Validator,
        real_pool: RealPool,
        learned: LearnedDefences,
        seed: int,
    ) -> None:
        self.task = task
        self.evaluator = evaluator
        self.validator = validator
        self.real_pool = real_pool
        self.learned = learned
        self.seed = seed
        self._rescored: dict[tuple[str, str], Mapping[str, float]] = {}  # memo

    def rescore(self, row: Mapping[str, Any]) -> Mapping[str, float]:
        """The base component scores of one validation answer as training would score it: on
        the meeting without its references when the training pool is unlabelled (memoised; the
        learned defences are left out: they change at every refit)."""
        key = (str(row.get("instance_id")), str(row.get("output")))
        hit = self._rescored.get(key)
        if hit is not None:
            return hit
        inst = self.validation_by_id[key[0]]
        if self.pool_unlabelled and isinstance(self.task, Unlabels):
            inst = self.task.unlabelled(inst)
        error = row.get("error")
        turns = tuple(
            Turn(str(t.get("output", "")), str(t.get("observation", "")))
            for t in row.get("turns") or ()
            if isinstance(t, Mapping)
        )  # a multi-turn episode's turns (validation rows keep them)
        rollout = Rollout("", inst.id, key[1], error=str(error) if error else None, turns=turns)
        parsed = parse_rollout(self.task, inst, rollout)
        base = {k: c for k, c in self.evaluator.components.items() if k not in LEARNED_NAMES}
        scores = score_rollout(base, inst, rollout, parsed).applicable()
        self._rescored[key] = scores
        return scores

    def __call__(self, policy_id: str, row: Mapping[str, Any]) -> Mapping[str, float]:
        """A validated answer's scores for the rank judgement: the base components, plus the
        learned reward's score from a model fitted without this policy's answers."""
        scores = dict(self.rescore(row))
        model = self.learned.model
        if model is not None and model.is_fitted and not row.get("error"):
            held_out = model.without(policy_id, rng_seed=self.seed)
            if held_out is not None:
                scores["learned"] = held_out.predict(scores, str(row.get("output", "")))
        return scores

    def selection_rows(self) -> dict[str, ValidationResult]:
        """The fully validated policies' selection rows, their answers' component scores as
        training would score them (``defences.learned_reward_data: selection``)."""
        out = {}
        for pid, res in self.validator.memo.items():
            if res.partial:
                continue
            rows = tuple({**r, "rewards": dict(self.rescore(r))} for r in res.per_instance)
            out[pid] = replace(res, per_instance=rows)
        return out

    @property
    def validation_by_id(self) -> dict[str, Instance]:
        return {i.id: i for i in self.validator.instances}

    @property
    def pool_unlabelled(self) -> bool:
        """The real training pool holds no human reference (the scarce-labels setting)."""
        pool = self.real_pool.instances
        return bool(pool) and not any(self.task.reference_text(i) for i in pool)
