"""The driver's view of the meta-objective: the vector of a validated policy (quality and
conciseness from its validation, diversity of the population it came from, robustness from the
probe, human from people's ratings), the meta score that ranks the archive, and the archive's
Pareto front (front.json, the report, warm starts)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from evotrainer.config import CONCISENESS, HUMAN, QUALITY, MetaConfig
from evotrainer.errors import ConfigError
from evotrainer.evaluation.confirmation import RowScores
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.objectives import MetaObjective, Vector, output_diversity
from evotrainer.evaluation.pareto import non_dominated
from evotrainer.evaluation.validation import Validator
from evotrainer.policy.archive import Archive, ArchiveEntry
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import combine_s_val
from evotrainer.types import Instance, ValidationResult


class Population(Protocol):
    """The inner loop's optimiser as diversity reads it (loops/inner.py): the members that met
    the whole batch."""

    def complete(self, batch: Sequence[Instance]) -> list[PolicyGenome]: ...


class PeopleFeedback(Protocol):
    """People's ratings as the human objective reads them (review/feedback.py: HumanFeedback):
    the fitted model (None until enough ratings), the ratings read, and how to read them."""

    model: Any
    seen: int

    def attach(self, run_dir: Path) -> None: ...

    def refresh(
        self, rows_of: Callable[[str], Any], selection_ids: Collection[str]
    ) -> dict[str, Any] | None: ...


Row = Mapping[str, Any]


class MetaJudge:
    def __init__(
        self,
        cfg: MetaConfig,
        validator: Validator,
        evaluator: Evaluator,
        feedback: PeopleFeedback,
    ) -> None:
        """``feedback``: people's ratings (review/feedback.py), the human objective's data."""
        self.objective = MetaObjective(cfg)
        self.validator = validator
        self.evaluator = evaluator
        self.feedback = feedback
        self.baseline: str | None = None  # the best seed: the human objective's reference

    def use_baseline(self, policy_id: str | None) -> None:
        """The policy people's preferences are measured against: the run's best seed (its
        RunState's ``initial``), once the seeds are validated or the state is loaded."""
        self.baseline = policy_id

    # -- objectives ---------------------------------------------------------------------------
    def population_diversity(self, opt: Population, batch: Sequence[Instance]) -> float | None:
        """Diversity of the population's stored outputs on the batch (no LLM call). Only members
        that met the whole batch count (a child raced out after a few instances does not), so
        a resumed run, which re-reads every member's outputs, measures the same."""
        store = self.evaluator.store
        members = opt.complete(batch)
        outputs = [
            [
                rec.rollout.output
                for p in members
                if (rec := store.get((p.id, inst.id))) is not None and rec.rollout.error is None
            ]
            for inst in batch
        ]
        return output_diversity(outputs)

    def rows_of(self, policy_id: str) -> dict[str, Row] | None:
        r = self.validator.memo.get(policy_id)
        return _by_meeting(r.per_instance) if r is not None else None

    def human(self, policy_id: str, result: ValidationResult) -> float | None:
        model, base = self.feedback.model, self.baseline
        base_rows = self.rows_of(base) if base else None
        if model is None or base is None or not base_rows:
            return None
        return model.preference(policy_id, _by_meeting(result.per_instance), base, base_rows)

    def vector(
        self, policy_id: str, result: ValidationResult, diversity: float | None = None
    ) -> Vector:
        return self.objective.vector(result, diversity, self.human(policy_id, result))

    def score(self, vector: Mapping[str, float]) -> float:
        return self.objective.score(vector)

    def entry_vector(self, e: ArchiveEntry) -> Vector:
        """An archived pair's vector now: its stored objectives plus the current human one."""
        v = dict(e.objectives) or {"quality": e.s_val}
        result = self.validator.memo.get(e.policy.id)
        h = self.human(e.policy.id, result) if result is not None else None
        if h is not None:
            v["human"] = h
        return v

    def rank(self, e: ArchiveEntry) -> float:
        """The archive's ranking: the meta score of the entry's vector."""
        return self.score(self.entry_vector(e))

    def per_meeting(self, validator: Validator) -> tuple[RowScores, str]:
        """Per-meeting meta scores on ``validator``'s meetings (for the confirmation): quality,
        conciseness and, with ratings, people's predicted preference over the baseline on that
        meeting; robustness and diversity are not per meeting and are left out. With only
        quality weighted, this is s_val per meeting. Also the name of the measure."""
        per_meeting_keys = (QUALITY, CONCISENESS, HUMAN)
        used = [k for k in per_meeting_keys if self.objective.weights[k] > 0]
        if self.feedback.model is None and "human" in used:
            used.remove("human")
        measure = "s_val" if used in ([], ["quality"]) else "meta score (" + ", ".join(used) + ")"

        def rows(policy_id: str, result: ValidationResult) -> dict[str, float]:
            base = validator.memo.get(self.baseline) if self.baseline else None
            base_rows = _by_meeting(base.per_instance) if base is not None else {}
            model = self.feedback.model
            out = {}
            for r in result.per_instance:
                mid = str(r["instance_id"])
                v = {"quality": combine_s_val(r, validator.weights)}
                concise = self.objective.cfg.concise_component
                c = (r.get("rewards") or {}).get(concise) if concise else None
                if c is not None:
                    v[CONCISENESS] = 0.0 if r.get("error") else float(c)
                if model is not None and self.baseline and mid in base_rows:
                    h = model.preference(policy_id, {mid: r}, self.baseline, {mid: base_rows[mid]})
                    if h is not None:
                        v["human"] = h
                out[mid] = self.score({k: x for k, x in v.items() if k in used or k == "quality"})
            return out

        return rows, measure

    # -- people -------------------------------------------------------------------------------
    def attach(self, run_dir: Path) -> None:
        self.feedback.attach(run_dir)

    def read_ratings(self) -> dict[str, Any] | None:
        ids = {i.id for i in self.validator.instances}
        return self.feedback.refresh(self.rows_of, ids)

    def summary(self, archive: Archive, best: PolicyGenome) -> dict[str, Any]:
        """The meta-objective block of summary.json: the returned policy's vector and what
        people said."""
        entry = next((e for e in archive.entries if e.policy.id == best.id), None)
        vector = self.entry_vector(entry) if entry else None
        model = self.feedback.model
        return {
            "selection": self.objective.cfg.selection,
            "weights": dict(self.objective.weights),
            "objectives": vector,
            "meta_score": self.score(vector) if vector else None,
            "human": {
                "ratings": max(self.feedback.seen, 0),
                "used": model is not None,
                "feature_weights": model.feature_weights() if model else {},
            },
        }

    # -- the front ----------------------------------------------------------------------------
    def front(self, archive: Archive) -> dict[str, Any]:
        """The archive's Pareto front over the weighted objectives measured for every entry
        (``front`` is None when pymoo is not installed)."""
        entries = archive.entries
        vectors = [self.entry_vector(e) for e in entries]
        axes = self.objective.axes(vectors) if vectors else ["quality"]
        members: list[int] | None
        try:
            members = non_dominated([[v[k] for k in axes] for v in vectors])
        except ConfigError:  # no pymoo: the front is not computed, the rest stays
            members = None
        return {
            "axes": axes,
            "selection": self.objective.cfg.selection,
            "weights": dict(self.objective.weights),
            "front": None
            if members is None
            else [
                {
                    "policy": entries[i].policy.to_json(),
                    "harness": entries[i].harness.to_json(),
                    "objectives": vectors[i],
                    "meta_score": self.score(vectors[i]),
                    "s_val": entries[i].s_val,
                    "generation": entries[i].generation,
                    "outer_step": entries[i].outer_step,
                }
                for i in sorted(members, key=lambda i: -self.score(vectors[i]))
            ],
            "entries": [
                {"policy_id": e.policy.id, "objectives": v, "meta_score": self.score(v)}
                for e, v in zip(entries, vectors, strict=True)
            ],
        }


def _by_meeting(rows: Sequence[Row]) -> dict[str, Row]:
    return {str(r["instance_id"]): r for r in rows if "instance_id" in r}
