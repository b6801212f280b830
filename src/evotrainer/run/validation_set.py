"""Resolve the validation set: the real data file if present, else a held-out synthetic set,
and say which (a user's fresh clone has no ../shared). Then split it into the **selection** part
(what the meta-objective s_val is computed on: harness decisions and the choice of the returned
policy) and the **confirmation** part, which selection never sees: at the end the returned
policy and the best seed are compared on it, paired, so the run states a score that was not
used to choose what it reports.

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
from typing import Any, TypeVar

from evotrainer.config import ValidationConfig
from evotrainer.errors import CheckpointError, ConfigError, DataError
from evotrainer.evaluation.fitness import input_text
from evotrainer.notices import announce
from evotrainer.tasks.base import Task, reference_free_keys
from evotrainer.tasks.registry import task_default, task_words
from evotrainer.tasks.tabular import is_data, load_data
from evotrainer.types import Instance

T = TypeVar("T")
MIN_SELECTION = 2  # validation instances selection needs at least


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
    warnings: list[str] = field(default_factory=list)
    confirmation: list[Instance] = field(default_factory=list)
    # why fewer instances than validation.confirm are held out (None: as many as asked)
    confirmation_note: str | None = None

    @property
    def instances(self) -> list[Instance]:
        """Every validation instance (selection and confirmation)."""
        return [*self.selection, *self.confirmation]


def split_confirmation(instances: list[Instance], k: int) -> tuple[list[Instance], list[Instance]]:
    """(selection, confirmation): ``k`` instances spread over the list (interleaved with the
    selection ones, so neither part is one end of the file) are held out for confirmation."""
    if k <= 0:
        return list(instances), []
    if len(instances) - k < MIN_SELECTION:
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
    columns: Mapping[str, str] | None = None,
) -> ValidationSet:
    """The validation set, split into selection and confirmation (``cfg.confirm`` instances,
    fewer when the set is too small to leave 2 for selection; the message says how many).
    ``columns``: the data_columns spec for a Parquet file or dataset folder."""
    whole = _resolve(task, cfg, seed, given, columns)
    n = len(whole.selection)
    k = min(cfg.confirm, max(0, n - 2))
    selection, confirmation = split_confirmation(whole.selection, k)
    message = whole.message
    if confirmation:
        message += f" ({len(selection)} for selection, {len(confirmation)} held out to confirm)"
    elif cfg.confirm == 0:
        message += " (validation.confirm=0: none held out to confirm the result)"
    note = confirmation_note(n, cfg.confirm, k) if k < cfg.confirm else None
    if note:
        announce(note)
    return ValidationSet(
        selection, whole.source, whole.synthetic, message, whole.warnings, confirmation, note
    )


def check_given(items: Sequence[object], name: str) -> None:
    """Instances handed to the engine in memory (``CoEvolution(validation=..., training=...)``)
    must be Instances: DataError naming the first that is not, and where examples as plain
    mappings go."""
    for i, item in enumerate(items):
        if not isinstance(item, Instance):
            raise DataError(
                f"{name}[{i}] is a {type(item).__name__}, not an evotrainer.Instance: "
                "examples as dicts (a DataFrame, a Hugging Face Dataset) go to "
                "evotrainer.optimize(trainset=..., valset=...), which reads them with the "
                "task's loader (docs/api.md)"
            )


def confirmation_note(n: int, asked: int, held: int) -> str:
    """The decision when the validation set is too small for ``validation.confirm``: how many
    are held out, why, and how many instances the full confirmation needs."""
    need = asked + MIN_SELECTION
    instances = f"{n} validation instance{'s' if n != 1 else ''}"
    if held == 0:
        return (
            f"{instances}: too few to hold any out, so the result will be returned "
            f"not confirmed on held-out data (validation.confirm={asked} needs at least {need}: "
            f"{asked} held out + {MIN_SELECTION} for selection). Give more validation data, or "
            "set validation.confirm=0 to skip confirmation knowingly."
        )
    return (
        f"{instances}: only {held} of the {asked} confirmation instances asked for "
        f"(validation.confirm) can be held out ({MIN_SELECTION} are needed for selection); the "
        f"confirmation's interval will be wide. Confirming on all {asked} needs at least {need}."
    )


def _resolve(
    task: Task,
    cfg: ValidationConfig,
    seed: int,
    given: list[Instance] | None = None,
    columns: Mapping[str, str] | None = None,
) -> ValidationSet:
    if given is not None:
        check_given(given, "validation")
        return ValidationSet(given, "given by caller", False, f"{len(given)} instances given")
    path = Path(cfg.data) if cfg.data else None
    if path is not None and path.exists():
        if not is_data(path):
            raise DataError(
                f"validation data {cfg.data}: is a directory, not a data file (JSONL, Parquet) "
                "or a Hugging Face dataset folder"
            )
        instances = load_data(task, path, columns)
        if cfg.limit:
            instances = spread(instances, cfg.limit)
        source = str(path.resolve())  # the same in a run and in its resume (config.yaml)
        warnings = check_references(task, instances, source)
        return ValidationSet(
            instances, source, False, f"validating on {len(instances)} from {source}", warnings
        )
    default = _default_data(task)
    if path is not None and cfg.data != default:
        raise DataError(
            f"validation data {cfg.data} not found. A file you name must exist (only the "
            f"task's default, {default}, falls back to synthetic instances); set "
            "validation.data to null for a synthetic validation set."
        )
    instances = task.synthetic_validation(cfg.synthetic_size, seed)
    why = (
        f"the task's default validation data {cfg.data!r} not found (no data named)"
        if cfg.data
        else "no validation data set"
    )
    message = (
        f"{why}: falling back to a held-out synthetic validation set of {len(instances)} "
        "meetings. s_val is then NOT a measure on real, human-annotated data."
    )
    announce(message)
    return ValidationSet(instances, "synthetic (held out)", True, message)


def _default_data(task: Task) -> str | None:
    return task_default(task.name, "validation", "data")


def usable_keys(task: Task, instance: Instance) -> set[str]:
    """The validation metric keys this instance can be scored on thanks to its references (the
    keys that describe an answer alone, such as its length, left out)."""
    metric = task.validation_metric()
    row = metric.score(instance, "", task.parse(""))
    free = reference_free_keys(metric)
    return {k for k in metric.keys if row.get(k) is not None and k not in free}


def check_references(task: Task, instances: Sequence[Instance], source: str) -> list[str]:
    """Refuse data with no meetings or with no reference any metric can use; return warnings
    about meetings without a usable reference or with an empty input."""
    if not instances:
        raise DataError(f"{source}: holds no meetings: there would be nothing to validate on")
    unusable = [i.id for i in instances if not usable_keys(task, i)]
    if len(unusable) == len(instances):
        raise DataError(
            f"{source}: none of the {task_words(task.name).instances} has a reference any "
            "validation metric can use (docs/data.md: what a reference holds): every s_val "
            "would be 0"
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
    """On resume: the validation set (selection and confirmation parts) must be the one the
    run started with (a relative path resolved elsewhere, or a file that changed or vanished,
    must not switch it silently). Older checkpoints without the ids are compared through the
    rows of their validation results."""
    recorded = state.get("validation_ids")
    if isinstance(recorded, dict):
        parts = {"selection": vset.selection, "confirmation": vset.confirmation}
        for name, now_part in parts.items():
            before = recorded.get(name) or []
            before = list(before) if isinstance(before, list) else [before]
            now = [i.id for i in now_part]
            if before != now:
                _changed(name, before, now, vset)
        return
    memo = state.get("validation_memo")
    for result in memo.values() if isinstance(memo, dict) else ():
        rows = result.get("per_instance") or [] if isinstance(result, dict) else []
        before = [r.get("instance_id") for r in rows if isinstance(r, dict)]
        now = [i.id for i in vset.selection]
        if before != now:
            _changed("selection", before, now, vset)
        return


def _changed(part: str, before: list[Any], now: list[str], vset: ValidationSet) -> None:
    raise CheckpointError(
        f"the validation set changed since the run started: its {part} part was {len(before)} "
        f"meetings ({_ids(before)}), now {vset.source} gives {len(now)} ({_ids(now)}). "
        "Resume where the validation data is at the same path, or start a new run."
    )


def _ids(ids: Sequence[Any], n: int = 4) -> str:
    shown = ", ".join(map(str, ids[:n]))
    return shown + (f" and {len(ids) - n} more" if len(ids) > n else "")
