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

Under ``distill.schedule: weights_first`` (issue 47) the first round comes before generation 1
and trains on the human references alone (as the ``sft_refs`` benchmark method, with the same
``reference_pairs``), decided as every round; prompt evolution then runs on those weights. With
``distill.mix_genes`` the pairs follow the harness's data-mix genes (harness/distill_mix.py),
and each outer-step trial trains a small adapter under its variant's mix (``trial_adapter``).

A kill during training loses the step only: the checkpoint before it says it is due, and a
resume trains the same adapter again (same pairs, seed and threads: the same bytes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from evotrainer.distill import train as lora
from evotrainer.distill.pairs import TrainingPair
from evotrainer.distill.settings import LoraSettings
from evotrainer.distill.train_cache import train_cached
from evotrainer.engine.components import Components
from evotrainer.engine.generation import draw_batch, fitness_of
from evotrainer.engine.state import RunState
from evotrainer.engine.validate import archive, validate
from evotrainer.errors import BudgetExceeded
from evotrainer.harness.distill_mix import (
    Cut,
    Mix,
    better_than_greedy,
    context_pairs,
    cut_for,
    reference_of,
    reference_pairs,
    rehearsal,
    shortest,
)
from evotrainer.harness.distill_pairs import (
    Candidate,
    PairChoice,
    best_per_instance,
    candidate_of,
    choose_pairs,
)
from evotrainer.harness.genome import HarnessGenome
from evotrainer.llm.adapter_file import adapter_file_name, verified_copy
from evotrainer.loops.inner import PolicyOptimizer
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.seeds import seed_policies
from evotrainer.run import events as ev
from evotrainer.types import Instance, Lineage, Message, ScoreVector


def distill_due_after(c: Components, s: RunState, generation: int) -> bool:
    """Whether a distillation round follows ``generation``."""
    return c.cfg.distill.due_after(generation, s.distill_rounds)


SAMPLED = 8  # instances sampled without fresh ones (a trial's: at most this many)


def _best_of(*groups: list[Candidate]) -> list[Candidate]:
    """The best-rewarded candidate per instance (ties: the first), in instance order."""
    best: dict[str, Candidate] = {}
    for group in groups:
        for x in group:
            if x.instance.id not in best or x.reward > best[x.instance.id].reward:
                best[x.instance.id] = x
    return [best[k] for k in sorted(best)]


def weights_first_due(c: Components, s: RunState) -> bool:
    """Whether the run's first distillation is due before generation 1 (``distill.schedule:
    weights_first``; the caller checks before the first generation)."""
    d = c.cfg.distill
    return d.enabled and d.schedule == "weights_first" and s.distill_rounds == 0


def distill_cost(c: Components, s: RunState | None = None) -> int:
    """An upper estimate of one distillation's calls: the ``fresh_instances`` the best policy
    answers, the rejection samples (``distill_samples`` x the instances sampled), the
    population carrying the adapter scored on a batch, and its ``validate_top`` on the
    selection part (no racing cut). Training itself costs CPU, not calls."""
    d, inner = c.cfg.distill, c.cfg.inner
    n_val = len(c.validator.instances)
    samples = 0
    if s is not None and (mix := Mix.of(s.harness.genes)) is not None:
        samples = mix.samples * max(d.fresh_instances, SAMPLED)
    return (
        d.fresh_instances
        + samples
        + inner.population * inner.tasks_per_generation
        + d.validate_top * n_val
    )


def distill_affordable(c: Components, s: RunState | None = None) -> tuple[bool, str]:
    """Whether the calls left (``budget.max_calls``, less the reserve) pay for a distillation:
    one that runs out mid-way trains an adapter nobody can validate, and ends the run."""
    left = c.budget.calls_left()
    cost = distill_cost(c, s)
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
        affordable, why = distill_affordable(c, s)
        if not affordable:
            none = PairChoice(pairs=())
            c.emit(ev.DISTILL_STARTED, round=n, generation=s.inner.generation, **none.to_json())
            self._distill_record(n, None, none, None, kept=False, why=why)
            return
        first = c.cfg.distill.schedule == "weights_first" and n == 1
        choice = self._reference_choice() if first else self._distill_pairs(batch)
        c.emit(ev.DISTILL_STARTED, round=n, generation=s.inner.generation, **choice.to_json())
        if len(choice.pairs) < c.cfg.distill.min_pairs:
            why = f"{len(choice.pairs)} pairs kept, fewer than distill.min_pairs"
            self._distill_record(n, None, choice, None, kept=False, why=why)
            return
        result, trained = self._train_adapter(choice)
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
            if Mix.of(s.harness.genes) is not None:  # for distill_warm_start's rehearsal
                s.distill_last_pairs = [p.to_dict() for p in trained]
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

    def _render(self, p: PolicyGenome, inst: Instance) -> list[Message]:
        return self.c.task.render(p.render(), inst)[0]

    def _cap(self) -> int | None:
        """The answer cap a reference is cut to (``distill.cut_targets``), else None."""
        return self.c.cfg.model.max_tokens if self.c.cfg.distill.cut_targets else None

    def _reference(self) -> Callable[[Instance], str | None]:
        """An instance's human reference as a training target (``distill.reference_targets``)."""
        return reference_of(self.c.task, self.c.cfg.distill.reference_targets)

    def _cut(self) -> Cut:
        """How a reference is cut to the answer cap (``cut_for`` the references' form)."""
        return cut_for(self.c.cfg.distill.reference_targets)

    def _reference_choice(self) -> PairChoice:
        """The weights-first round's pairs: the human references of the real training
        instances, in the best seed's prompt (``reference_pairs``, as ``sft_refs``)."""
        c, s = self.c, self.s
        pairs = reference_pairs(
            s.inner.best(),
            c.real_pool.instances,
            self._render,
            self._reference(),
            c.cfg.distill.max_pairs,
            cap=self._cap(),
            cut=self._cut(),
        )
        cut = sum("cut to the answer cap" in p.source for p in pairs)
        note = f"weights first: {len(pairs)} human references ({cut} cut to the answer cap)"
        return PairChoice(tuple(pairs), references=len(pairs), notes=(note,))

    def _distill_pairs(
        self,
        batch: list[Instance],
        policies: list[PolicyGenome] | None = None,
        harness_genes: dict[str, float] | None = None,
        total: int | None = None,
    ) -> PairChoice:
        """The round's pairs from ``policies`` (default: the population's best) under the
        harness's genes (default: the current harness's): the fixed mix, or the data mix the
        genes set (``total`` pairs, default ``distill.max_pairs``; a trial's: no fresh
        instances)."""
        c, s = self.c, self.s
        d = c.cfg.distill
        trial = policies is not None
        ranked = (policies or s.inner.ranked(s.inner.population))[: d.top_policies]
        genes = harness_genes if harness_genes is not None else s.harness.genes
        # after a resume only the instances re-read since are in memory: those count
        known = c.evaluator.instances
        seen = [known[i] for i in sorted(s.train_ids) if i in known]
        fresh = self._fresh_instances(ranked[0]) if d.fresh_instances and not trial else []
        instances = seen + [i for i in fresh if i.id not in s.train_ids or i not in seen]

        def answer(p: PolicyGenome, inst: Instance) -> tuple[str, ScoreVector] | None:
            rec = c.evaluator.store.get((p.id, inst.id))
            if rec is None or rec.rollout.error is not None:
                return None
            return rec.rollout.output, rec.vector

        weights = s.harness.weights
        candidates = best_per_instance(ranked, instances, answer, weights)
        mix = Mix.of(genes)
        if mix is None:
            cap, reference, cut = self._cap(), self._reference(), self._cut()
            references = [
                (i, cut(text, cap, None) if cap is not None else text)
                for i in c.real_pool.instances
                if (text := (reference(i) or "").strip())
            ]
            real_share = s.harness.real_share if not trial else genes.get("real_share", 0.0)
            return choose_pairs(
                candidates,
                self._render,
                d.keep_share,
                d.max_pairs,
                real_share,
                references,
                ranked[0],
            )
        if mix.samples:
            to_sample = (fresh or seen)[: SAMPLED if trial else max(len(fresh), SAMPLED)]
            greedy = {}
            for inst in to_sample:
                if (got := answer(ranked[0], inst)) is not None:
                    greedy[inst.id] = candidate_of(inst, ranked[0], *got, weights).reward
            candidates = _best_of(candidates, self._samples(ranked[0], to_sample, mix, greedy))
        return self._mixed(mix, candidates, ranked[0], total or d.max_pairs)

    def _mixed(
        self, mix: Mix, candidates: list[Candidate], best: PolicyGenome, total: int
    ) -> PairChoice:
        """``total`` pairs in the mix's shares: human references, the top ``keep_share`` of
        the answers (own), the same answers under the shortest seed prompt (context)."""
        c, d = self.c, self.c.cfg.distill
        n = mix.counts(total)
        own = choose_pairs(candidates, self._render, d.keep_share, max(n["own"], n["context"]))
        by_key = {(x.instance.id, x.policy.id): x for x in candidates}
        kept = [by_key[(str(r["instance"]), str(r["policy"]))] for r in own.kept]
        seed = shortest(seed_policies(c.cfg.inner, c.task))
        refs = reference_pairs(
            best,
            c.real_pool.instances,
            self._render,
            self._reference(),
            n["refs"],
            cap=self._cap(),
            cut=self._cut(),
        )
        ctx = context_pairs(kept, seed, self._render, n["context"])
        pairs = (*refs, *own.pairs[: n["own"]], *ctx)
        note = (
            f"data mix {mix.refs:.2f}/{mix.own:.2f}/{mix.context:.2f} (references/own/context) "
            f"of {total}: {len(refs)} references, {min(n['own'], len(own.pairs))} own answers, "
            f"{len(ctx)} context-distilled; {mix.samples} samples per instance"
        )
        return replace(own, pairs=pairs, references=len(refs), notes=(*own.notes, note))

    def _samples(
        self, best: PolicyGenome, instances: list[Instance], mix: Mix, greedy: dict[str, float]
    ) -> list[Candidate]:
        """``mix.samples`` answers of ``best`` per instance at ``distill.sample_temperature``,
        those whose reward beats the greedy answer's (rejection sampling)."""
        c, s = self.c, self.s
        out = []
        for inst in instances:
            for k in range(mix.samples):
                seed = c.cfg.seed * 1000 + 100 * s.distill_rounds + k + 1
                rec = c.evaluator.sample(best, inst, c.cfg.distill.sample_temperature, seed)
                if rec.rollout.error is None and rec.rollout.output.strip():
                    out.append(
                        candidate_of(inst, best, rec.rollout.output, rec.vector, s.harness.weights)
                    )
        return better_than_greedy(out, greedy)

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

    def _train_adapter(
        self,
        choice: PairChoice,
        genes: dict[str, float] | None = None,
        seed: int | None = None,
        trial_of: PolicyGenome | None = None,
    ) -> tuple[dict[str, Any], list[TrainingPair]]:
        """Train on the choice's pairs; the data-mix genes (default the current harness's)
        set the epochs and whether this adapter warm-starts: from the weights of the adapter
        the best validated policy carries (the archive's best, which the round's adapter is
        judged against; not the population's, which after an outer step carries the winning
        trial's small adapter), rehearsing the pairs the last kept adapter learned (at most
        ``distill.max_pairs`` of them, ``rehearsal``: every reference kept while own answers
        join). Returns the training's record and the pairs it trained on.

        A trial's adapter (``trial_of``: the trial population's best) always starts from the
        weights that policy carries: a trial is a small step from the main line's weights
        under its variant's mix, and its population goes on as the main line when it wins,
        so a small adapter trained from scratch would stand in for the main line's (the
        references' 64 pairs replaced by 16, measured: issue 47). Warm-starting, it rehearses
        at most as many of the last kept pairs as it has new ones, so it stays small."""
        c, s = self.c, self.s
        d = c.cfg.distill
        mix = Mix.of(genes if genes is not None else s.harness.genes)
        pairs = list(choice.pairs)
        warm = mix is not None and mix.warm_start
        carried = None
        if trial_of is not None:
            carried = trial_of.adapter
        elif warm:  # the weights of the best validated policy, the ones a round must beat
            best = s.hopt.archive.best()
            carried = (best.policy if best is not None else s.inner.best()).adapter
        rehearsed: list[TrainingPair] = []
        if warm:
            last = [TrainingPair.from_dict(p) for p in s.distill_last_pairs]
            rehearsed = rehearsal(last, pairs, len(pairs) if trial_of is not None else d.max_pairs)
            pairs += rehearsed
        settings = LoraSettings(
            rank=d.rank,
            alpha=d.alpha,
            learning_rate=d.learning_rate,
            epochs=mix.epochs if mix is not None else d.epochs,
            max_seq_len=d.max_seq_len,
            seed=seed if seed is not None else c.cfg.seed + s.distill_rounds,
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

        note = {"rehearsed": len(rehearsed)} if warm else {}
        if carried is None:
            return {**self._train(pairs, settings, progress), **note}, pairs
        # the adapter to start from is read as serving reads one: its bytes hashed against the
        # recorded sha256 and the trainer given a private copy of exactly those bytes
        path = c.adapters.directory() / adapter_file_name(carried)
        with verified_copy(path, carried) as (copy, _):
            result = self._train(pairs, settings, progress, start_from=copy)
        return {**result, "started_from": path.name, **note}, pairs

    def _train(
        self,
        pairs: list[TrainingPair],
        settings: LoraSettings,
        progress: Callable[[Any], None],
        start_from: Any = None,
    ) -> dict[str, Any]:
        """One training's record: ``distill.train.train_adapter``, or with ``distill.cache_dir``
        the same training read back from that cache when it holds it (``cache`` in the
        record says which, under what key)."""
        out = self.c.adapters.directory()
        cache_dir = self.c.cfg.distill.cache_dir
        if cache_dir is None:
            extra = {"start_from": start_from} if start_from is not None else {}
            return lora.train_adapter(pairs, settings, out, progress, **extra).to_dict()
        result, note = train_cached(
            lora.train_adapter, cache_dir, pairs, settings, out, progress, start_from
        )
        return {**result.to_dict(), "cache": note}

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
        trial: dict[str, Any] | None = None,
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
        if trial is not None:  # an outer-step trial's small adapter (``trial_adapter``)
            record["trial"] = trial
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


def trial_adapter(
    c: Components,
    s: RunState,
    opt: PolicyOptimizer,
    h: HarnessGenome,
    batch: list[Instance],
    epoch: int,
    trial: int,
) -> None:
    """A ``distillation`` trial (``distill.mix_genes`` under rerun trials): a small adapter
    (``distill.trial_pairs`` pairs, no fresh instances) trained under variant ``h``'s data mix
    from the trial's policies' answers, starting from the weights the trial's best carries
    (``DistillStep._train_adapter``); the trial's population carries it for its generations,
    and the outer step's validation of the trial's best judges the mix on s_val. Recorded in
    the run's distillations (its training CPU counts) with ``trial`` set; the main line's
    adapter changes only when this trial wins."""
    step = DistillStep(c, s)
    genes = dict(h.genes)
    choice = step._distill_pairs(  # noqa: SLF001 - the step's own pairs, for a trial
        batch, opt.ranked(opt.population), genes, c.cfg.distill.trial_pairs
    )
    tag = {"trial": trial + 1, "outer_step": s.outer_step, "harness": h.id}
    if len(choice.pairs) < c.cfg.distill.min_pairs:
        why = f"trial {trial + 1}: {len(choice.pairs)} pairs, fewer than distill.min_pairs"
        step._distill_record(s.distill_rounds, None, choice, None, False, why, tag)  # noqa: SLF001
        return
    seed = c.cfg.seed + 1000 * s.outer_step + trial
    result, _ = step._train_adapter(choice, genes, seed, trial_of=opt.best())  # noqa: SLF001
    sha = result["sha256"]
    note = f"outer step {s.outer_step} trial {trial + 1}: adapter {sha[:12]}"
    rebased = []
    for p in opt.population:
        lineage = Lineage(parents=(p.id,), operator="distill", generation=opt.generation, note=note)
        child = p.with_adapter(sha, lineage)
        s.policies.setdefault(child.id, child)
        rebased.append(child)
    pairs = zip(opt.population, rebased, strict=True)
    protect = next((r.id for p, r in pairs if p.id == opt.protected), None)
    opt.rebase(rebased, fitness_of(c, s, rebased, batch, h, epoch), protect=protect)
    why = f"trial {trial + 1}: the trial's population carries it; the trial's validation judges it"
    step._distill_record(s.distill_rounds, result, choice, None, False, why, tag)  # noqa: SLF001
