"""Wires the learned defences into a run: the adversarial discriminator and the learned reward
model are reward components the harness may weight; both are refitted at every outer step
(GAN-like: the discriminator on the newest policy outputs; the reward model on every
(component vector, output) -> per-meeting metric score pair seen so far). After a refit,
the stored score vectors are rescored so fitness stays comparable.

The reward model is trained on training data only: at each refit the population is scored on a
small rotating sample of the pool of real meetings for training signals (``terminal_data``, the
validation meetings removed), never on the validation set, which stays the meta-objective's
alone."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from evotrainer.defences.discriminator import DiscriminatorReward, OutputDiscriminator
from evotrainer.defences.learned_reward import LearnedReward, LearnedRewardModel, row_target
from evotrainer.errors import ConfigError
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.validation import Validator
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import HasHumanReferences, HasOutputFeatures
from evotrainer.types import Instance, ValidationResult

NAMES = ("discriminator", "learned")


class LearnedDefences:
    def __init__(
        self,
        evaluator: Evaluator,
        discriminator: bool,
        learned_reward: bool,
        s_val_weights: dict[str, float],
        seed: int,
        exclude_ids: Sequence[str] = (),
        pool: Sequence[Instance] = (),
        sample: int = 2,
    ) -> None:
        task = evaluator.task
        if (discriminator or learned_reward) and not (
            isinstance(task, HasOutputFeatures) and isinstance(task, HasHumanReferences)
        ):
            # they read the task's output features and learn against its references: a task
            # without them (tasks/base.py) would teach them the domain, not the quality
            raise ConfigError(
                "defences.discriminator / defences.learned_reward need a task with output "
                "features and human references (HasOutputFeatures, HasHumanReferences in "
                f"tasks/base.py): the meeting task only so far (task {task.name!r}); switch "
                "them off"
            )
        self.evaluator = evaluator
        self.seed = seed
        self.s_val_weights = s_val_weights
        base = {k: v for k, v in evaluator.components.items() if k not in NAMES}
        self.discriminator = OutputDiscriminator() if discriminator else None
        self.model = (
            LearnedRewardModel(features=task.output_features())
            if learned_reward and isinstance(task, HasOutputFeatures)
            else None
        )
        self._pairs_seen: set[tuple[str, str]] = set()
        self._human: list[str] | None = None
        self._exclude = tuple(exclude_ids)
        self.pool = [i for i in pool if i.id not in set(self._exclude)]
        self.sample = sample
        if self.discriminator is not None:
            evaluator.components["discriminator"] = DiscriminatorReward(self.discriminator)
        if self.model is not None:
            evaluator.components["learned"] = LearnedReward(self.model, base)

    @property
    def active(self) -> bool:
        return self.discriminator is not None or self.model is not None

    def training_rows(
        self, policies: Sequence[PolicyGenome], step: int
    ) -> dict[str, ValidationResult]:
        """Per-meeting metric rows of ``policies`` on a rotating sample of the training pool
        (the reward model's data; never the validation set)."""
        if self.model is None or not self.pool:
            return {}
        rng = random.Random(f"{self.seed}/calibration/{step}")
        sample = rng.sample(self.pool, min(self.sample, len(self.pool)))
        validator = Validator(
            self.evaluator.task, self.evaluator, sample, self.s_val_weights, "training pool"
        )
        return validator.validate(list(policies))

    def refit(
        self, outputs: Sequence[str], validated: dict[str, ValidationResult], step: int
    ) -> dict[str, Any]:
        """Refit both models; returns their reports (for the event log)."""
        report: dict[str, Any] = {}
        if self.discriminator is not None:
            if self._human is None:
                # training meetings are synthetic, so the "human" side is synthetic references
                # (same domain): otherwise the classifier learns the topic, not the quality
                task = self.evaluator.task
                assert isinstance(task, HasHumanReferences)  # checked when built
                self._human = task.human_references(200, self.seed, exclude_ids=self._exclude)
            r = self.discriminator.fit(self._human, list(outputs), rng_seed=self.seed + step)
            report["discriminator"] = r.to_dict()
        if self.model is not None:
            for pid, v in validated.items():
                for row in v.per_instance:
                    key = (pid, row["instance_id"])
                    if key in self._pairs_seen or row.get("error"):
                        continue
                    self._pairs_seen.add(key)
                    target = row_target(row, self.s_val_weights)
                    self.model.add(
                        row.get("rewards") or {}, row.get("output", ""), target, group=pid
                    )
            report["learned"] = self.model.fit(rng_seed=self.seed + step).to_dict()
        self.evaluator.rescore(NAMES)
        return report

    def state_dict(self) -> dict[str, Any]:
        return {
            "discriminator": self.discriminator.state_dict() if self.discriminator else None,
            "learned": self.model.state_dict() if self.model else None,
            "pairs_seen": sorted(map(list, self._pairs_seen)),
        }

    def load_state_dict(self, s: dict[str, Any]) -> None:
        if self.discriminator is not None and s.get("discriminator"):
            self.discriminator.load_state_dict(s["discriminator"])
        if self.model is not None and s.get("learned"):
            self.model.load_state_dict(s["learned"])
        self._pairs_seen = {tuple(x) for x in s.get("pairs_seen", [])}


def batch_outputs(
    evaluator: Evaluator, policy_ids: Sequence[str], batch: Sequence[Instance]
) -> list[str]:
    return [
        evaluator.store[(pid, inst.id)].rollout.output
        for pid in policy_ids
        for inst in batch
        if (pid, inst.id) in evaluator.store and evaluator.store[(pid, inst.id)].rollout.output
    ]
