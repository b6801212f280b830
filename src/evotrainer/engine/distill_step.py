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
3. Decision: the population, carrying the adapter, is scored on the current batch, and its best
   ``validate_top`` race the incumbent on the selection part. The adapter is kept only when one
   of them validates above the best validated policy without it; then the population carries
   it (each policy's lineage records the step), else everything goes on as before.

A kill during training loses the step only: the checkpoint before it says it is due, and a
resume trains the same adapter again (same pairs, seed and threads: the same bytes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evotrainer.errors import BudgetExceeded, ConfigError
from evotrainer.harness.distill_pairs import PairChoice, best_per_instance, choose_pairs
from evotrainer.llm.base import LLMClient
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run import events as ev
from evotrainer.types import Instance, Lineage, ScoreVector


class DistillStep:
    """The part of CoEvolution that distils (a mixin)."""

    def _distill_due_after(self, generation: int) -> bool:
        d = self.cfg.distill
        if not d.enabled or self.distill_rounds >= d.max_rounds or generation < d.after:
            return False
        if generation == d.after:
            return True
        return bool(d.every) and (generation - d.after) % d.every == 0

    def _check_distill(self) -> None:
        """Refuse at start-up what distillation cannot do here (the missing extra, a model
        server instead of the embedded model)."""
        if not self.cfg.distill.enabled:
            return
        from evotrainer.distill.extra import installed, require

        if not installed():  # cheap at start-up; the imports happen when it trains
            require("distillation (distill.enabled)")
        if not self.cfg.model.spec.startswith("local:"):
            raise ConfigError(
                "distill.enabled needs the embedded model (model.spec local:...): the adapter "
                f"is trained on and served by it, not by {self.cfg.model.spec!r}"
            )

    # -- the step -----------------------------------------------------------------------------
    def _distill_step(self, batch: list[Instance]) -> None:
        self.distill_due = False
        self.distill_rounds += 1
        n = self.distill_rounds
        choice = self._distill_pairs(batch)
        self.emit(ev.DISTILL_STARTED, round=n, generation=self.inner.generation, **choice.to_json())
        if len(choice.pairs) < self.cfg.distill.min_pairs:
            why = f"{len(choice.pairs)} pairs kept, fewer than distill.min_pairs"
            self._distill_record(n, None, choice, None, kept=False, why=why)
            return
        result = self._train_adapter(choice)
        sha = result["sha256"]
        before = self.hopt.archive.best()
        rebased = self._with_adapter(sha)
        fit = self.fitness_of(rebased, batch, self.harness, drawn=self.drawn)
        top = sorted(rebased, key=lambda p: (-fit[p.id].fitness, p.id))[
            : self.cfg.distill.validate_top
        ]
        incumbent = before.policy if before is not None else self.inner.best()
        results = self.validate(top, "distilled", race=True)
        best = max(top, key=lambda p: (results[p.id].s_val, p.id))
        base_s = before.s_val if before is not None else float("-inf")
        kept = not results[best.id].partial and results[best.id].s_val > base_s
        if kept:
            self.inner.rebase(rebased, fit, protect=best.id)
            self._archive(best, self.harness, results[best.id], 0.0)
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
        d = self.cfg.distill
        ranked = self.inner.ranked(self.inner.population)[: d.top_policies]
        # after a resume only the instances re-read since are in memory: those count
        known = self.evaluator.instances
        seen = [known[i] for i in sorted(self.train_ids) if i in known]
        fresh = self._fresh_instances(ranked[0]) if d.fresh_instances else []
        instances = seen + [i for i in fresh if i.id not in self.train_ids or i not in seen]

        def answer(p: PolicyGenome, inst: Instance) -> tuple[str, ScoreVector] | None:
            rec = self.evaluator.store.get((p.id, inst.id))
            if rec is None or rec.rollout.error is not None:
                return None
            return rec.rollout.output, rec.vector

        candidates = best_per_instance(ranked, instances, answer, self.harness.weights)
        references = [
            (i, text)
            for i in self.real_pool.instances
            if (text := self.task.reference_text(i) or "").strip()
        ]
        return choose_pairs(
            candidates,
            lambda p, i: self.task.render(p.render(), i)[0],
            d.keep_share,
            d.max_pairs,
            self.harness.real_share,
            references,
            ranked[0],
        )

    def _fresh_instances(self, best: PolicyGenome) -> list[Instance]:
        """``distill.fresh_instances`` training instances drawn for this round, answered by the
        best policy (backend calls; cached like every rollout)."""
        fresh = self.batch(
            10_000 + self.distill_rounds, self.harness, self.cfg.distill.fresh_instances
        )
        self.evaluator.evaluate([best], fresh)
        self.train_ids.update(i.id for i in fresh)
        return fresh

    def _train_adapter(self, choice: PairChoice) -> dict[str, Any]:
        from evotrainer.distill.settings import LoraSettings
        from evotrainer.distill.train import train_adapter

        d = self.cfg.distill
        settings = LoraSettings(
            rank=d.rank,
            alpha=d.alpha,
            learning_rate=d.learning_rate,
            epochs=d.epochs,
            max_seq_len=d.max_seq_len,
            seed=self.cfg.seed + self.distill_rounds,
            threads=d.threads,
        )
        n = self.distill_rounds

        def progress(p: Any) -> None:
            self.emit(
                ev.DISTILL_PROGRESS,
                round=n,
                step=p.step,
                steps=p.steps,
                loss=p.loss,
                tokens_per_s=p.tokens_per_s,
                eta_s=p.eta_s,
            )

        result = train_adapter(list(choice.pairs), settings, self._adapter_dir(), progress)
        return result.to_dict()

    def _with_adapter(self, sha: str) -> list[PolicyGenome]:
        g = self.inner.generation
        note = f"distillation round {self.distill_rounds}: adapter {sha[:12]}"
        out = []
        for p in self.inner.population:
            lineage = Lineage(parents=(p.id,), operator="distill", generation=g, note=note)
            child = p.with_adapter(sha, lineage)
            self.policies.setdefault(child.id, child)
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
            "generation": self.inner.generation,
            "adapter": result["sha256"] if result else None,
            "kept": kept,
            "why": why,
            "pairs": choice.to_json(),
            "training": {k: v for k, v in (result or {}).items() if k != "adapter_path"},
            "validation": outcome,
        }
        self.distillations.append(record)
        self.emit(ev.DISTILL_FINISHED, **record)

    def _adapter_effect(self, winner: PolicyGenome) -> dict[str, Any] | None:
        """With and without its adapter: the returned policy and the same text on the base
        model's weights, on the selection and the confirmation part (None when the policy
        carries no adapter, or the calls ran out)."""
        if winner.adapter is None:
            return None
        twin = winner.with_adapter(None, winner.lineage)
        self.policies.setdefault(twin.id, twin)
        out: dict[str, Any] = {"policy": winner.id, "adapter": winner.adapter, "base": twin.id}
        try:
            parts = [("selection", self.validator)]
            if self.confirmer is not None:
                parts.append(("confirmation", self.confirmer))
            for name, v in parts:
                res = v.validate([winner, twin])
                out[name] = {"with": res[winner.id].s_val, "without": res[twin.id].s_val}
        except BudgetExceeded as exc:
            self.emit(ev.WARNING, message=f"adapter effect not measured (budget: {exc})")
            return None
        return out

    # -- serving adapters ----------------------------------------------------------------------
    def _adapter_dir(self) -> Path:
        root = self.run_dir or self.adapter_root
        if root is None:
            raise ConfigError("distillation writes its adapters to a run directory: pass one")
        return Path(root) / "adapters"

    def _adapter_client(self, sha: str) -> LLMClient:
        """The metered, cached client of adapter ``sha`` (one llama.cpp model per adapter,
        made on first use; its file is verified by hash before llama.cpp loads it)."""
        with self._adapter_lock:
            client = self._adapter_clients.get(sha)
            if client is None:
                from evotrainer.distill.adapter_file import adapter_file_name
                from evotrainer.distill.serve import embedded_with_adapter
                from evotrainer.llm.spec import build_stack

                path = self._adapter_dir() / adapter_file_name(sha)
                backend = embedded_with_adapter(path, sha, self.cfg.model, self.cfg.seed)
                stack = build_stack(backend, self.cfg.cache, self.budget)
                client = self._adapter_clients[sha] = stack.client
            return client
