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

The 1,000-call profile (issue 47, distill-1000.yaml) adds the weights-first methods
(``WEIGHTS_FIRST``: the references' adapter before generation 1, prompts evolved on it, further
distillations under the harness's data-mix genes) and ``sft_refs_cpu`` (``sft_refs`` with more
epochs: the profile's ``sft_cpu_epochs``, set to spend the full method's training CPU).

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
from evotrainer.harness.distill_mix import cut_for, reference_pairs
from evotrainer.harness.distill_pairs import best_per_instance, choose_pairs
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import Instance, Lineage

# the engine cells that distil (benchmarks/engine.py adds their ``distill`` section): method ->
# outer loop on
ENGINE_DISTILL = {"alternation": True, "alternation_frozen": False, "alternation_per_scale": True}
# issue 47's weights-first methods (distill-1000.yaml): method -> (outer loop on, the
# share genes fixed for the later distillations: None = the harness moves them)
REFS_ONLY = {"distill_refs": 1.0, "distill_own": 0.0, "distill_context": 0.0}
OWN_ONLY = {"distill_refs": 0.0, "distill_own": 1.0, "distill_context": 0.0}
WEIGHTS_FIRST: dict[str, tuple[bool, dict[str, float] | None]] = {
    "weights_prompts": (True, None),  # the full method
    "weights_prompts_once": (True, None),  # no distillation after the references' one
    "weights_prompts_frozen": (False, None),  # the harness (and its data mix) frozen
    "weights_prompts_refs": (True, REFS_ONLY),  # later distillations: references only
    "weights_prompts_own": (True, OWN_ONLY),  # later distillations: own answers only
}
ENGINE_DISTILL.update({m: outer for m, (outer, _) in WEIGHTS_FIRST.items()})
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


def engine_distill(after: int, reference_targets: str = "text") -> dict[str, Any]:
    """The ``distill`` section of an alternation cell: after generation ``after`` (the
    profile's ``distill_after``: 1, the only point a 300-call run still affords one), the
    best policies' kept answers and human references, written as the profile's
    ``reference_targets`` say (``text`` unless it says ``answer``: the profiles measured
    before the key existed trained on the reference text)."""
    return {
        "enabled": True,
        "after": after,
        "reference_targets": reference_targets,
        "top_policies": 3,
        "keep_share": KEEP_SHARE,
        "fresh_instances": 16,
        "max_pairs": MAX_PAIRS,
        "validate_top": 3,
        **LORA,
    }


def weights_first(data: dict[str, Any], method: str, prof: dict[str, Any]) -> None:
    """Make ``data`` (an engine cell's config, its ``distill`` section already the
    alternation's) the weights-first ``method``'s: the references' adapter before generation
    1 (cut to the answer cap), then at most ``distill_rounds`` rounds, after generation
    ``distill_after`` and every ``distill_every``, their data mix the harness's genes, trialled
    by rerun trials that train a small adapter (``distill_trial_pairs`` pairs)."""
    outer, fixed = WEIGHTS_FIRST[method]
    once = method == "weights_prompts_once"
    data["distill"].update(
        {
            "schedule": "weights_first",
            "every": int(prof.get("distill_every", 2)),
            "max_rounds": 1 if once else int(prof.get("distill_rounds", 3)),
            "mix_genes": True,
            "trial_pairs": int(prof.get("distill_trial_pairs", 16)),
            "cut_targets": bool(prof.get("cut_targets", True)),
        }
    )
    if outer:
        data["outer"]["trials"] = "rerun"  # a distillation trial needs a trial per variant
    if fixed is not None:  # the shares fixed: no trial moves them
        genes = {k: {"initial": v, "step": 0.0} for k, v in fixed.items()}
        data["harness"]["genes"] = {**data["harness"].get("genes", {}), **genes}


def sft_pairs(
    seed_policy: PolicyGenome,
    pool: Sequence[Instance],
    render: Any,
    reference: Any,
    rng: random.Random,
    cap: int | None = None,
    reference_targets: str = "text",
) -> list[TrainingPair]:
    """At most MAX_PAIRS (instance, human reference) pairs of the labelled pool, in the best
    seed's prompt (a random subset when the pool is larger); with ``cap`` (the profile's
    ``cut_targets``) each reference cut to the answer cap, under ``reference_targets: answer``
    its prose shortened first (``fit_to_cap``: the action items stay). The engine's
    weights-first round builds its pairs with the same function (harness/distill_mix.py)."""
    cut = cut_for(reference_targets)
    return reference_pairs(
        seed_policy, pool, render, reference, MAX_PAIRS, rng=rng, cap=cap, cut=cut
    )


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


def train(
    pairs: Sequence[TrainingPair], seed: int, out_dir: Path, epochs: float | None = None
) -> dict[str, Any]:
    """Train the adapter (the distill extra); plain data about it, CPU seconds included.
    ``epochs``: instead of LORA's (sft_refs_cpu)."""
    from evotrainer.distill.settings import LoraSettings
    from evotrainer.distill.train import train_adapter

    lora = {**LORA, **({"epochs": epochs} if epochs is not None else {})}
    cpu0 = time.process_time()
    result = train_adapter(list(pairs), LoraSettings(seed=seed, **lora), out_dir).to_dict()
    result["process_cpu_s"] = round(time.process_time() - cpu0, 1)
    return result


def with_adapter(policy: PolicyGenome, sha: str, method: str) -> PolicyGenome:
    return policy.with_adapter(
        sha, Lineage(parents=(policy.id,), operator="distill", note=f"{method}: adapter")
    )
