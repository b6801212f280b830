"""Resolve the validation set: the real data file if present, else a held-out synthetic set,
and say which (a user's fresh clone has no ../shared). Then split it into the **selection** part
(what the meta-objective s_val is computed on: harness decisions and the choice of the returned
policy) and the **confirmation** part, which selection never sees: at the end the returned
policy and the best seed are compared on it, paired, so the run states a score that was not
used to choose what it reports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from evotrainer.config import ValidationConfig
from evotrainer.errors import ConfigError
from evotrainer.tasks.base import Task
from evotrainer.types import Instance

T = TypeVar("T")


def spread(items: Sequence[T], n: int, offset: int = 0) -> list[T]:
    """``n`` items spread evenly over ``items`` (deterministic), starting at ``offset``."""
    if n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[(offset + int(i * step)) % len(items)] for i in range(n)]


@dataclass(frozen=True)
class ValidationSet:
    selection: list[Instance]
    source: str
    synthetic: bool
    message: str
    confirmation: list[Instance] = field(default_factory=list)

    @property
    def instances(self) -> list[Instance]:
        """Every validation instance (selection and confirmation)."""
        return [*self.selection, *self.confirmation]


def split_confirmation(instances: list[Instance], k: int) -> tuple[list[Instance], list[Instance]]:
    """(selection, confirmation): ``k`` instances spread over the list (interleaved with the
    selection ones, so neither part is one end of the file) are held out for confirmation."""
    if k <= 0:
        return list(instances), []
    if len(instances) - k < 2:
        raise ConfigError(
            f"validation.confirm={k} leaves {len(instances) - k} of {len(instances)} validation "
            "instances for selection; need at least 2 (lower confirm or raise validation.limit)"
        )
    confirmation = spread(instances, k, offset=1)
    held = {i.id for i in confirmation}
    return [i for i in instances if i.id not in held], confirmation


def resolve_validation(
    task: Task,
    cfg: ValidationConfig,
    seed: int,
    given: list[Instance] | None = None,
) -> ValidationSet:
    if given is not None:
        instances, source, synthetic = given, "given by caller", False
        message = f"{len(given)} instances given"
    elif cfg.data and Path(cfg.data).is_file():
        instances = task.load(cfg.data)
        if cfg.limit:
            instances = spread(instances, cfg.limit)
        source, synthetic = str(cfg.data), False
        message = f"validating on {len(instances)} from {cfg.data}"
    else:
        instances = task.synthetic_validation(cfg.synthetic_size, seed)
        why = f"validation data {cfg.data!r} not found" if cfg.data else "no validation data set"
        source, synthetic = "synthetic (held out)", True
        message = (
            f"{why}: falling back to a held-out synthetic validation set of {len(instances)} "
            "meetings. s_val is then NOT a measure on real, human-annotated data."
        )
    k = min(cfg.confirm, max(0, len(instances) - 2))
    selection, confirmation = split_confirmation(list(instances), k)
    if confirmation:
        message += f" ({len(selection)} for selection, {len(confirmation)} held out to confirm)"
    return ValidationSet(selection, source, synthetic, message, confirmation)
