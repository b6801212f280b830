"""The end of a run: validate the final best, confirm the selection winner against the best
seed on the held-out confirmation part, apply the return rule, build the summary and write the
results into the run directory (best/, archive.json, front.json, summary.json); or, with no
policy to return, say so (``fail_run``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evotrainer.engine.components import Components
from evotrainer.engine.distill_step import adapter_effect
from evotrainer.engine.generation import draw_batch
from evotrainer.engine.state import RunState, cpu_seconds
from evotrainer.engine.telemetry import elapsed, phase
from evotrainer.engine.validate import archive, read_ratings, validate
from evotrainer.errors import BudgetExceeded, EvoTrainerError, RunFailed
from evotrainer.evaluation.confirmation import Confirmation, confirm
from evotrainer.evaluation.rank_judge import unseen_correlations
from evotrainer.llm.budget import Budget
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.run.checkpoint import atomic_write, dumps_strict
from evotrainer.run.estimate import VALIDATION
from evotrainer.run.rundir import lineage_chain
from evotrainer.types import ValidationResult


@dataclass
class RunResult:
    best: PolicyGenome
    best_s_val: float
    summary: dict[str, Any]


class Run(Protocol):
    """A run's components, state and directory (CoEvolution is one)."""

    @property
    def components(self) -> Components: ...

    @property
    def state(self) -> RunState: ...

    @property
    def run_dir(self) -> Path | None: ...


def finish(c: Components, s: RunState, stopped: str, run_dir: Path | None) -> RunResult:
    """Validate the final best, confirm the selection winner, apply the return rule, build
    the summary and write the results (into ``run_dir`` when there is one)."""
    if not s.inner.population:  # stopped before the first generation was scored
        fail_run(c, s, run_dir, stopped)  # writes summary.json, raises a clear error
    final_best = s.inner.best()
    last = None
    held_back = c.budget.reserve > 0  # calls kept for this validation (budget.reserve_final)
    c.budget.release_reserve()
    read_ratings(c, s)
    if stopped in ("completed", "timeout") or held_back:
        try:
            last = validate(c, s, [final_best], "final", race=True)[final_best.id]
            batch = draw_batch(c, s, s.epoch, s.drawn)
            div = c.meta.population_diversity(s.inner, batch)
            archive(c, s, final_best, s.harness, last, div)
        except BudgetExceeded as exc:
            if stopped != "budget":
                stopped = "budget"
                c.emit(ev.BUDGET_EXHAUSTED, message=str(exc), budget=c.budget.snapshot())
    entry = s.hopt.archive.best()
    if entry is None and final_best.id in c.judge.rejected:
        fail_run(c, s, run_dir, stopped, rejected=sorted(c.judge.rejected))  # none acceptable
    best = entry.policy if entry else final_best
    best_s = entry.s_val if entry else float("nan")
    confirmed = confirm_winner(c, s, best)
    if confirmed is not None and confirmed.returned != best.id:
        best = s.policies[confirmed.returned]
        best_s = c.validator.memo[best.id].s_val
    summary = build_summary(c, s, stopped, best, best_s, last, confirmed)
    summary["adapter_effect"] = adapter_effect(c, s, best)
    summary["per_meeting"] = per_meeting(c, s, best)
    if run_dir is not None:
        write_run_files(run_dir, c, s, summary, best)
    c.emit(ev.RUN_FINISHED, summary=summary)
    return RunResult(best, best_s, summary)


def per_meeting(c: Components, s: RunState, returned: PolicyGenome) -> dict[str, Any] | None:
    """The returned policy's s_val on each validation meeting next to the best seed's, and
    the difference (selection and confirmation parts; the report draws them)."""
    if s.initial is None:
        return None
    seed = s.initial[0]
    rows = []
    for part, validator in (("selection", c.validator), ("confirmation", c.confirmer)):
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


