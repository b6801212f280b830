"""The distill profile's weights-only methods (issue 31; protocol in docs/distillation.md):
``weights_only`` (the best seed's own answers, the best half by the default harness reward,
into a LoRA adapter), ``sft_refs`` (an adapter trained on the human references, in the
best seed's prompt) and ``sft_refs_cpu`` (issue 47: ``sft_refs`` trained for the profile's
``sft_cpu_epochs`` epochs, the training CPU the weights-first method spends). The best seed with its adapter is validated on the selection meetings and
returned only when it beats the best seed there and the engine's return rule confirms it on
the confirmation meetings (the rule every engine cell applies), else the best seed."""

from __future__ import annotations

import random
import time
from typing import Any

from benchmarks import distill
from benchmarks.bench import Bench, RunOut
from evotrainer.config import CacheConfig
from evotrainer.evaluation.confirmation import confirm
from evotrainer.evaluation.validation import Validator
from evotrainer.harness.distill_mix import reference_of
from evotrainer.llm.spec import build_stack
from evotrainer.policy.genome import PolicyGenome


def run(bench: Bench, seed: int, *, method: str) -> RunOut:
    """``weights_only``, ``sft_refs`` or ``sft_refs_cpu`` (``method``) on one seed."""
    from evotrainer.distill.serve import embedded_with_adapter

    t0 = time.perf_counter()
    stack = bench.stack(method, seed, max_calls="budget")
    validator = bench.validator(stack, seed)
    seeds = bench.seeds()  # with the profile's decoding and loop-cut genes
    res = validator.validate(seeds)
    best = max(seeds, key=lambda p: (res[p.id].s_val, -ord(p.name)))
    details: dict[str, Any] = {"best_seed": best.name}
    pairs = _pairs(bench, method, seed, best, validator, stack.budget.backend_calls, details)
    epochs = bench.prof.get("sft_cpu_epochs") if method == "sft_refs_cpu" else None
    out = bench.work / "adapters" / f"{method}-seed{seed}"
    training = distill.train(pairs, seed, out, epochs)
    sha = training["sha256"]
    details["training"] = {k: v for k, v in training.items() if k != "losses"}
    details["adapter_path"] = training["adapter_path"]
    # on the method's budget, without a cache: the method's own cache is fresh, and the
    # default one (the user's, shared by every run) would answer a rerun's calls for free
    adapter = build_stack(
        embedded_with_adapter(training["adapter_path"], sha, bench.model_config(), seed),
        CacheConfig(enabled=False),
        stack.budget,
    ).client
    validator.evaluator.adapters = lambda s: adapter
    candidate = distill.with_adapter(best, sha, method)
    got = validator.validate([candidate])[candidate.id]
    winner = candidate if got.s_val > res[best.id].s_val else best
    details["selection"] = {"with_adapter": got.s_val, "best_seed": res[best.id].s_val}
    returned = winner
    if bench.confirmation is not None and winner is not best:
        ev = bench.evaluator(stack.client, seed)
        ev.adapters = lambda s: adapter
        conf = Validator(
            bench.task, ev, bench.confirmation.instances, bench.weights, "confirmation"
        )
        c = confirm(conf, winner, best, "better_mean", seed)
        details["confirmation"] = c.to_json()
        returned = winner if c.returned == winner.id else best
    s_val = validator.memo[returned.id].s_val
    return RunOut(returned, s_val, stack.budget, time.perf_counter() - t0, details)


def _pairs(
    bench: Bench,
    method: str,
    seed: int,
    best: PolicyGenome,
    validator: Validator,
    spent: int,
    details: dict[str, Any],
) -> list[Any]:
    """The training pairs: human references (sft_refs) or the best seed's kept answers on
    fresh labelled meetings, as many as the budget leaves (``spent`` so far) after validating
    and confirming the result (weights_only)."""

    def render(p: PolicyGenome, i: Any) -> Any:
        return bench.task.render(p.render(), i)[0]

    pool = bench.labelled_pool()
    rng = random.Random(f"{method}-{seed}")
    if method in ("sft_refs", "sft_refs_cpu"):
        cap = bench.prof["max_tokens"] if bench.prof.get("cut_targets") else None
        form = str(bench.prof.get("reference_targets", "text"))
        reference = reference_of(bench.task, form)
        pairs = distill.sft_pairs(best, pool, render, reference, rng, cap, form)
        details["pairs"] = {"pairs": len(pairs), "source": "human references"}
        return pairs
    n_conf = len(bench.confirmation.instances) if bench.confirmation else 0
    reserve = 2 * len(validator.instances) + 2 * n_conf  # validate and confirm the result
    n = max(0, bench.budget - spent - reserve)
    instances = rng.sample(pool, min(n, len(pool)))
    pairs, details["pairs"] = distill.self_pairs(best, instances, validator.evaluator, render)
    return pairs
