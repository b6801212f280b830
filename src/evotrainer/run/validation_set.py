"""Resolve the validation set: the real data file if present, else a held-out synthetic set,
and say which (a user's fresh clone has no ../shared).

What is refused rather than silently accepted: a data path that is a directory; a file you named
that does not exist (only the default path falls back to synthetic data); a file with no
meetings; a file whose references no validation metric can use (every s_val would be 0); on
resume, a validation set that is not the one the run started with. Meetings without a usable
reference or with an empty transcript are reported as warnings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotrainer.config import DEFAULT_VAL_DATA, ValidationConfig
from evotrainer.errors import CheckpointError, ConfigError, DataError
from evotrainer.tasks.base import Task
from evotrainer.types import Instance


@dataclass(frozen=True)
class ValidationSet:
    instances: list[Instance]
    source: str
    synthetic: bool
    message: str
    warnings: list[str] = field(default_factory=list)


def resolve_validation(
    task: Task,
    cfg: ValidationConfig,
    seed: int,
    given: list[Instance] | None = None,
) -> ValidationSet:
    if given is not None:
        return ValidationSet(given, "given by caller", False, f"{len(given)} instances given")
    path = Path(cfg.data) if cfg.data else None
    if path is not None and path.exists():
        if not path.is_file():
            raise DataError(f"validation data {cfg.data}: is a directory, not a JSONL file")
        instances = task.load(path)
        if cfg.limit:
            instances = instances[: cfg.limit]
        warnings = check_references(task, instances, str(cfg.data))
        return ValidationSet(
            instances,
            str(cfg.data),
            False,
            f"validating on {len(instances)} from {cfg.data}",
            warnings,
        )
    if path is not None and cfg.data != DEFAULT_VAL_DATA:
        raise DataError(
            f"validation data {cfg.data} not found. A file you name must exist (only the "
            f"default, {DEFAULT_VAL_DATA}, falls back to synthetic meetings); set "
            "validation.data to null for a synthetic validation set."
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


def usable_keys(task: Task, instance: Instance) -> set[str]:
    """The validation metric keys this instance can be scored on (its references allow them)."""
    metric = task.validation_metric()
    row = metric.score(instance, "", task.parse(""))
    return {k for k in metric.keys if row.get(k) is not None}


def check_references(task: Task, instances: Sequence[Instance], source: str) -> list[str]:
    """Refuse data with no meetings or with no reference any metric can use; return warnings
    about meetings without a usable reference or with an empty input."""
    from evotrainer.evaluation.fitness import input_text

    if not instances:
        raise DataError(f"{source}: holds no meetings: there would be nothing to validate on")
    unusable = [i.id for i in instances if not usable_keys(task, i) - {"n_action_items"}]
    if len(unusable) == len(instances):
        raise DataError(
            f"{source}: no meeting has a reference any validation metric can use (references "
            "need summary, decisions, action_items or free-form minutes): every s_val would be 0"
        )
    warnings = []
    if unusable:
        warnings.append(
            f"{source}: {len(unusable)} of {len(instances)} meetings have no usable reference "
            f"and do not count ({_ids(unusable)})"
        )
    empty = [i.id for i in instances if not input_text(task, i).strip()]
    if empty:
        warnings.append(
            f"{source}: {len(empty)} of {len(instances)} meetings have an empty transcript "
            f"({_ids(empty)})"
        )
    return warnings


def check_s_val_weights(
    weights: Mapping[str, float],
    task: Task,
    instances: Sequence[Instance],
    extra_keys: Sequence[str] = (),
) -> None:
    """``outer.s_val_weights`` must name metric keys (a typo such as ``rogueL`` would make every
    s_val 0), and at least one weighted key must be computable on the validation set."""
    keys = set(task.validation_metric().keys) | set(extra_keys)
    unknown = sorted(set(weights) - keys)
    if unknown:
        raise ConfigError(
            f"outer.s_val_weights: unknown metric(s) {unknown}; known: {sorted(keys)}"
            + ("" if "robustness" in keys else " (robustness needs defences.robustness_probe)")
        )
    weighted = {k for k, w in weights.items() if w > 0}
    if weighted & set(extra_keys) or not instances:
        return
    usable: set[str] = set()
    for inst in instances:
        usable |= usable_keys(task, inst)
        if usable & weighted:
            return
    raise DataError(
        f"the validation set's references allow only {sorted(usable) or 'no metric'}, none of "
        f"the weighted outer.s_val_weights {sorted(weighted)}: every s_val would be 0"
    )


def check_same_validation(vset: ValidationSet, state: Mapping[str, Any]) -> None:
    """On resume: the validation set must be the one the checkpoint was validated on (a relative
    path resolved elsewhere, or a file that vanished, must not switch it silently)."""
    memo = state.get("validation_memo") or {}
    for result in memo.values():
        rows = result.get("per_instance") or [] if isinstance(result, dict) else []
        before = [r.get("instance_id") for r in rows if isinstance(r, dict)]
        now = [i.id for i in vset.instances]
        if before != now:
            raise CheckpointError(
                f"the validation set changed since the run started: it was {len(before)} "
                f"meetings ({_ids(before)}), now {vset.source} gives {len(now)} ({_ids(now)}). "
                "Resume where the validation data is at the same path, or start a new run."
            )
        return


def _ids(ids: Sequence[Any], n: int = 4) -> str:
    shown = ", ".join(map(str, ids[:n]))
    return shown + (f" and {len(ids) - n} more" if len(ids) > n else "")