def confirm_winner(c: Components, s: RunState, winner: PolicyGenome) -> Confirmation | None:
    """The selection winner against the best seed on the confirmation part."""
    if c.confirmer is None or s.initial is None:
        return None
    seed = s.policies.get(s.initial[0])
    if seed is None:
        return None
    todo = {winner.id, seed.id} - set(c.confirmer.memo)
    if todo:
        n = len(c.confirmer.instances) * c.task.max_calls_per_rollout()
        phase(c, s, "confirmation", VALIDATION, len(todo) * n)
        c.emit(
            ev.VALIDATION_STARTED,
            role="confirmation",
            policies=len(todo),
            instances=len(c.confirmer.instances),
            race=False,
        )
    try:
        rows, measure = c.meta.per_meeting(c.confirmer)  # what selection used
        result = confirm(
            c.confirmer,
            winner,
            seed,
            c.cfg.validation.return_rule,
            c.cfg.seed,
            rows,
            measure,
            c.cfg.validation.refuse_loopier,
            seed_ids(s),
        )
    except BudgetExceeded as exc:
        c.emit(ev.WARNING, message=f"no confirmation (budget exhausted: {exc})")
        return None
    c.emit(ev.CONFIRMATION, **result.to_json())
    return result


def seed_ids(s: RunState) -> frozenset[str]:
    """The ids of the run's seeds: the hand-written ones and those a warm start imported (not
    the variations of them the first generation made)."""
    ids = {p.id for p in s.inner.seeds}
    ids |= {pid for pid, p in s.policies.items() if p.lineage.operator == "import"}
    return frozenset(ids)


def build_summary(
    c: Components,
    s: RunState,
    stopped: str,
    best: PolicyGenome,
    best_s: float,
    last: ValidationResult | None,
    confirmation: Confirmation | None,
) -> dict[str, Any]:
    """summary.json (without ``adapter_effect`` and ``per_meeting``, added after)."""
    b = c.budget.snapshot()
    init_id, init_s = s.initial or ("", float("nan"))
    vs = c.validation_set
    best_v = c.validator.memo.get(best.id)
    return {
        "stopped": stopped,
        "initial_s_val": init_s,
        "final_s_val": best_s,
        "last_best_s_val": last.s_val if last else None,
        "initial_policy": init_id,
        "best_policy": best.id,
        "returned_is_seed": best.id in seed_ids(s),
        "final_aggregates": dict(best_v.aggregates) if best_v else {},
        "initial_aggregates": dict(c.validator.memo[init_id].aggregates)
        if init_id in c.validator.memo
        else {},
        "generations": s.inner.generation,
        **outer_steps(c, s),
        "trial_generations": s.trial_generations,
        "harness": s.harness.to_json(),
        "validation": {
            "source": vs.source,
            "n": len(vs.selection),
            "confirmation_n": len(vs.confirmation),
            "confirmation_note": vs.confirmation_note,
            "synthetic": vs.synthetic,
            "truncation": c.validator.truncation,
        },
        "confirmation": confirmation.to_json() if confirmation else None,
        "meta": c.meta.summary(s.hopt.archive, best),
        "training": {
            "real_pool": len(c.real_pool.instances),
            "real_source": c.real_pool.source or None,
            "real_share": s.harness.real_share,
            "instances_seen": len(s.train_ids),
        },
        "racing": {
            "raced_out": c.judge.race.raced_out,
            "evaluations_saved": c.judge.race.race_saved,
        },
        "surrogate": c.surrogate.summary() if c.surrogate else None,
        "distillations": s.distillations,
        "rank_picture": unseen_correlations(
            c.validator.memo, s.hopt.decisions, s.hopt.base.weights, c.rank_scores
        ),
        "operators": {k: v.as_dict() for k, v in sorted(s.inner.op_stats.items())},
        "seed": c.cfg.seed,
        "model": c.stack.backend.model_id,
        # the teacher of the LLM-driven operators (operator_model); None: the agent model
        "operator_model": (
            c.operator_stack.backend.model_id if c.operator_stack is not c.stack else None
        ),
        "llm_calls": b["llm_calls"],
        "prompt_tokens": b["prompt_tokens"],
        "completion_tokens": b["completion_tokens"],
        # what varies between an identical cold and warm run: the backend-level counters
        "runtime": {k: b[k] for k in Budget.COUNTERS if k not in Budget.REQUEST_COUNTERS},
        "wall_s": round(elapsed(c, s), 2),
        "cpu_s": _cpu(s),
    }


def outer_steps(c: Components, s: RunState) -> dict[str, int]:
    """The outer steps that decided (the outer_step events: what the report counts) and those
    that were due but skipped (the calls left could not pay for them, or ran out inside one):
    a skipped step is never counted as taken (issue 51). With the outer loop off, the
    monitor's validations are neither."""
    if not c.cfg.outer.enabled:
        return {"outer_steps": 0, "outer_steps_skipped": 0}
    done = len(s.hopt.decisions)
    return {"outer_steps": done, "outer_steps_skipped": max(0, s.outer_step - done)}


