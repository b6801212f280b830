"""A metric function as the run's s_val (the Python API's ``metric``).

``metric(example, answer)`` scores one answer of the agent to one example (the example as the
caller gave it: a dict of the task's fields). It returns

- a number in [0, 1] (a bool counts: True is 1.0);
- a pair ``(score, feedback)``: the feedback is text saying what the answer got wrong;
- or an object with ``.score`` and ``.feedback`` (as dspy's ``Prediction`` or gepa's
  ``ScoreWithFeedback``), or a mapping with those keys.

Its score is the metric key ``metric`` of every validation row, beside the task's own keys, and
s_val is its mean (``outer.s_val_weights: {metric: 1}``): selection, the harness's fitness and the
held-out confirmation all judge by it. On a real training example (the trainset) it is also a
reward component, ``ref_metric``, whose feedback text is what reflective mutation reads. A metric
that raises on one answer scores that answer 0, the exception as its feedback (a warning is
logged once); one that returns anything else stops the run with MetricError, naming what it
returned.
"""

from __future__ import annotations

import copy
import logging
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evotrainer.errors import MetricError
from evotrainer.harness.reference import FEEDBACK
from evotrainer.tasks.base import Task, ValidationMetric, reference_free_keys
from evotrainer.types import Instance

log = logging.getLogger("evotrainer")

KEY = "metric"  # the metric function's key in the validation rows and in s_val
MetricFn = Callable[[Any, str], Any]
CONTRACT = (
    "a metric returns a score in [0, 1] (a number or a bool), a (score, feedback) pair, or an "
    "object with .score and .feedback"
)


@dataclass(frozen=True)
class Scored:
    score: float
    feedback: str = ""


def scored(result: Any, where: str) -> Scored:
    """What a metric function returned, as a score and feedback; MetricError naming ``where``
    (the metric and the example) and what it returned, when it is no score."""
    feedback: Any = ""
    if isinstance(result, tuple | list) and len(result) == 2:
        value, feedback = result
    elif isinstance(result, Mapping) and "score" in result:
        value, feedback = result["score"], result.get("feedback", "")
    elif not isinstance(result, numbers.Real) and hasattr(result, "score"):
        value, feedback = result.score, getattr(result, "feedback", "")
    else:
        value = result
    if not isinstance(value, numbers.Real):
        raise MetricError(f"{where} returned {_shown(result)}: {CONTRACT}")
    score = float(value)
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise MetricError(f"{where} returned the score {score}, not in [0, 1]: {CONTRACT}")
    if feedback is None:
        feedback = ""
    if not isinstance(feedback, str):
        raise MetricError(
            f"{where} returned the feedback {_shown(feedback)}, not a text: {CONTRACT}"
        )
    return Scored(score, feedback)


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:80]}{'...' if len(text) > 80 else ''}"


def check_metric(metric: Any) -> MetricFn:
    if not callable(metric):
        raise MetricError(
            f"metric is a {type(metric).__name__}, not a function of (example, answer)"
        )
    return metric


class ExampleMetric:
    """The task's validation metric plus the key ``metric``: the caller's function on the
    example each instance came from (None, not applicable, on an instance that came from no
    example: a synthetic one)."""

    def __init__(self, fn: MetricFn, base: ValidationMetric, examples: Mapping[str, Any]) -> None:
        self.fn = fn
        self.base = base
        self.examples = dict(examples)
        self.keys: tuple[str, ...] = (*base.keys, KEY)
        self.reference_free_keys = tuple(reference_free_keys(base))
        self.name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self._warned = False

    def score(self, instance: Instance, output: str, parsed: Any) -> dict[str, Any]:
        row: dict[str, Any] = dict(self.base.score(instance, output, parsed))
        example = self.examples.get(instance.id)
        if example is None:
            row[KEY] = None
            return row
        try:
            result = self.fn(example, output)
        except Exception as exc:  # noqa: BLE001 - one answer the metric cannot score: 0
            self._warn(instance, exc)
            row[KEY] = 0.0
            row[FEEDBACK] = {KEY: f"the metric raised {type(exc).__name__}: {exc}"}
            return row
        s = scored(result, f"metric {self.name} on example {instance.id!r}")
        row[KEY] = s.score
        if s.feedback.strip():
            row[FEEDBACK] = {KEY: s.feedback}
        return row

    def aggregate(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        out = dict(self.base.aggregate(rows))
        values = [float(r[KEY]) for r in rows if isinstance(r.get(KEY), int | float)]
        if values:
            out[KEY] = sum(values) / len(values)
        return out

    def _warn(self, instance: Instance, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            log.warning(
                "metric %s raised %s: %s on example %r: that answer scores 0 (the exception is "
                "its feedback); later ones are not logged",
                self.name,
                type(exc).__name__,
                exc,
                instance.id,
            )


def with_metric(task: Task, metric: ValidationMetric) -> Task:
    """``task`` judged by ``metric``: a copy of it whose class is a subclass of its own that
    returns ``metric`` as its validation metric, so it keeps every optional capability
    (``tasks.base``'s protocols) it has."""
    cls = type(task)
    scored_cls = type(
        cls.__name__,
        (cls,),
        {
            "__slots__": (),
            "__module__": cls.__module__,
            "__doc__": cls.__doc__,
            "validation_metric": lambda self: metric,
        },
    )
    judged = copy.copy(task)
    object.__setattr__(judged, "__class__", scored_cls)
    return judged
