"""The code gym task plug-in (SPEC: "a coding agent in a code gym").

The agent gets a function's signature and docstring and writes the function. The environment
is the sandbox (sandbox.py): every answer really runs. The episode (``rollout``) may take
several turns: after each answer the visible tests (the docstring's examples) run, and while
some fail and turns are left the agent sees the failures and revises. The reward components
score the final answer (rewards.py); the hidden tests are the validation metric and the sparse
terminal reward (metric.py). The generator (generator.py) draws problems whose difficulty and
mix of kinds the outer loop evolves; the validation set is HumanEval (loader.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from evotrainer.errors import BudgetExceeded, ConfigError, EvoTrainerError
from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.operators.base import FeedbackEdit
from evotrainer.operators.vocabulary import InstructionVocabulary
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import (
    BaseTask,
    HarnessHints,
    RewardComponent,
    TaskGenerator,
    ValidationMetric,
)
from evotrainer.tasks.code.execution import Runs
from evotrainer.tasks.code.generator import CodeGenerator
from evotrainer.tasks.code.loader import load_problems, save_problems
from evotrainer.tasks.code.metric import HiddenTestsMetric
from evotrainer.tasks.code.problem import CodeProblem
from evotrainer.tasks.code.render import ParsedCode, parse_code, render_messages, revision_messages
from evotrainer.tasks.code.rewards import component_registry
from evotrainer.tasks.code.sandbox import Limits, Sandbox
from evotrainer.tasks.code.seeds import seed_policies
from evotrainer.tasks.code.style import VOCABULARY
from evotrainer.types import Instance, Message, Trajectory, Turn

# visible_tests stands for the hidden tests: saturated in training while the hidden tests'
# share is low on validation means the examples are being special-cased
HINTS = HarnessHints(
    proxies={"visible_tests": ("tests_passed", 0.5)},
    low={"tests_passed": 0.5, "pass_at_1": 0.3},
    shape=("defines_function",),
)

TEMPLATES = (
    "```python\n<the complete function, with its def line>\n```",
    "Edge cases: <one line>\n```python\n<the complete function>\n```",
    "Plan: <one line: the algorithm and its running time>\n```python\n<the complete function>\n```",
)

EDITS: dict[str, tuple[FeedbackEdit, ...]] = {
    "visible_tests": (
        FeedbackEdit("system", "Check the function against every example in the docstring."),
    ),
    "defines_function": (
        FeedbackEdit("system", "Reply with the complete function, starting with its def line."),
    ),
    "lint": (FeedbackEdit("system", "Write clean code: no unused variables or imports."),),
    "runtime": (
        FeedbackEdit(
            "system", "Use a linear-time algorithm with a set or a dict, not nested loops."
        ),
    ),
    "safety": (FeedbackEdit("system", "Never use eval, exec, subprocess, sockets or files."),),
    "length": (FeedbackEdit("system", "Keep the function short."),),
}


class CodeTask(BaseTask):
    """Function signatures and docstrings in, working Python functions out.

    ``turns``: answers per episode (1 = single-turn; more lets the agent revise after seeing
    the visible tests fail). ``sandbox``: auto | bwrap | unsafe-unshare | unsafe-process
    (isolation.py); where it does not work the task refuses to start (ConfigError).
    """

    name = "code"

    def __init__(
        self,
        turns: int = 2,
        sandbox: str = "auto",
        limits: Limits | None = None,
    ) -> None:
        if not 1 <= int(turns) <= 8:
            raise ConfigError(f"task.turns must be between 1 and 8, got {turns}")
        try:
            self.sandbox = Sandbox(sandbox, limits)
        except ValueError as exc:
            raise ConfigError(f"task.sandbox: {exc}") from None
        self.turns = int(turns)
        self.runs = Runs(self.sandbox)
        self._components: dict[str, RewardComponent] | None = None

    def __repr__(self) -> str:
        return f"CodeTask(turns={self.turns}, sandbox={self.sandbox.isolation.describe()!r})"

    def generator(self) -> TaskGenerator:
        return CodeGenerator()

    def render(self, instructions: str, instance: Instance) -> tuple[list[Message], bool]:
        return render_messages(_problem(instance), instructions), False

    def rollout(
        self,
        instructions: str,
        instance: Instance,
        llm: LLMClient,
        sampling: SamplingParams,
    ) -> Trajectory:
        """Answer; while visible tests fail and turns are left, see the failures and revise.
        A failed later call ends the episode with the answer so far."""
        problem = _problem(instance)
        messages, truncated = self.render(instructions, instance)
        turns: list[Turn] = []
        for k in range(self.turns):
            try:
                c = llm.complete(messages, sampling)
            except BudgetExceeded:
                raise
            except EvoTrainerError as exc:
                if not turns:
                    raise
                last = turns[-1]
                turns[-1] = replace(last, observation=f"{last.observation}\n(turn {k + 1}: {exc})")
                break
            failures = self.runs.judge(problem, c.text).visible_failures(problem.entry_point)
            turns.append(
                Turn(
                    c.text,
                    failures,
                    c.prompt_tokens,
                    c.completion_tokens,
                    c.latency_s,
                    c.cached,
                )
            )
            if not failures:
                break
            messages = revision_messages(messages, c.text, failures)
        return Trajectory(tuple(turns), truncated)

    def max_calls_per_rollout(self) -> int:
        return self.turns

    def parse(self, output: str) -> ParsedCode:
        return parse_code(output)

    def reward_components(self) -> dict[str, RewardComponent]:
        if self._components is None:
            self._components = component_registry(self.runs)
        return dict(self._components)

    def validation_metric(self) -> ValidationMetric:
        return HiddenTestsMetric(self.runs)

    def load(self, path: str | Path) -> list[Instance]:
        return load_problems(path)

    def write_instances(self, path: Path, instances: Sequence[Instance]) -> str:
        """Generated problems as problems JSONL with their tests, what ``load`` reads
        (``tasks.base.WritesInstances``: ``evotrainer generate --task code``)."""
        save_problems(path, [i.payload for i in instances])
        return ""

    def seed_policies(self) -> list[PolicyGenome]:
        return seed_policies()

    # -- the structural search space -------------------------------------------------------
    def output_templates(self) -> Sequence[str]:
        return TEMPLATES

    def feedback_edits(self) -> Mapping[str, Sequence[FeedbackEdit]]:
        return EDITS

    # -- what the engine's generic parts need to know about code -----------------------------
    def vocabulary(self) -> InstructionVocabulary:
        return VOCABULARY

    def harness_hints(self) -> HarnessHints:
        return HINTS

    def input_text(self, instance: Instance) -> str:
        return _problem(instance).prompt

    def reference_text(self, instance: Instance) -> str | None:
        """The ground-truth implementation (HumanEval: the canonical solution)."""
        return _problem(instance).solution or None

    def constitution_rules(self) -> frozenset[str]:
        # code repeats the specification's literals and names (a number, a parameter called
        # "password"), and a correct answer to a problem of the same family as a few-shot
        # example IS that example's code: no output rule applies (the rules on policy texts
        # still do); dangerous code is the safety component's and the sandbox's business, and
        # a copied answer that does not fit fails the hidden tests
        return frozenset()


def _problem(instance: Instance) -> CodeProblem:
    p = instance.payload
    if not isinstance(p, CodeProblem):
        raise TypeError(f"instance {instance.id!r}: payload is not a CodeProblem")
    return p
