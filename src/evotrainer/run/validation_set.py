"""Resolve the validation set: the real data file if present, else a held-out synthetic set,
and say which (a user's fresh clone has no ../shared)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evotrainer.config import ValidationConfig
from evotrainer.tasks.base import Task
from evotrainer.types import Instance


@dataclass(frozen=True)
class ValidationSet:
    instances: list[Instance]
    source: str
    synthetic: bool
    message: str


def resolve_validation(
    task: Task,
    cfg: ValidationConfig,
    seed: int,
    given: list[Instance] | None = None,
) -> ValidationSet:
    if given is not None:
        return ValidationSet(given, "given by caller", False, f"{len(given)} instances given")
    if cfg.data and Path(cfg.data).is_file():
        instances = task.load(cfg.data)
        if cfg.limit:
            instances = instances[: cfg.limit]
        return ValidationSet(
            instances, str(cfg.data), False, f"validating on {len(instances)} from {cfg.data}"
        )
    instances = task.synthetic_validation(cfg.synthetic_size, seed)
    why = f"validation data {cfg.data!r} not found" if cfg.data else "no validation data set"
    return ValidationSet(
        instances,
        "synthetic (held out)",
        True,
        f"{why}: falling back to a held-out synthetic validation set of {len(instances)} "
        "meetings. s_val is then NOT a measure on real, human-annotated data.",
    )
