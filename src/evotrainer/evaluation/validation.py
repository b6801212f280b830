"""Meta-evaluation: a policy on the fixed validation set -> per-meeting metrics -> s_val.

s_val is the harness's fitness (the meta-objective). Results are memoised by policy id, so a
policy validated once (e.g. the incumbent best, or a trial that did not change the best) costs
nothing the second time; several policies are validated instance-major for prefix reuse.

Racing (``race``, evaluation/racing.py): candidates first meet the first ``first`` instances;
one whose paired difference to a reference (the best validated so far) on those is below
``-margin`` stops there with an estimated s_val (the reference's plus the paired difference,
``partial=True``, not memoised as a full result); the others meet the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evotrainer.errors import MetricError
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.racing import Racing
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import (  # s_val: defined with the metric
    Task,
    combine_s_val,
    parse_rollout,
)
from evotrainer.types import Instance, ValidationResult


class Validator:
    def __init__(
        self,
        task: Task,
        evaluator: Evaluator,
        instances: Sequence[Instance],
        s_val_weights: Mapping[str, float],
        source: str,
        truncation: str = "",
        probe: Callable[[list[PolicyGenome]], dict[str, dict[str, float | None]]] | None = None,
    ) -> None:
        self.task = task
        self.evaluator = evaluator
        self.instances = list(instances)
        self.weights = dict(s_val_weights)
        self.source = source
        self.truncation = truncation
        self.metric = task.validation_metric()
        self.probe = probe  # extra metrics per policy, e.g. robustness on hostile inputs
        self.memo: dict[str, ValidationResult] = {}
        self.raced_out: set[str] = set()  # ids whose last race stopped early (not in memo)

    def validate(self, policies: Sequence[PolicyGenome]) -> dict[str, ValidationResult]:
        todo = [p for p in {p.id: p for p in policies}.values() if p.id not in self.memo]
        if todo:
            extra = self.probe(todo) if self.probe else {}
            for p, rows in zip(todo, self._rows(todo, self.instances), strict=True):
                agg = {**self.metric.aggregate(rows), **extra.get(p.id, {})}
                self.memo[p.id] = ValidationResult(
                    s_val=combine_s_val(agg, self.weights),
                    aggregates=agg,
                    per_instance=tuple(rows),
                    n=len(rows),
                    truncation=self.truncation,
                )
        return {p.id: self.memo[p.id] for p in policies}

    def race(
        self,
        policies: Sequence[PolicyGenome],
        against: PolicyGenome | None,
        first: int,
        margin: float,
    ) -> dict[str, ValidationResult]:
        """Validate ``policies``, racing against the (already validated) ``against``."""
        racing = Racing(first, margin)
        ref = self.memo.get(against.id) if against is not None else None
        todo = [p for p in {p.id: p for p in policies}.values() if p.id not in self.memo]
        if ref is None or not racing.applies(len(self.instances)) or not todo:
            return self.validate(policies)
        head = racing.head(self.instances)
        ref_rows = self.row_s_vals(ref)
        out: dict[str, ValidationResult] = {}
        promoted = []
        for p, rows in zip(todo, self._rows(todo, head), strict=True):
            mine = {r["instance_id"]: combine_s_val(r, self.weights) for r in rows}
            d = sum(mine[i] - ref_rows[i] for i in mine) / len(mine)
            if racing.goes_on(d, 0.0):  # d: the estimate's difference to the reference
                promoted.append(p)
            else:
                self.raced_out.add(p.id)
                agg = self.metric.aggregate(rows)
                out[p.id] = ValidationResult(
                    # the paired estimate, floored at 0: an s_val is never negative (a
                    # raced-out policy lost by more than the reference's whole score there)
                    s_val=max(0.0, ref.s_val + d),
                    aggregates=agg,
                    per_instance=tuple(rows),
                    n=len(rows),
                    truncation=self.truncation,
                    partial=True,
                )
        full = self.validate([*promoted, *(p for p in policies if p.id in self.memo)])
        return {p.id: out.get(p.id) or full[p.id] for p in policies}

    def row_s_vals(self, result: ValidationResult) -> dict[str, float]:
        """Instance id -> that instance's s_val (its row's metrics combined with the weights)."""
        return {r["instance_id"]: combine_s_val(r, self.weights) for r in result.per_instance}

    def _rows(
        self, policies: Sequence[PolicyGenome], instances: Sequence[Instance]
    ) -> list[list[dict[str, Any]]]:
        """Metric rows of each policy on ``instances`` (evaluated instance-major)."""
        records = self.evaluator.evaluate(policies, instances)
        out = []
        for p in policies:
            rows: list[dict[str, Any]] = []
            for inst in instances:
                rec = records[(p.id, inst.id)]
                r = rec.rollout
                parsed = parse_rollout(self.task, inst, r)
                try:
                    metrics = self.metric.score(inst, r.output, parsed)
                except MetricError:  # a metric that returns no score: every score is wrong
                    raise
                except Exception as exc:  # noqa: BLE001 - a metric bug scores 0
                    metrics = {k: 0.0 for k in self.metric.keys}
                    metrics["error"] = f"metric error: {exc}"  # type: ignore[assignment]
                if r.error is not None:  # a failed answer scores 0, not like an empty one
                    # (its numbers; text and a metric's feedback stay as they are)
                    metrics = {
                        k: 0.0 if isinstance(v, int | float) else v for k, v in metrics.items()
                    }
                rows.append(
                    {
                        "instance_id": inst.id,
                        "length_bucket": inst.length_bucket,
                        "truncated": r.truncated,
                        "error": r.error,
                        "output": r.output,
                        **({"raw_output": r.raw_output} if r.raw_output is not None else {}),
                        "rewards": rec.vector.as_dict(),
                        "reference": self.task.reference_text(inst),
                        **metrics,
                    }
                )
                if r.turns and len(r.turns) > 1:  # a multi-turn episode: what each turn did
                    rows[-1]["turns"] = [
                        {"output": t.output, "observation": t.observation} for t in r.turns
                    ]
            out.append(rows)
        return out

    def validate_one(self, policy: PolicyGenome) -> ValidationResult:
        return self.validate([policy])[policy.id]

    def s_val_by_bucket(self, result: ValidationResult) -> dict[str, float]:
        buckets: dict[str, list[Mapping[str, Any]]] = {}
        for row in result.per_instance:
            buckets.setdefault(row["length_bucket"], []).append(row)
        return {
            b: combine_s_val(self.metric.aggregate(rows), self.weights)
            for b, rows in buckets.items()
        }
