"""Reference-based reward components: the task's validation metric, applied to *real training*
instances (a corpus with human references, never the validation set).

On a real training meeting the training reward can use the same judgement as the
meta-objective (ROUGE against the human reference, action-item F1, decision recall); on a
synthetic instance, which has no human reference, these components do not apply and the
ground-truth components carry the reward alone. ``ref_<key>`` is the component for metric key
``<key>``; it stands for the validation aggregate of the same key (the weakness analysis and the
proxy-gap monitor use that pairing). A metric row's feedback text about ``<key>`` (``{"feedback":
{key: text}}``, from a user's metric function: api/metric.py) is the component's feedback, which
reflection reads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from evotrainer.errors import ConfigError
from evotrainer.tasks.base import RewardComponent, ValidationMetric
from evotrainer.types import ComponentScore, Instance

PREFIX = "ref_"
# a metric row may carry feedback text on the answer, by metric key (``{"feedback": {key:
# text}}``): the component of that key passes it on as its feedback, which reflection reads
FEEDBACK = "feedback"


def metric_key(component: str) -> str | None:
    """The validation aggregate a reference component stands for (None for other components)."""
    return component[len(PREFIX) :] if component.startswith(PREFIX) else None


class _MetricRows:
    """One metric row per (instance, output), shared by the components of one metric (they
    would otherwise score the same output once per key). A small LRU: rows are cheap to redo."""

    def __init__(self, metric: ValidationMetric, size: int = 512) -> None:
        self.metric = metric
        self.size = size
        self._rows: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def row(self, instance: Instance, output: str, parsed: Any) -> dict[str, Any]:
        key = (instance.id, output)
        with self._lock:
            if key in self._rows:
                self._rows.move_to_end(key)
                return self._rows[key]
        row = dict(self.metric.score(instance, output, parsed))
        with self._lock:
            self._rows[key] = row
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)
        return row


class ReferenceComponent:
    """``ref_<key>``: the validation metric's ``key`` on a real training instance."""

    def __init__(self, key: str, rows: _MetricRows) -> None:
        self.key = key
        self.name = PREFIX + key
        self.description = f"{key} against the human reference (real training instances only)"
        self._rows = rows

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        if not instance.real:
            return ComponentScore(self.name, 0.0, "synthetic instance: no human reference", False)
        row = self._rows.row(instance, output, parsed)
        value = row.get(self.key)
        if value is None:
            return ComponentScore(self.name, 0.0, f"no reference for {self.key}", False)
        # a metric's own words on the answer (a user's metric function), for reflection
        said = row.get(FEEDBACK)
        said = said.get(self.key) if isinstance(said, dict) else None
        why = f": {said.strip()}" if isinstance(said, str) and said.strip() else ""
        return ComponentScore(self.name, float(value), f"{self.key} {float(value):.3f}{why}")

    def __repr__(self) -> str:
        return f"ReferenceComponent({self.key!r})"


def reference_components(
    metric: ValidationMetric, keys: Sequence[str]
) -> dict[str, RewardComponent]:
    """``ref_<key>`` components for ``keys`` of ``metric`` (ConfigError for an unknown key)."""
    unknown = [k for k in keys if k not in metric.keys]
    if unknown:
        raise ConfigError(
            f"harness.reference_components: unknown metric key(s) {unknown}; "
            f"the task's validation metric has {list(metric.keys)}"
        )
    rows = _MetricRows(metric)
    return {PREFIX + k: ReferenceComponent(k, rows) for k in keys}
