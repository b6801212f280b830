"""The end of a run: validate the final best, confirm the selection winner against the best
seed on the held-out confirmation part, apply the return rule, build the summary and write the
results into the run directory (best/, archive.json, front.json, summary.json); or, with no
policy to return, say so (``fail_run``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evotrainer.errors import BudgetExceeded, EvoTrainerError, RunFailed
from evotrainer.evaluation.confirmation import Confirmation, confirm
from evotrainer.evaluation.rank_judge import unseen_correlations
from evotrainer.llm.budget import Budget
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.run.checkpoint import atomic_write, dumps_strict
from evotrainer.run.rundir import lineage_chain
from evotrainer.types import ValidationResult


@dataclass
class RunResult:
    best: PolicyGenome
    best_s_val: float
    summary: dict[str, Any]


class Outcome:
    """The part of CoEvolution that ends a run (a mixin)."""

    def _finish(self, stopped: str) -> RunResult:
        if not self.inner.population:  # stopped before the first generation was scored
            fail_run(self, stopped)  # writes summary.json, raises a clear error
        final_best = self.inner.best()
        last = None
        held_back = self.budget.reserve > 0  # calls kept for this validation (budget.reserve_final)
        self.budget.release_reserve()
        self._read_ratings()
        if stopped in ("completed", "timeout") or held_back:
            try:
                last = self.validate([final_best], "final", race=True)[final_best.id]
                batch = self.batch(self.epoch, self.drawn)
                div = self.meta.population_diversity(self.inner, batch)
                self._archive(final_best, self.harness, last, div)
            except BudgetExceeded as exc:
                if stopped != "budget":
                    stopped = "budget"
                    self.emit(ev.BUDGET_EXHAUSTED, message=str(exc), budget=self.budget.snapshot())
        entry = self.hopt.archive.best()
        if entry is None and final_best.id in self.judge.rejected:
            fail_run(self, stopped, rejected=sorted(self.judge.rejected))  # no acceptable policy
        best = entry.policy if entry else final_best
        best_s = entry.s_val if entry else float("nan")
        confirmed = self._confirm(best)
        if confirmed is not None and confirmed.returned != best.id:
            best = self.policies[confirmed.returned]
            best_s = self.validator.memo[best.id].s_val
        summary = self.summary(stopped, best, best_s, last)
        summary["adapter_effect"] = self._adapter_effect(best)
        summary["per_meeting"] = self._per_meeting(best)
        if self.run_dir is not None:
            write_results(self, summary, best)
        self.emit(ev.RUN_FINISHED, summary=summary)
        return RunResult(best, best_s, summary)

    def _per_meeting(self, returned: PolicyGenome) -> dict[str, Any] | None:
        """The returned policy's s_val on each validation meeting next to the best seed's, and
        the difference (selection and confirmation parts; the report draws them)."""
        if self.initial is None:
            return None
        seed = self.initial[0]
        rows = []
        for part, validator in (("selection", self.validator), ("confirmation", self.confirmer)):
            mine = validator.memo.get(returned.id) if validator else None
            theirs = validator.memo.get(seed) if validator else None
            if validator is None or mine is None or theirs is None:
                continue
            a, b = validator.row_s_vals(mine), validator.row_s_vals(theirs)
            rows += [
                {
                    "instance_id": i.id,
                    "part": part,
                    "returned": a[i.id],
                    "best_seed": b[i.id],
                    "delta": a[i.id] - b[i.id],
                }
                for i in validator.instances
                if i.id in a and i.id in b
            ]
        return {"returned": returned.id, "best_seed": seed, "rows": rows}

    def _confirm(self, winner: PolicyGenome) -> Confirmation | None:
        """The selection winner against the best seed on the confirmation part."""
        if self.confirmer is None or self.initial is None:
            return None
        seed = self.policies.get(self.initial[0])
        if seed is None:
            return None
        todo = {winner.id, seed.id} - set(self.confirmer.memo)
        if todo:
            self.emit(
                ev.VALIDATION_STARTED,
                role="confirmation",
                policies=len(todo),
                instances=len(self.confirmer.instances),
                race=False,
            )
        try:
            rows, measure = self.meta.per_meeting(self.confirmer)  # what selection used
            c = confirm(
                self.confirmer,
                winner,
                seed,
                self.cfg.validation.return_rule,
                self.cfg.seed,
                rows,
                measure,
            )
        except BudgetExceeded as exc:
            self.emit(ev.WARNING, message=f"no confirmation (budget exhausted: {exc})")
            return None
        self.confirmation = c
        self.emit(ev.CONFIRMATION, **c.to_json())
        return c

    def summary(
        self,
        stopped: str,
        best: PolicyGenome,
        best_s: float,
        last: ValidationResult | None,
    ) -> dict[str, Any]:
        b = self.budget.snapshot()
        init_id, init_s = self.initial or ("", float("nan"))
        vs = self.validation_set
        best_v = self.validator.memo.get(best.id)
        return {
            "stopped": stopped,
            "initial_s_val": init_s,
            "final_s_val": best_s,
            "last_best_s_val": last.s_val if last else None,
            "initial_policy": init_id,
            "best_policy": best.id,
            "final_aggregates": dict(best_v.aggregates) if best_v else {},
            "initial_aggregates": dict(self.validator.memo[init_id].aggregates)
            if init_id in self.validator.memo
            else {},
            "generations": self.inner.generation,
            "outer_steps": self.outer_step,
            "trial_generations": self.trial_generations,
            "harness": self.harness.to_json(),
            "validation": {
                "source": vs.source,
                "n": len(vs.selection),
                "confirmation_n": len(vs.confirmation),
                "confirmation_note": vs.confirmation_note,
                "synthetic": vs.synthetic,
                "truncation": self.validator.truncation,
            },
            "confirmation": self.confirmation.to_json() if self.confirmation else None,
            "meta": self.meta.summary(self.hopt.archive, best),
            "training": {
                "real_pool": len(self.real_pool.instances),
                "real_source": self.real_pool.source or None,
                "real_share": self.harness.real_share,
                "instances_seen": len(self.train_ids),
            },
            "racing": {
                "raced_out": self.judge.raced_out,
                "evaluations_saved": self.judge.race_saved,
            },
            "surrogate": self.surrogate.summary() if self.surrogate else None,
            "distillations": self.distillations,
            "rank_picture": unseen_correlations(
                self.validator.memo, self.hopt.decisions, self.hopt.base.weights, self._rank_scores
            ),
            "operators": {k: v.as_dict() for k, v in sorted(self.inner.op_stats.items())},
            "seed": self.cfg.seed,
            "model": self.stack.backend.model_id,
            # the teacher of the LLM-driven operators (operator_model); None: the agent model
            "operator_model": (
                self.operator_stack.backend.model_id
                if self.operator_stack is not self.stack
                else None
            ),
            "llm_calls": b["llm_calls"],
            "prompt_tokens": b["prompt_tokens"],
            "completion_tokens": b["completion_tokens"],
            # what varies between an identical cold and warm run: the backend-level counters
            "runtime": {k: b[k] for k in Budget.COUNTERS if k not in Budget.REQUEST_COUNTERS},
            "wall_s": round(self.elapsed(), 2),
        }


def write_results(co: Outcome, summary: dict[str, Any], best: PolicyGenome) -> None:
    rd = co.run_dir
    assert rd is not None
    known = dict(co.policies)
    for e in co.hopt.archive.entries:
        known.setdefault(e.policy.id, e.policy)
    v = co.validator.memo.get(best.id)
    fit = co.inner.fitness.get(best.id)
    atomic_write(rd / "best" / "prompt.txt", best.render() + "\n", root=rd)
    policy_doc = {
        **best.to_json(),
        "text": best.render(),
        "s_val": v.s_val if v else None,
        "validation": dict(v.aggregates) if v else {},
        "train_fitness": fit.fitness if fit else None,
        "train_components": dict(fit.components) if fit else {},
        "ancestors": lineage_chain(best, known),
    }
    atomic_write(rd / "best" / "policy.json", dumps_strict(policy_doc), root=rd)
    if v:
        atomic_write(rd / "best" / "validation.json", dumps_strict(list(v.per_instance)), root=rd)
    atomic_write(rd / "archive.json", dumps_strict(co.hopt.archive.to_json()), root=rd)
    atomic_write(rd / "front.json", dumps_strict(co.meta.front(co.hopt.archive)), root=rd)
    atomic_write(rd / "summary.json", dumps_strict(summary), root=rd)


def fail_run(co: Outcome, stopped: str, rejected: list[str] | None = None) -> None:
    """The run has no policy to return: it stopped (budget) before its first generation was
    scored, or every policy broke the constitution (``rejected``). Write a summary that says so
    (no best/), emit ``run_failed`` and raise a clear error."""
    inner = co.cfg.inner
    exc_type: type[EvoTrainerError]
    if rejected is not None:
        rules = sorted({str(v).split(":")[0] for pid in rejected for v in co.judge.rejected[pid]})
        msg = (
            f"every policy broke the constitution ({len(rejected)} rejected; rules: "
            f"{', '.join(rules) or 'see events.jsonl'}): there is no acceptable policy to return. "
            "Look at the constitution_violation events; defences.extra_patterns and "
            "defences.allow_private_data set what is refused."
        )
        exc_type = RunFailed
    else:
        need = inner.population * inner.tasks_per_generation
        cap = co.cfg.budget.max_calls
        msg = (
            f"the run stopped ({stopped}) before its first generation was scored, so there is no "
            f"policy to return: the first generation alone needs {need} LLM calls "
            f"(inner.population x inner.tasks_per_generation) plus a validation"
            + (
                f", more than budget.max_calls={cap} allows. Raise budget.max_calls."
                if cap
                else "."
            )
        )
        exc_type = BudgetExceeded
    b = co.budget.snapshot()
    summary = {
        "stopped": "rejected" if rejected is not None else stopped,
        "error": msg,
        "initial_s_val": None,
        "final_s_val": None,
        "best_policy": None,
        "generations": co.inner.generation,
        "outer_steps": co.outer_step,
        "seed": co.cfg.seed,
        "model": co.stack.backend.model_id,
        "llm_calls": b["llm_calls"],
        "prompt_tokens": b["prompt_tokens"],
        "completion_tokens": b["completion_tokens"],
        "runtime": {k: v for k, v in b.items() if k not in ("llm_calls",)},
        "wall_s": round(co.elapsed(), 2),
    }
    if co.run_dir is not None:
        atomic_write(co.run_dir / "summary.json", dumps_strict(summary), root=co.run_dir)
    co.emit(ev.RUN_FAILED, message=msg, summary=summary)
    raise exc_type(msg)
