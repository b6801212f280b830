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

The two weights-only methods (benchmarks/methods/weights.py) validate the best seed with its
new adapter on the selection meetings and return it only when it beats the best seed there and
the engine's return rule confirms it on the confirmation meetings (the rule every engine cell
applies), else the best seed. Every method records the CPU seconds its training took. This file
holds what they share with the alternation cells: the adapter settings, the pairs, training.
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

# the engine cells that distil (benchmarks/engine.py adds their ``distill`` section): method ->
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