def write_results(run: Run, summary: dict[str, Any], best: PolicyGenome) -> None:
    """``write_run_files`` into ``run``'s directory."""
    assert run.run_dir is not None
    write_run_files(run.run_dir, run.components, run.state, summary, best)


def mark_interrupted(run_dir: Path) -> bool:
    """After a Ctrl-C that came once the run had written its results (while the report was
    built, or the closing lines printed): ``summary.json``'s ``stopped`` becomes "interrupted"
    and the value it had is kept as ``interrupted_after``, so that no summary of an interrupted
    command says completed. False when there is no summary (nothing to mark) or it cannot be
    read."""
    path = run_dir / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    if not isinstance(summary, dict) or summary.get("stopped") == "interrupted":
        return False
    summary["interrupted_after"] = summary.get("stopped")
    summary["stopped"] = "interrupted"
    atomic_write(path, dumps_strict(summary), root=run_dir)
    return True


def write_run_files(
    rd: Path, c: Components, s: RunState, summary: dict[str, Any], best: PolicyGenome
) -> None:
    """best/ (prompt, policy with its lineage, validation rows), archive.json, front.json
    and summary.json, each written atomically, never through a link."""
    known = dict(s.policies)
    for e in s.hopt.archive.entries:
        known.setdefault(e.policy.id, e.policy)
    v = c.validator.memo.get(best.id)
    fit = s.inner.fitness.get(best.id)
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
    atomic_write(rd / "archive.json", dumps_strict(s.hopt.archive.to_json()), root=rd)
    atomic_write(rd / "front.json", dumps_strict(c.meta.front(s.hopt.archive)), root=rd)
    atomic_write(rd / "summary.json", dumps_strict(summary), root=rd)


def fail_run(
    c: Components,
    s: RunState,
    run_dir: Path | None,
    stopped: str,
    rejected: list[str] | None = None,
) -> None:
    """The run has no policy to return: it stopped (budget) before its first generation was
    scored, or every policy broke the constitution (``rejected``). Write a summary that says so
    (no best/), emit ``run_failed`` and raise a clear error."""
    msg, exc_type = _failure(c, stopped, rejected)
    b = c.budget.snapshot()
    summary = {
        "stopped": "rejected" if rejected is not None else stopped,
        "error": msg,
        "initial_s_val": None,
        "final_s_val": None,
        "best_policy": None,
        "generations": s.inner.generation,
        **outer_steps(c, s),
        "seed": c.cfg.seed,
        "model": c.stack.backend.model_id,
        "llm_calls": b["llm_calls"],
        "prompt_tokens": b["prompt_tokens"],
        "completion_tokens": b["completion_tokens"],
        "runtime": {k: v for k, v in b.items() if k not in ("llm_calls",)},
        "wall_s": round(elapsed(c, s), 2),
        "cpu_s": _cpu(s),
    }
    if run_dir is not None:
        atomic_write(run_dir / "summary.json", dumps_strict(summary), root=run_dir)
    c.emit(ev.RUN_FAILED, message=msg, summary=summary)
    raise exc_type(msg)


def _failure(
    c: Components, stopped: str, rejected: list[str] | None
) -> tuple[str, type[EvoTrainerError]]:
    """Why a run has no policy to return, and the error that says so."""
    if rejected is not None:
        rules = sorted({str(v).split(":")[0] for pid in rejected for v in c.judge.rejected[pid]})
        msg = (
            f"every policy broke the constitution ({len(rejected)} rejected; rules: "
            f"{', '.join(rules) or 'see events.jsonl'}): there is no acceptable policy to return. "
            "Look at the constitution_violation events; defences.extra_patterns and "
            "defences.allow_private_data set what is refused."
        )
        return msg, RunFailed
    inner = c.cfg.inner
    need = inner.population * inner.tasks_per_generation
    cap = c.cfg.budget.max_calls
    msg = (
        f"the run stopped ({stopped}) before its first generation was scored, so there is no "
        f"policy to return: the first generation alone needs {need} LLM calls "
        f"(inner.population x inner.tasks_per_generation) plus a validation"
        + (f", more than budget.max_calls={cap} allows. Raise budget.max_calls." if cap else ".")
    )
    return msg, BudgetExceeded


def _cpu(s: RunState) -> float | None:
    """The run's process CPU seconds across resumes (None: unknown, engine/state.py)."""
    cpu = cpu_seconds(s)
    return None if cpu is None else round(cpu, 1)
