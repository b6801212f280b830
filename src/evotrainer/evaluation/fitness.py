"""Fitness under a harness, with the defences that act on it:

- the **constitution**: a policy whose text, or any of whose outputs on the batch, breaks a rule
  gets fitness -inf (never selected, never archived) and the violation is reported once;
- the **sparse terminal reward**: a share ``terminal_share`` of fitness comes from the external
  validation metric on a small meta-validation sample that rotates every epoch (drawn from a
  pool of real meetings that is not the validation set), so the proxy cannot drift far from it;
- **racing** (successive halving on the batch): new candidates first meet ``race_first``
  instances; a candidate is compared *paired* with the best incumbent on those instances, its
  full-batch fitness estimated as the incumbent's plus the paired difference, and only one whose
  estimate could make the survivors (>= the cut-off minus ``race_margin``) meets the rest. The
  others keep the estimate (``n`` < batch size tells them apart) and cost no further calls.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from evotrainer.evaluation.evaluator import Evaluator, PolicyFitness
from evotrainer.evaluation.racing import Racing
from evotrainer.evaluation.validation import Validator
from evotrainer.harness.genome import HarnessGenome
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import Task
from evotrainer.tasks.registry import task_default
from evotrainer.types import Instance

Violation = Any  # one broken rule (defences/constitution.py: Violation, with its ``rule``)


class Constitution(Protocol):
    """The rules every policy and output must satisfy, as the judge asks them: the engine hands
    it defences/constitution.py's ``Constitution``. Each check returns the broken rules."""

    def check_policy(self, text: str) -> list[Violation]: ...

    def check_outputs(
        self, pairs: Iterable[tuple[str, str]], example: str = ""
    ) -> list[Violation]: ...


@dataclass
class RaceTally:
    """What racing children on their batch saved, in all."""

    raced_out: int = 0  # candidates stopped early
    race_saved: int = 0  # (candidate, instance) pairs racing did not evaluate


def input_text(task: Task, instance: Instance) -> str:
    """The text the agent reads for an instance (for privacy checks): ``Task.input_text``."""
    return str(task.input_text(instance))


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
        race_first: int = 0,
        race_margin: float = 0.0,
    ) -> None:
        self.task = task
        self.evaluator = evaluator
        self.constitution = constitution
        self.reflect_examples = reflect_examples
        self.terminal_share = terminal_share
        self.terminal_pool = list(terminal_pool)
        self.terminal_sample = terminal_sample
        # the terminal reward's s_val: the run's, else the task plug-in's default
        self.s_val_weights = dict(
            s_val_weights or task_default(task.name, "outer", "s_val_weights") or {}
        )
        self.seed = seed
        self.on_violation = on_violation
        self.racing = Racing(race_first, race_margin)  # evaluation/racing.py
        self.rejected: dict[str, list[Violation]] = {}
        self._terminal: dict[int, Validator] = {}
        self.race = RaceTally()  # what racing saved (run state: the checkpoint holds it)
        self._lock = threading.Lock()  # concurrent harness trials share the judge

    def __call__(
        self,
        policies: Sequence[PolicyGenome],
        batch: Sequence[Instance],
        harness: HarnessGenome,
        epoch: int,
        incumbents: Sequence[PolicyGenome] = (),
        survivors: int = 0,
        instance_weights: Mapping[str, float] | None = None,
    ) -> dict[str, PolicyFitness]:
        """Fitness of ``policies`` on ``batch``. With ``incumbents`` (already evaluated on the
        batch) and racing on, new policies race against them for ``survivors`` places.
        ``instance_weights``: the batch's instances weighted (``Evaluator.fitness``)."""
        estimates = self._race(policies, batch, harness, incumbents, survivors, instance_weights)
        out = {}
        for p in policies:
            if p.id in estimates:
                first = self.racing.head(batch)
                fit = self.evaluator.fitness(
                    p.id, first, harness.weights, self.reflect_examples, instance_weights
                )
                fit = replace(fit, fitness=estimates[p.id])
                evaluated: Sequence[Instance] = first
            else:
                fit = self.evaluator.fitness(
                    p.id, batch, harness.weights, self.reflect_examples, instance_weights
                )
                evaluated = batch
            violations = self.violations(p, evaluated)
            if violations:
                reasons = "; ".join(map(str, violations))
                fit = replace(fit, fitness=-math.inf, feedback=f"rejected: {reasons}")
            elif self.terminal_share > 0 and self.terminal_pool and p.id not in estimates:
                t = self.terminal_score(p, epoch)
                fit = replace(
                    fit,
                    fitness=(1 - self.terminal_share) * fit.fitness + self.terminal_share * t,
                    components={**fit.components, "terminal": t},
                )
            out[p.id] = fit
        return out

    def _race(
        self,
        policies: Sequence[PolicyGenome],
        batch: Sequence[Instance],
        harness: HarnessGenome,
        incumbents: Sequence[PolicyGenome],
        survivors: int,
        instance_weights: Mapping[str, float] | None = None,
    ) -> dict[str, float]:
        """Evaluate ``policies`` on the batch, racing; returns the estimates of those stopped
        early (the rest are evaluated on the whole batch)."""
        k = self.racing.first
        new = [p for p in policies if p.id not in {i.id for i in incumbents}]
        if not self.racing.applies(len(batch)) or not incumbents or survivors <= 0 or not new:
            self.evaluator.evaluate(policies, batch)
            return {}
        w, iw = harness.weights, instance_weights
        full = {
            p.id: self.evaluator.fitness(p.id, batch, w, instance_weights=iw).fitness
            for p in incumbents
            if all((p.id, i.id) in self.evaluator.store for i in batch)
        }
        if not full:
            self.evaluator.evaluate(policies, batch)
            return {}
        ranked = sorted(full.values(), reverse=True)
        cutoff = ranked[min(survivors, len(ranked)) - 1]
        ref = max(full, key=lambda pid: (full[pid], pid))
        first = self.racing.head(batch)
        self.evaluator.evaluate(new, first)
        ref_first = self.evaluator.fitness(ref, first, w, instance_weights=iw).fitness
        estimates = {}
        promoted = []
        for p in new:
            est = full[ref] + self.evaluator.fitness(p.id, first, w, instance_weights=iw).fitness
            est -= ref_first
            if self.racing.goes_on(est, cutoff):
                promoted.append(p)
            else:
                estimates[p.id] = est
        self.evaluator.evaluate(promoted, batch)
        with self._lock:
            self.race.raced_out += len(estimates)
            self.race.race_saved += len(estimates) * (len(batch) - k)
        return estimates

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
            found = self.constitution.check_outputs(pairs, policy.components.get("examples", ""))
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
