"""The code gym's plug-in: its ``task`` keys and the run-config defaults it needs (its reward
components' weights, s_val over the hidden tests, HumanEval as the validation set, the hidden
tests of held-out generated problems as a share of fitness: the sparse terminal reward)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from evotrainer.config import TaskConfig
from evotrainer.tasks.base import Task
from evotrainer.tasks.code.isolation import MECHANISMS, RENAMED, UNSAFE
from evotrainer.tasks.registry import TaskPlugin, TaskWords

DEFAULT_VAL_DATA = "../shared/data/code/humaneval-dev.jsonl"


class CodeTaskConfig(TaskConfig):
    turns: int = Field(
        2,
        ge=1,
        le=8,
        description="answers per episode: after each, the failing visible tests are shown and "
        "the agent revises (1 = single-turn)",
    )
    sandbox: str = Field(
        "auto",
        description="how model-written code is confined (docs/code-gym.md): auto or bwrap = "
        "bubblewrap (the task refuses to start where it does not work); unsafe-unshare or "
        "unsafe-process = resource limits and an audit hook only, the host's files within "
        "the code's reach (opt-in by name)",
    )
    call_s: float = Field(2.0, gt=0, le=60, description="time limit of one test call (s)")
    wall_s: float = Field(
        20.0, gt=0, le=600, description="time limit of one whole execution (s), then killed"
    )
    memory_mb: int = Field(512, ge=64, description="address-space limit of the sandbox (MiB)")

    def executable_settings(self) -> list[str]:
        """An unsafe sandbox mode lets model-written code reach the host's files: a resume never
        takes it from a run directory's config.yaml (run/resume_settings.py)."""
        return [f"task.sandbox={self.sandbox}"] if self.sandbox in UNSAFE else []

    @field_validator("sandbox")
    @classmethod
    def _known_sandbox(cls, value: str) -> str:
        if value in RENAMED:
            raise ValueError(
                f"{value!r} is now called {RENAMED[value]!r} (it leaves your files within the "
                "code's reach); 'auto' or 'bwrap' isolates the code"
            )
        if value not in ("auto", *MECHANISMS):
            raise ValueError(f"must be auto or one of {', '.join(MECHANISMS)}")
        return value


DEFAULTS: dict[str, dict[str, Any]] = {
    "harness": {
        "weights": {
            "visible_tests": 0.5,
            "defines_function": 0.1,
            "lint": 0.1,
            "runtime": 0.1,
            "safety": 0.1,
            "length": 0.1,
        },
        "real_data": None,
        "reference_components": [],
        "switchable": [],
    },
    "outer": {"s_val_weights": {"pass_at_1": 0.5, "tests_passed": 0.5}},
    # code may repeat itself legitimately (a chain of elif branches): no loop rule, no cut
    "validation": {"data": DEFAULT_VAL_DATA, "refuse_loopier": False},
    "defences": {"terminal_data": None, "terminal_share": 0.2},
    "inner": {"tunable_genes": ["repeat_penalty", "frequency_penalty", "presence_penalty"]},
}


def build(cfg: CodeTaskConfig) -> Task:
    # lazy: start-up time (a config check reads the plug-in; its task loads when built)
    from evotrainer.tasks.code.sandbox import Limits
    from evotrainer.tasks.code.task import CodeTask

    limits = Limits(call_s=cfg.call_s, wall_s=cfg.wall_s, memory_mb=cfg.memory_mb)
    return CodeTask(turns=cfg.turns, sandbox=cfg.sandbox, limits=limits)


WORDS = TaskWords("problems", "code", "ground truth")
PLUGIN = TaskPlugin("code", build, CodeTaskConfig, DEFAULTS, WORDS)
