"""The distillation step (``distill:``, issue 31; docs/distillation.md): after ``distill.after``
generations of prompt evolution (then every ``distill.every``), what the best policies answered
is trained into a LoRA adapter, and prompt evolution goes on on the new weights (prompts ->
weights -> prompts, as DSPy's BetterTogether).

1. Pairs: the best policies' answers on training instances (and on ``fresh_instances`` more,
   answered by the best policy), the best-rewarded per instance, the top ``keep_share`` kept by
   the current harness's reward; its real share of human references joins
   (harness/distill_pairs.py).
2. Training: ``distill.train.train_adapter`` (the ``distill`` extra), progress as events; the
   adapter is written to ``RUN_DIR/adapters/<sha256>.gguf``.
   A distillation the calls left cannot pay for is skipped and says so; an outer step due
   at the same generation leaves it its calls (engine/outer_step.py, ``outer_affordable``).
3. Decision: the population, carrying the adapter, is scored on the current batch, and its best
   ``validate_top`` race the incumbent on the selection part. The adapter is kept only when one
   of them validates above the best validated policy without it; then the population carries
   it (each policy's lineage records the step), else everything goes on as before.

A kill during training loses the step only: the checkpoint before it says it is due, and a
resume trains the same adapter again (same pairs, seed and threads: the same bytes).
"""

from __future__ import annotations

from typing import Any

from evotrainer.distill import train as lora
from evotrainer.distill.settings import LoraSettings
from evotrainer.engine.components import Components
from evotrainer.engine.generation import draw_batch, fitness_of
from evotrainer.engine.state import RunState
from evotrainer.engine.validate import archive, validate
from evotrainer.errors import BudgetExceeded
from evotrainer.harness.distill_pairs import PairChoice, best_per_instance, choose_pairs
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.types import Instance, Lineage, ScoreVector


def distill_due_after(c: Components, s: RunState, generation: int) -> bool:
    """Whether a distillation round follows ``generation``."""
    d = c.cfg.distill
    if not d.enabled or s.distill_rounds >= d.max_rounds or generation < d.after:
        return False
    if generation == d.after:
        return True
    return bool(d.every) and (generation - d.after) % d.every == 0


def distill_cost(c: Components) -> int:
    """An upper estimate of one distillation's calls: the ``fresh_instances`` the best policy
    answers, the population carrying the adapter scored on a batch, and its ``validate_top``
    on the selection part (no racing cut). Training itself costs CPU, not calls."""
    d, inner = c.cfg.distill, c.cfg.inner
    n_val = len(c.validator.instances)
    return (
        d.fresh_instances + inner.population * inner.tasks_per_generation + d.validate_top * n_val
    )


def distill_affordable(c: Components) -> tuple[bool, str]:
    """Whether the calls left (``budget.max_calls``, less the reserve) pay for a distillation:
    one that runs out mid-way trains an adapter nobody can validate, and ends the run."""
    left = c.budget.calls_left()
    cost = distill_cost(c)
    if left is None or cost <= left:
        return True, ""
    return False, (
        f"skipped: a distillation may cost {cost} LLM calls (fresh answers, the population on "
        f"the new weights, {c.cfg.distill.validate_top} validations), {left} are left before the "
        "final validation"
    )


