"""The distill profile's methods (issue 31; protocol in docs/distillation.md, "The benchmark"):
prompts, weights, or both, on the standard profile's data, at one call budget.

- ``evotrainer`` (the standard engine cell): prompt-only co-evolution;
- ``weights_only``: no prompt search: the best seed answers training instances, the harness's
  reward keeps the best answers, a LoRA adapter is trained on them;
- ``sft_refs``: what a user would do instead of all this: a LoRA adapter trained on the AMI
  train meetings' human references (with the best seed's prompt);
- ``alternation``: co-evolution with distillation (prompts -> weights -> prompts), the harness
  choosing the pairs;
- ``alternation_frozen``: the GA alone with distillation (the harness frozen): the ablation;
- ``alternation_per_scale`` (added after the five were test-scored): ``alternation`` with the
  pairs ranked only against answers scored on the same reward components (commit 2f949d3).

The two weights-only methods validate the best seed with its new adapter on the selection
meetings and return it only when it beats the best seed there and the engine's return rule
confirms it on the confirmation meetings (the rule every engine cell applies), else the best
seed. Every method records the CPU seconds its training took.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotrainer.distill.pairs import TrainingPair
from evotrainer.harness.distill_pairs import best_per_instance, choose_pairs
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import Instance, Lineage

DISTILL_METHODS = (
    "weights_only",
    "sft_refs",
    "alternation",
    "alternation_frozen",
    "alternation_per_scale",
)
# the engine cells that distil (``Bench.engine_config`` adds their ``distill`` section): method ->
# outer loop on
ENGINE_DISTILL = {"alternation": True, "alternation_frozen": False, "alternation_per_scale": True}
# the same adapter settings for every method (docs/distillation.md)
LORA = {"rank": 8, "alpha": 16.0, "learning_rate": 2e-4, "epochs": 2.0, "max_seq_len": 1536}
MAX_PAIRS = 64
KEEP_SHARE = 0.5
SEED_R = {
    "completeness": 0.5,
    "format": 0.2,
    "action_count": 0.3,
    "ref_rougeL": 0.5,
    "ref_action_item_f1": 0.5,
}  # the meeting task's default harness reward (labelled training data)


def engine_distill(after: int) -> dict[str, Any]:
    """The ``distill`` section of an alternation cell: after generation ``after`` (the
    profile's ``distill_after``: 1, the only point a 300-call run still affords one), the
    best policies' kept answers and human references."""
    return {
        "enabled": True,
        "after": after,
        "top_policies": 3,
        "keep_share": KEEP_SHARE,
        "fresh_instances": 16,
        "max_pairs": MAX_PAIRS,
        "validate_top": 3,
        **LORA,
    }


def sft_pairs(
    seed_policy: PolicyGenome,
    pool: Sequence[Instance],
    render: Any,
    reference: Any,
    rng: random.Random,
) -> list[TrainingPair]:
    """At most MAX_PAIRS (instance, human reference) pairs of the labelled pool, in the best
    seed's prompt (a random subset when the pool is larger)."""
    with_refs = [(i, (reference(i) or "").strip()) for i in pool]
    with_refs = [(i, t) for i, t in with_refs if t]
    rng.shuffle(with_refs)
    return [
        TrainingPair(tuple(render(seed_policy, i)), text, source=f"human reference of {i.id}")
        for i, text in with_refs[:MAX_PAIRS]
    ]


def self_pairs(
    seed_policy: PolicyGenome,
    instances: Sequence[Instance],
    evaluator: Any,
    render: Any,
) -> tuple[list[TrainingPair], dict[str, Any]]:
    """The best seed's answers on ``instances`` (evaluated: backend calls), the top KEEP_SHARE
    by the default harness reward kept."""
    records = evaluator.evaluate([seed_policy], instances)

    def answer(p: PolicyGenome, inst: Instance):
        rec = records.get((p.id, inst.id))
        if rec is None or rec.rollout.error is not None:
            return None
        return rec.rollout.output, rec.vector

    candidates = best_per_instance([seed_policy], instances, answer, SEED_R)
    choice = choose_pairs(candidates, render, KEEP_SHARE, MAX_PAIRS)
    return list(choice.pairs), choice.to_json()


def train(pairs: Sequence[TrainingPair], seed: int, out_dir: Path) -> dict[str, Any]:
    """Train the adapter (the distill extra); plain data about it, CPU seconds included."""
    from evotrainer.distill.settings import LoraSettings
    from evotrainer.distill.train import train_adapter

    cpu0 = time.process_time()
    result = train_adapter(list(pairs), LoraSettings(seed=seed, **LORA), out_dir).to_dict()
    result["process_cpu_s"] = round(time.process_time() - cpu0, 1)
    return result


def with_adapter(policy: PolicyGenome, sha: str, method: str) -> PolicyGenome:
    return policy.with_adapter(
        sha, Lineage(parents=(policy.id,), operator="distill", note=f"{method}: adapter")
    )


def run_weights(bench: Any, seed: int, method: str) -> Any:
    """``weights_only`` or ``sft_refs`` on one seed: the best seed, an adapter trained on its
    kept answers (or on human references), validated and confirmed as an engine cell's winner
    is. Returns the quality benchmark's RunOut."""
    from benchmarks.quality import RunOut
    from evotrainer.distill.serve import embedded_with_adapter
    from evotrainer.evaluation.confirmation import confirm
    from evotrainer.evaluation.evaluator import Evaluator
    from evotrainer.evaluation.runner import SerialRunner
    from evotrainer.evaluation.validation import Validator
    from evotrainer.llm.spec import build_stack

    t0 = time.perf_counter()
    stack = bench.stack(method, seed, max_calls="budget")
    validator = bench.validator(stack, seed)
    seeds = bench.seeds()  # with the profile's decoding and loop-cut genes
    res = validator.validate(seeds)
    best = max(seeds, key=lambda p: (res[p.id].s_val, -ord(p.name)))
    render = lambda p, i: bench.task.render(p.render(), i)[0]  # noqa: E731
    pool = bench.labelled_pool()
    rng = random.Random(f"{method}-{seed}")
    details: dict[str, Any] = {"best_seed": best.name}
    if method == "sft_refs":
        pairs = sft_pairs(best, pool, render, bench.task.reference_text, rng)
        details["pairs"] = {"pairs": len(pairs), "source": "human references"}
    else:
        n_conf = len(bench.confirmation.instances) if bench.confirmation else 0
        reserve = 2 * len(validator.instances) + 2 * n_conf  # validate and confirm the result
        n = max(0, bench.budget - stack.budget.backend_calls - reserve)
        instances = rng.sample(pool, min(n, len(pool)))
        pairs, details["pairs"] = self_pairs(best, instances, validator.evaluator, render)
    out_dir = bench.work / "adapters" / f"{method}-seed{seed}"
    training = train(pairs, seed, out_dir)
    sha = training["sha256"]
    details["training"] = {k: v for k, v in training.items() if k != "losses"}
    details["adapter_path"] = training["adapter_path"]
    adapter = build_stack(
        embedded_with_adapter(training["adapter_path"], sha, bench.model_config(), seed),
        None,
        stack.budget,
    ).client
    validator.evaluator.adapters = lambda s: adapter
    candidate = with_adapter(best, sha, method)
    got = validator.validate([candidate])[candidate.id]
    winner = candidate if got.s_val > res[best.id].s_val else best
    details["selection"] = {"with_adapter": got.s_val, "best_seed": res[best.id].s_val}
    returned = winner
    if bench.confirmation is not None and winner is not best:
        ev = Evaluator(bench.task, stack.client, bench.agent_sampling(seed), SerialRunner())
        ev.adapters = lambda s: adapter
        conf = Validator(
            bench.task, ev, bench.confirmation.instances, bench.weights, "confirmation"
        )
        c = confirm(conf, winner, best, "better_mean", seed)
        details["confirmation"] = c.to_json()
        returned = winner if c.returned == winner.id else best
    s_val = validator.memo[returned.id].s_val
    return RunOut(returned, s_val, stack.budget, time.perf_counter() - t0, details)
