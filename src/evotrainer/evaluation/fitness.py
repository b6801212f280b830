"""Fitness under a harness, with the defences that act on it:

- the **constitution**: a policy whose text, or any of whose outputs on the batch, breaks a rule
  gets fitness -inf (never selected, never archived) and the violation is reported once;
- the **sparse terminal reward**: a share ``terminal_share`` of fitness comes from the external
  validation metric on a small meta-validation sample that rotates every epoch (drawn from a
  pool of real meetings that is not the validation set), so the proxy cannot drift far from it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from evotrainer.defences.constitution import Constitution, Violation
from evotrainer.evaluation.evaluator import Evaluator, PolicyFitness
from evotrainer.evaluation.validation import Validator
from evotrainer.harness.genome import HarnessGenome
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import Task
from evotrainer.types import Instance


def input_text(task: Task, instance: Instance) -> str:
    """The text the agent reads for an instance (for privacy checks)."""
    fn = getattr(task, "input_text", None)
    if fn is not None:
        return str(fn(instance))
    payload = instance.payload
    return payload if isinstance(payload, str) else str(getattr(payload, "text", payload))


class FitnessJudge:
    def __init__(
        self,
        task: Task,
        evaluator: Evaluator,
        constitution: Constitution,
        reflect_examples: int,
        terminal_share: float = 0.0,
        terminal_pool: Sequence[Instance] = (),
        terminal_sample: int = 2,
        s_val_weights: Mapping[str, float] | None = None,
        seed: int = 0,
        on_violation: Callable[[str, list[Violation]], None] | None = None,
    ) -> None:
        self.task = task
        self.evaluator = evaluator
        self.constitution = constitution
        self.reflect_examples = reflect_examples
        self.terminal_share = terminal_share
        self.terminal_pool = list(terminal_pool)
        self.terminal_sample = terminal_sample
        self.s_val_weights = dict(s_val_weights or {"rougeL": 0.5, "action_item_f1": 0.5})
        self.seed = seed
        self.on_violation = on_violation
        self.rejected: dict[str, list[Violation]] = {}
        self._terminal: dict[int, Validator] = {}

    def __call__(
        self,
        policies: Sequence[PolicyGenome],
        batch: Sequence[Instance],
        harness: HarnessGenome,
        epoch: int,
    ) -> dict[str, PolicyFitness]:
        self.evaluator.evaluate(policies, batch)
        out = {}
        for p in policies:
            fit = self.evaluator.fitness(p.id, batch, harness.weights, self.reflect_examples)
            violations = self.violations(p, batch)
            if violations:
                reasons = "; ".join(map(str, violations))
                fit = replace(fit, fitness=-math.inf, feedback=f"rejected: {reasons}")
            elif self.terminal_share > 0 and self.terminal_pool:
                t = self.terminal_score(p, epoch)
                fit = replace(
                    fit,
                    fitness=(1 - self.terminal_share) * fit.fitness + self.terminal_share * t,
                    components={**fit.components, "terminal": t},
                )
            out[p.id] = fit
        return out

    def violations(self, policy: PolicyGenome, batch: Sequence[Instance]) -> list[Violation]:
        found = self.constitution.check_policy(policy.render())
        if not found:
            pairs = (
                (
                    input_text(self.task, inst),
                    self.evaluator.store[(policy.id, inst.id)].rollout.output,
                )
                for inst in batch
            )
            found = self.constitution.check_outputs(pairs)
        if found and policy.id not in self.rejected:
            self.rejected[policy.id] = found
            if self.on_violation:
                self.on_violation(policy.id, found)
        return found

    def terminal_score(self, policy: PolicyGenome, epoch: int) -> float:
        validator = self._terminal.get(epoch)
        if validator is None:
            rng = random.Random(f"{self.seed}/terminal/{epoch}")
            k = min(self.terminal_sample, len(self.terminal_pool))
            validator = Validator(
                self.task,
                self.evaluator,
                rng.sample(self.terminal_pool, k),
                self.s_val_weights,
                source="terminal sample",
            )
            self._terminal = {epoch: validator}  # only the current epoch's sample is kept
        return validator.validate_one(policy).s_val

    def state(self) -> dict[str, Any]:
        return {pid: [str(v) for v in vs] for pid, vs in self.rejected.items()}