class DistillStep:
    """One distillation round over the run's components and state: ``DistillStep(c,
    s).run(batch)``."""

    def __init__(self, c: Components, s: RunState) -> None:
        self.c = c
        self.s = s

    def run(self, batch: list[Instance]) -> None:
        c, s = self.c, self.s
        s.distill_due = False
        s.distill_rounds += 1
        n = s.distill_rounds
        affordable, why = distill_affordable(c)
        if not affordable:
            none = PairChoice(pairs=())
            c.emit(ev.DISTILL_STARTED, round=n, generation=s.inner.generation, **none.to_json())
            self._distill_record(n, None, none, None, kept=False, why=why)
            return
        choice = self._distill_pairs(batch)
        c.emit(ev.DISTILL_STARTED, round=n, generation=s.inner.generation, **choice.to_json())
        if len(choice.pairs) < c.cfg.distill.min_pairs:
            why = f"{len(choice.pairs)} pairs kept, fewer than distill.min_pairs"
            self._distill_record(n, None, choice, None, kept=False, why=why)
            return
        result = self._train_adapter(choice)
        sha = result["sha256"]
        before = s.hopt.archive.best()
        rebased = self._with_adapter(sha)
        fit = fitness_of(c, s, rebased, batch, s.harness, drawn=s.drawn)
        top = sorted(rebased, key=lambda p: (-fit[p.id].fitness, p.id))[
            : c.cfg.distill.validate_top
        ]
        incumbent = before.policy if before is not None else s.inner.best()
        results = validate(c, s, top, "distilled", race=True)
        best = max(top, key=lambda p: (results[p.id].s_val, p.id))
        base_s = before.s_val if before is not None else float("-inf")
        kept = not results[best.id].partial and results[best.id].s_val > base_s
        if kept:
            s.inner.rebase(rebased, fit, protect=best.id)
            archive(c, s, best, s.harness, results[best.id], 0.0)
            why = f"{best.id} validates {results[best.id].s_val:.4f} > {base_s:.4f} without it"
        else:
            why = (
                f"the best with the adapter validates {results[best.id].s_val:.4f}, not above "
                f"{base_s:.4f} ({incumbent.id}, without it): the adapter is set aside"
            )
        outcome = {
            "with_adapter": {"policy": best.id, "s_val": results[best.id].s_val},
            "without": {"policy": incumbent.id, "s_val": base_s},
        }
        self._distill_record(n, result, choice, outcome, kept=kept, why=why)

    def _distill_pairs(self, batch: list[Instance]) -> PairChoice:
        c, s = self.c, self.s
        d = c.cfg.distill
        ranked = s.inner.ranked(s.inner.population)[: d.top_policies]
        # after a resume only the instances re-read since are in memory: those count
        known = c.evaluator.instances
        seen = [known[i] for i in sorted(s.train_ids) if i in known]
        fresh = self._fresh_instances(ranked[0]) if d.fresh_instances else []
        instances = seen + [i for i in fresh if i.id not in s.train_ids or i not in seen]

        def answer(p: PolicyGenome, inst: Instance) -> tuple[str, ScoreVector] | None:
            rec = c.evaluator.store.get((p.id, inst.id))
            if rec is None or rec.rollout.error is not None:
                return None
            return rec.rollout.output, rec.vector

        candidates = best_per_instance(ranked, instances, answer, s.harness.weights)
        references = [
            (i, text)
            for i in c.real_pool.instances
            if (text := c.task.reference_text(i) or "").strip()
        ]
        return choose_pairs(
            candidates,
            lambda p, i: c.task.render(p.render(), i)[0],
            d.keep_share,
            d.max_pairs,
            s.harness.real_share,
            references,
            ranked[0],
        )

    def _fresh_instances(self, best: PolicyGenome) -> list[Instance]:
        """``distill.fresh_instances`` training instances drawn for this round, answered by the
        best policy (backend calls; cached like every rollout)."""
        c, s = self.c, self.s
        fresh = draw_batch(
            c, s, 10_000 + s.distill_rounds, s.harness, c.cfg.distill.fresh_instances
        )
        c.evaluator.evaluate([best], fresh)
        s.train_ids.update(i.id for i in fresh)
        return fresh

    def _train_adapter(self, choice: PairChoice) -> dict[str, Any]:
        c, s = self.c, self.s
        d = c.cfg.distill
        settings = LoraSettings(
            rank=d.rank,
            alpha=d.alpha,
            learning_rate=d.learning_rate,
            epochs=d.epochs,
            max_seq_len=d.max_seq_len,
            seed=c.cfg.seed + s.distill_rounds,
            threads=d.threads,
        )
        n = s.distill_rounds

        def progress(p: Any) -> None:
            c.emit(
                ev.DISTILL_PROGRESS,
                round=n,
                step=p.step,
                steps=p.steps,
                loss=p.loss,
                tokens_per_s=p.tokens_per_s,
                eta_s=p.eta_s,
            )

        result = lora.train_adapter(list(choice.pairs), settings, c.adapters.directory(), progress)
        return result.to_dict()

    def _with_adapter(self, sha: str) -> list[PolicyGenome]:
        s = self.s
        g = s.inner.generation
        note = f"distillation round {s.distill_rounds}: adapter {sha[:12]}"
        out = []
        for p in s.inner.population:
            lineage = Lineage(parents=(p.id,), operator="distill", generation=g, note=note)
            child = p.with_adapter(sha, lineage)
            s.policies.setdefault(child.id, child)
            out.append(child)
        return out

    def _distill_record(
        self,
        n: int,
        result: dict[str, Any] | None,
        choice: PairChoice,
        outcome: dict[str, Any] | None,
        kept: bool,
        why: str,
    ) -> None:
        record = {
            "round": n,
            "generation": self.s.inner.generation,
            "adapter": result["sha256"] if result else None,
            "kept": kept,
            "why": why,
            "pairs": choice.to_json(),
            "training": {k: v for k, v in (result or {}).items() if k != "adapter_path"},
            "validation": outcome,
        }
        self.s.distillations.append(record)
        self.c.emit(ev.DISTILL_FINISHED, **record)


def adapter_effect(c: Components, s: RunState, winner: PolicyGenome) -> dict[str, Any] | None:
    """With and without its adapter: the returned policy and the same text on the base
    model's weights, on the selection and the confirmation part (None when the policy
    carries no adapter, or the calls ran out)."""
    if winner.adapter is None:
        return None
    twin = winner.with_adapter(None, winner.lineage)
    s.policies.setdefault(twin.id, twin)
    out: dict[str, Any] = {"policy": winner.id, "adapter": winner.adapter, "base": twin.id}
    try:
        parts = [("selection", c.validator)]
        if c.confirmer is not None:
            parts.append(("confirmation", c.confirmer))
        for name, v in parts:
            res = v.validate([winner, twin])
            out[name] = {"with": res[winner.id].s_val, "without": res[twin.id].s_val}
    except BudgetExceeded as exc:
        c.emit(ev.WARNING, message=f"adapter effect not measured (budget: {exc})")
        return None
    return out
