"""What a task plugs into EvoTrainer: a generator, a way to prompt, parse and score, a validation
metric, and a loader for real data. The meeting-minutes task (tasks/meetings) is the reference
implementation; another task (a code gym, a dialogue agent) implements the same protocols.

Failure rules, shared by every plug-in:
- a RewardComponent or ValidationMetric must not raise on bad model output: it scores 0 and says
  why in its feedback. (The evaluator still guards against bugs: an exception is caught, the
  example scores 0 and the exception text becomes the feedback.)
- a loader raises DataError naming the file and line of the first malformed record.
- a generator is a pure function of (n, difficulty, mix, rng): same rng state, same instances.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from evotrainer.types import ComponentScore, Instance, Message


@runtime_checkable
class TaskGenerator(Protocol):
    """Produces training instances with ground truth. ``kinds`` lists the task types whose mix the
    harness may evolve; ``difficulty`` is L in [0, 1]."""

    kinds: tuple[str, ...]

    def sample(
        self,
        n: int,
        difficulty: float,
        rng: random.Random,
        mix: Mapping[str, float] | None = None,
    ) -> list[Instance]: ...


@runtime_checkable
class RewardComponent(Protocol):
    """One term of the training reward: a score in [0, 1] and a short feedback text. ``parsed`` is
    whatever ``Task.parse`` returned for ``output``."""

    name: str
    description: str

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore: ...


@runtime_checkable
class ValidationMetric(Protocol):
    """Judges outputs against human references. ``score`` returns one row per instance; a value
    of None means "not applicable" (e.g. no reference action items) and is left out of the mean.
    ``aggregate`` turns rows into the named aggregates that s_val combines."""

    keys: tuple[str, ...]

    def score(self, instance: Instance, output: str, parsed: Any) -> dict[str, float | None]: ...

    def aggregate(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, float]: ...


@dataclass(frozen=True)
class FeedbackEdit:
    """A rule-based edit the ``feedback_edit`` operator applies when a reward component is low
    (no capable reflector needed): add ``text`` to the policy's ``target`` component ("system":
    a sentence appended to the instruction; "template": a section appended to the output
    template, which is created when the policy has none)."""

    target: str
    text: str


@runtime_checkable
class Task(Protocol):
    """A complete task plug-in."""

    name: str

    def generator(self) -> TaskGenerator: ...

    def render(self, instructions: str, instance: Instance) -> tuple[list[Message], bool]:
        """Chat messages for one policy on one instance, and whether the input was truncated.

        Layout rule: put the instance (long, shared by all policies) first and the policy's text
        after it, so backends that reuse a shared token prefix (llama.cpp, vLLM prefix caching)
        prefill each instance once for the whole population."""
        ...

    def parse(self, output: str) -> Any: ...

    def reward_components(self) -> dict[str, RewardComponent]: ...

    def validation_metric(self) -> ValidationMetric: ...

    def load(self, path: str | Path) -> list[Instance]: ...

    def synthetic_validation(self, n: int, seed: int) -> list[Instance]:
        """A held-out synthetic validation set, used when no real data file is available."""
        ...

    # -- the structural search space (operators/structure.py, fewshot.py, feedback.py) -------
    def output_templates(self) -> Sequence[str]:
        """A small library of output templates the ``template`` operator adds or swaps in:
        section headings with <placeholders>, one section per block."""
        ...

    def reference_example(self, instance: Instance) -> str | None:
        """The human reference of a real training instance written as the output a policy
        should produce (a few-shot example), or None when the instance has none."""
        ...

    def feedback_edits(self) -> Mapping[str, Sequence[FeedbackEdit]]:
        """Reward component name -> edits that address a low score of that component."""
        ...
