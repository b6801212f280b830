"""Quality at equal budget: EvoTrainer against the methods people use instead.

Every method gets the same model, the same data, the same truncation and the same number of
backend LLM calls per seed (task calls and mutation/reflection/meta-prompt calls alike); each
method and seed has its own budget and its own fresh cache. The chosen policy of every run is
then scored on held-out test meetings (outside the budget, one shared evaluator).

Methods:
  seeds          the hand-written seed policies A, B, C unchanged, and the best of the three on
                 the selection data ("seed_best")
  random_search  random prompt variations (1-2 operators applied to a random seed), each scored
                 on the selection meetings; the best kept
  inner_ga       EvoTrainer's inner GA alone (outer.enabled=false): harness fixed
  evotrainer     EvoTrainer with co-evolution (outer.enabled=true)
  gepa           GEPA (gepa package) with an adapter on the same task/metric/endpoint
  evoprompt_ga   promptolution's EvoPromptGA (EvoPrompt-style GA) on the same task/endpoint

Profiles:
  quick     2 selection meetings (AMI train), 3 test meetings (AMI dev), 40 calls; one JSON
            file (--out). About 25 min on 2 idle CPU cores.
  full      5 selection meetings, all 20 AMI dev meetings, 300 calls; one JSON file.
  standard  (issue 11) selection on 12 AMI train meetings for every method; the engine also
            gets 8 further train meetings as its confirmation part (validation.confirm) and
            trains on real AMI train meetings (harness.real_data); GEPA reflects on 10 further
            ones; all disjoint. Test on all 20 AMI dev and all 61 ICSI meetings, reported
            separately and pooled, each method's paired difference to seed_best with a 95%
            bootstrap interval over meetings. 1,024-token head_tail cut, 300 calls, 3 seeds.
            Runs cell by cell (method x seed) into a results directory: resumable, see
            benchmarks/standard.py. Hours on a CPU.

Without the data files (../shared/data/meetings/) every split falls back to disjoint held-out
synthetic meetings and the output says so.

    python benchmarks/quality.py --profile quick            # one JSON, < 60 min on 2 CPU cores
    python benchmarks/quality.py --profile standard         # resumable; rerun to continue
    python benchmarks/quality.py --profile standard --cells seeds,evotrainer:0   # a subset
    python benchmarks/quality.py --table benchmarks/results/quality-standard     # partial too
    python benchmarks/quality.py --profile standard --estimate   # time 3 calls, estimate
    python benchmarks/quality.py --model fake:minutes --budget 20 --seeds 2   # seconds, no model
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import common as C  # noqa: E402
from benchmarks.distill import DISTILL_METHODS, ENGINE_DISTILL  # noqa: E402
from evotrainer.coevolution import CoEvolution  # noqa: E402
from evotrainer.config import (  # noqa: E402
    CacheConfig,
    HarnessConfig,
    RunConfig,
    ValidationConfig,
    apply_override,
    config_from_dict,
)
from evotrainer.errors import BudgetExceeded  # noqa: E402
from evotrainer.evaluation.evaluator import Evaluator  # noqa: E402
from evotrainer.evaluation.runner import SerialRunner  # noqa: E402
from evotrainer.evaluation.validation import Validator  # noqa: E402
from evotrainer.llm.base import LLMClient, SamplingParams  # noqa: E402
from evotrainer.llm.budget import Budget  # noqa: E402
from evotrainer.llm.spec import build_stack  # noqa: E402
from evotrainer.operators.base import OperatorContext  # noqa: E402
from evotrainer.operators.registry import choose_operator, default_operator_weights  # noqa: E402
from evotrainer.operators.repair import repair_child  # noqa: E402
from evotrainer.policy.decoding import DecodingGenes  # noqa: E402
from evotrainer.policy.genome import PolicyGenome  # noqa: E402
from evotrainer.policy.postprocess import LoopCut  # noqa: E402
from evotrainer.policy.seeds import seed_genes  # noqa: E402
from evotrainer.tasks.meetings.seeds import seed_policies  # noqa: E402
from evotrainer.tasks.meetings.task import MeetingTask  # noqa: E402
from evotrainer.types import Instance  # noqa: E402

PROFILES: dict[str, dict[str, Any]] = {
    # Sized so that the whole benchmark (5 optimisers x 3 seeds x budget, plus test evaluation)
    # finishes within 60 minutes on 2 CPU cores with the embedded 135M model.
    "quick": {
        "budget": 40,
        "seeds": 3,
        "n_selection": 2,
        "n_gepa_train": 4,
        "n_test": 3,
        "max_input_tokens": 512,
        "max_tokens": 128,
        "operator_max_tokens": 128,
        "population": 4,
        "elites": 2,
        "tasks_per_generation": 2,
        "outer_every": 1,
        "outer_variants": 1,
        "difficulty": 0.15,
        "n_ctx": 4096,
        "random_batch": 4,
        # with 2 selection meetings, one whose reference has no action item (an empty list then
        # scores action-item F1 = 1) would dominate s_val: select among those with items
        "selection_with_action_items": True,
        "empty_reference_items": "abstain",
    },
    # The engine's defaults for sizes and tokens; all 20 dev meetings.
    "full": {
        "budget": 300,
        "seeds": 3,
        "n_selection": 5,
        "n_gepa_train": 10,
        "n_test": 20,
        "max_input_tokens": 1536,
        "max_tokens": 320,
        "operator_max_tokens": 200,
        "population": 6,
        "elites": 3,
        "tasks_per_generation": 3,
        "outer_every": 3,
        "outer_variants": 2,
        "difficulty": 0.3,
        "n_ctx": 4096,
        "random_batch": 6,
        "selection_with_action_items": True,
        "empty_reference_items": "abstain",
    },
    # Issue 11: enough meetings to see a difference. Selection on 12 AMI train meetings for
    # every method; the engine also gets 8 further train meetings as its confirmation part
    # (validation.confirm); GEPA 10 further ones as its reflection/train set; all disjoint.
    # Test on every AMI dev (20) and every ICSI (61) meeting, reported separately and together,
    # with paired bootstrap intervals against seed_best. Runs cell by cell into a results
    # directory (resumable); see benchmarks/standard.py and docs/benchmarks.md.
    "standard": {
        "budget": 300,
        "seeds": 3,
        "n_selection": 12,
        "n_confirm": 8,
        "n_gepa_train": 10,
        "selection_with_action_items": False,
        # action-item P/R/F1 where the reference lists no item: undefined (as on ICSI), so
        # s_val is ROUGE-L there; the items written there are reported beside s_val. Decided
        # 2026-12-01 before any run under it (docs/benchmarks.md); the first standard run
        # (results/quality-standard) used "abstain" (an empty list scores F1 1, any item 0).
        "empty_reference_items": "skip",
        "results_name": "quality-standard-skip",
        "test_sets": ["ami-dev", "icsi"],
        "n_test": None,  # every meeting of each test set
        "max_input_tokens": 1024,
        "max_tokens": 256,
        "operator_max_tokens": 200,
        "n_ctx": 4096,
        # engine sizes (inner_ga and evotrainer)
        "population": 10,
        "elites": 4,
        "tasks_per_generation": 4,
        # an outer step after every generation: at 300 calls one (~116 calls) is affordable
        # after generation 1 only; with every=3 it was skipped in every run (the two engine
        # cells were one run). With the outer loop off, the best is validated every generation.
        "outer_every": 1,
        "outer_variants": 1,
        "trial_generations": 1,
        "difficulty": 0.15,
        "real_data": True,  # harness.real_data = --train-data (the engine drops validation ids)
        "real_share": None,  # harness.real_share; None = the engine's default
        "engine_set": [],  # further engine overrides KEY=VALUE (part of the settings)
        "random_batch": 10,
        "cells": True,  # results directory, one JSON per (method, seed) cell
    },
}
# Issue 11's third target (co-evolution at least the GA alone) at a budget where harness search
# can pay: the standard profile's meetings, cut and engine sizes, but 1,000 calls per cell
# (several outer steps after the inner loop has found a template: at 300 the GA alone finds it
# by generation 3-4) and 16 confirmation meetings instead of 8 (the 8-meeting check rejected a
# real improvement and passed chance ones). The ablation only: the seeds, the GA alone and
# EvoTrainer. Decided 2026-12-02 before any run under it (docs/benchmarks.md, "Long profile").
PROFILES["long"] = {
    **PROFILES["standard"],
    "budget": 1000,
    "n_confirm": 16,
    "results_name": "quality-long",
    "methods": ["seeds", "inner_ga", "evotrainer"],
}
# Issue 32: labels are scarce. 8 labelled AMI train meetings select, 8 more confirm, the other
# 86 are the unlabelled training pool (references removed); the fixed harness (the seed's R, GA
# alone) against co-evolution, "just use your labels" (the GA training on the 8) and GEPA on the
# 8. Decided 2026-12-03 before any run under it (docs/benchmarks.md, "Scarce profile";
# benchmarks/scarce.py).
PROFILES["scarce"] = {
    **PROFILES["standard"],
    "n_selection": 8,
    "n_confirm": 8,
    "n_gepa_train": 0,  # GEPA trains and validates on the 8 selection meetings
    "results_name": "quality-scarce",
    "methods": ["seeds", "fixed", "evotrainer", "labels_ga", "gepa"],
    "scarce": True,
}
# Issue 31: prompts, weights or both. The standard profile's data, cut and engine sizes; the
# seeds, prompt-only EvoTrainer, weights only (the best seed's kept answers into a LoRA
# adapter), SFT on the human references, alternation (prompts -> weights -> prompts) with the
# harness on and frozen. Protocol in docs/distillation.md, "The benchmark" (benchmarks/distill.py).
PROFILES["distill"] = {
    **PROFILES["standard"],
    "results_name": "quality-distill",
    "methods": [
        "seeds",
        "evotrainer",
        "weights_only",
        "sft_refs",
        "alternation",
        "alternation_frozen",
        # added 2026-12-05 after the five above were test-scored: alternation with the pairs
        # ranked per reward scale (harness/distill_pairs.py, commit 2f949d3); docs/distillation.md
        "alternation_per_scale",
    ],  # fmt: skip
    "distill": True,
    # the alternation cells distil after generation 1: at 300 calls a run has 3-4 generations,
    # and after generation 3 (the first protocol) no seed-0 cell had calls left to distil
    "distill_after": 1,
}
# Issue 46: readable minutes. The standard profile re-measured under the new defaults: every
# method's policies decode and cut with the meeting task's seed genes (repeat penalty, loop
# cut: docs/readability.md), s_val is the task's (0.4 ROUGE-L + 0.4 action-item F1 + 0.2
# readability). Decided 2026-12-06 before any run under it.
PROFILES["readable"] = {
    **PROFILES["standard"],
    "results_name": "quality-readable",
    "genes": "task",
    "s_val_weights": "task",
}
# Issue 46: the distill profile's evotrainer, sft_refs and alternation under the same defaults.
PROFILES["distill-readable"] = {
    **PROFILES["distill"],
    "results_name": "quality-distill-readable",
    "methods": ["seeds", "evotrainer", "sft_refs", "alternation"],
    "genes": "task",
    "s_val_weights": "task",
}
# Issue 48: a third domain. The scarce-labels protocol on the dialogue task (a Cambridge
# tourist-information clerk against simulated customers): 12 MultiWOZ val items select, 12 more
# confirm, the goals of the other val dialogues are the unlabelled training customers, 300
# test-dev items test. The fixed harness (cooperative customers only, L 0.2, the seed weights),
# co-evolution (persona mix, L, real share, weights), the GA on the selection items, GEPA on
# them, and co-evolution with a uniform persona mix (the ablation). Protocol in
# docs/dialogue.md, "The benchmark" (benchmarks/dialogue.py).
PROFILES["dialogue"] = {
    "task": "dialogue",
    "budget": 600,
    "seeds": 3,
    "n_selection": 12,
    "n_confirm": 12,
    "n_gepa_train": 0,
    "n_test": 300,
    "max_turns": 6,
    "max_rows": 4,
    "max_tokens": 96,
    "operator_max_tokens": 200,
    "n_ctx": 4096,
    "population": 6,
    "elites": 3,
    "tasks_per_generation": 3,
    "outer_every": 1,
    "outer_variants": 2,
    "trial_generations": 1,
    "difficulty": 0.2,
    "real_data": False,  # each method's harness says (benchmarks/dialogue.py)
    "real_share": None,
    "engine_set": [],
    "random_batch": 6,
    "results_name": "quality-dialogue",
    "methods": ["seeds", "fixed", "evotrainer", "labels_ga", "gepa", "uniform_mix"],
    "cells": True,
}
METHODS = ("seeds", "random_search", "inner_ga", "evotrainer", "gepa", "evoprompt_ga")
SCARCE_METHODS = ("fixed", "labels_ga")  # cells of the scarce (and dialogue) profile only
DIALOGUE_METHODS = ("uniform_mix",)  # cells of the dialogue profile only
CELL_METHODS = METHODS + SCARCE_METHODS + DIALOGUE_METHODS + DISTILL_METHODS
ROWS = (
    "seed_A",
    "seed_B",
    "seed_C",
    "seed_best",
    "random_search",
    "inner_ga",
    "evotrainer",
    "gepa",
    "evoprompt_ga",
)
CELL_ROWS = ROWS + SCARCE_METHODS + DIALOGUE_METHODS + DISTILL_METHODS
DESCRIPTIONS = {
    "seed_A": "seed policy A unchanged",
    "seed_B": "seed policy B unchanged",
    "seed_C": "seed policy C unchanged",
    "seed_best": "best of A, B, C on the selection data",
    "random_search": "random search over prompt variations of the seeds",
    "inner_ga": "EvoTrainer inner GA alone (outer.enabled=false)",
    "evotrainer": "EvoTrainer with co-evolution (outer.enabled=true)",
    "gepa": "GEPA (gepa package), adapter on the same task and metric",
    "evoprompt_ga": "EvoPromptGA from promptolution",
    "fixed": "fixed harness: the seed's R on unlabelled meetings, GA alone (scarce profile)",
    "labels_ga": "just use your labels: the GA trains on the labelled selection meetings",
    "weights_only": "the best seed with a LoRA adapter trained on its answers the harness kept",
    "sft_refs": "the best seed with a LoRA adapter trained on the human references (SFT)",
    "alternation": "EvoTrainer with distillation: prompts -> weights -> prompts",
    "alternation_frozen": "the GA alone with distillation (the harness frozen)",
    "alternation_per_scale": "alternation, its pairs ranked against answers on the same reward "
    "components (added after the five)",
    "uniform_mix": "co-evolution with every simulated persona alike (dialogue profile: the "
    "persona mix ablated)",
}
TEST_KEYS = ("rougeL", "action_item_f1", "rouge1", "rouge2", "decision_recall")


def profile_genes(prof: dict[str, Any]) -> tuple[DecodingGenes, LoopCut]:
    """The decoding and loop-cut genes every method's policies carry: the meeting task's seed
    genes (``genes: task``, issue 46's profiles) or none (the profiles measured before)."""
    if prof.get("genes") == "task":
        return seed_genes(config_from_dict({}).inner)
    return DecodingGenes(), LoopCut()


def profile_weights(prof: dict[str, Any]) -> dict[str, float]:
    """s_val's weights: the meeting task's (``s_val_weights: task``) or the engine's default
    before issue 46 (0.5 ROUGE-L + 0.5 action-item F1)."""
    if prof.get("s_val_weights") == "task":
        return dict(config_from_dict({}).outer.s_val_weights)
    return dict(C.S_VAL_WEIGHTS)


def make_task(prof: dict[str, Any]) -> MeetingTask:
    """The meeting task every method renders and scores with: the profile's cut and rule."""
    return MeetingTask(
        max_input_tokens=prof["max_input_tokens"],
        truncation="head_tail",
        empty_reference_items=prof["empty_reference_items"],
    )


class EngineContractError(RuntimeError):
    """The profile needs an engine config field this version of the engine does not have."""

    def __init__(self, key: str) -> None:
        super().__init__(
            f"this profile needs the engine option {key}, which this version of evotrainer does "
            "not have (issue 11's engine contract: harness.real_data, harness.real_share, "
            "validation.confirm); update the engine or run another profile"
        )


@dataclass
class RunOut:
    """What one method run on one seed hands back."""

    best: PolicyGenome
    selection_s_val: float | None
    stack_budget: Budget
    wall_s: float
    details: dict[str, Any] = field(default_factory=dict)


class Bench:
    def __init__(self, args: argparse.Namespace, prof: dict[str, Any]) -> None:
        self.args = args
        self.prof = prof
        self.budget = int(prof["budget"])
        self.weights = profile_weights(prof)
        self.decoding, self.cut = profile_genes(prof)
        self.domain = prof.get("task", "meetings")
        self.work: Path = Path(args.work_dir) if args.work_dir else C.WORK / f"quality-{args.tag}"
        self.work.mkdir(parents=True, exist_ok=True)
        self.confirmation: C.Split | None = None
        self.scarce: dict[str, Any] | None = None
        if self.domain == "dialogue":
            self._dialogue_data()
        else:
            self._meeting_data()
        for s in (self.selection, self.confirmation, self.gepa_train, *self.tests.values()):
            if s is not None:
                C.log(s.info["message"])
        self._backend: LLMClient | None = None
        self.engine_runs: Path | None = None  # set by the standard profile: keep run dirs
        self.wrap_backend: Callable[[LLMClient], LLMClient] | None = None  # e.g. progress logs
        self._endpoint: LLMClient | None = None
        self.server: C.LlamaServer | None = None
        self.endpoint_info: dict[str, Any] = {}

    def _meeting_data(self) -> None:
        """The meeting profiles' splits: AMI train (selection, confirmation, GEPA's train set),
        the test sets, and the scarce profile's files."""
        args, prof = self.args, self.prof
        self.task = make_task(prof)
        with_items = prof["selection_with_action_items"]
        self.selection = C.load_split(
            self.task,
            args.train_data,
            prof["n_selection"],
            name="selection",
            synthetic_seed=1001,
            with_action_items=with_items,
        )
        used = set(self.selection.info["ids"])
        # the engine's confirmation part (validation.confirm): further train meetings
        if prof.get("n_confirm"):
            self.confirmation = C.load_split(
                self.task,
                args.train_data,
                prof["n_confirm"],
                name="confirmation",
                synthetic_seed=1003,
                exclude=used,
                offset=2,
                with_action_items=with_items,
            )
            used |= set(self.confirmation.info["ids"])
        if prof["n_gepa_train"]:
            self.gepa_train = C.load_split(
                self.task,
                args.train_data,
                prof["n_gepa_train"],
                name="gepa-train",
                synthetic_seed=1002,
                exclude=used,
                offset=1,
                with_action_items=with_items,
            )
        else:  # GEPA learns from the selection meetings themselves (scarce profile)
            self.gepa_train = self.selection
        self.tests: dict[str, C.Split] = {}
        for i, name in enumerate(prof.get("test_sets", ["ami-dev"])):
            path = test_set_path(args, name)
            self.tests[name] = C.load_split(
                self.task,
                path,
                prof["n_test"] if prof["n_test"] is not None else C.count_lines(path, 20),
                name=f"test {name}",
                synthetic_seed=2002 + i,
            )
        self.test = next(iter(self.tests.values()))
        self.scarce = self._scarce_data(used) if prof.get("scarce") else None

    def _dialogue_data(self) -> None:
        """The dialogue profile's splits, task and harnesses (benchmarks/dialogue.py)."""
        from benchmarks import dialogue as D

        self.task = D.make_task(self.prof, self.args)
        self.weights = dict(D.S_VAL)
        data = D.load_splits(self.task, self.prof, self.args)
        self.selection, self.confirmation = data["selection"], data["confirmation"]
        self.gepa_train = self.selection  # GEPA trains and validates on the selection items
        self.tests = data["tests"]
        self.test = next(iter(self.tests.values()))
        copy = D.write_labelled_copy(
            self.selection.instances, self.work / "dialogue" / "selection-labelled.jsonl"
        )
        self.scarce = {"pool": data["val"], "labelled_copy": copy, "labels": data["labels"]}

    def seed_policies(self) -> list[PolicyGenome]:
        """The task's hand-written seeds A, B, C."""
        if self.domain == "dialogue":
            from benchmarks import dialogue as D

            return D.seed_policies()
        return seed_policies()

    def _scarce_data(self, labelled: set[str]) -> dict[str, Any]:
        """The scarce profile's files: the unlabelled pool and the labelled copy of the
        selection meetings (benchmarks/scarce.py), and the meeting ids of every purpose."""
        from benchmarks import scarce

        train = C.resolve(self.args.train_data)
        if train is None or not train.is_file():
            raise SystemExit(f"the scarce profile needs the AMI train file ({train})")
        pool, pool_ids = scarce.write_unlabelled(
            self.task.load(train), labelled, self.work / "scarce" / "unlabelled-pool.jsonl"
        )
        copy = scarce.write_labelled_copy(
            self.selection.instances, self.work / "scarce" / "selection-labelled.jsonl"
        )
        labels = scarce.Labels(
            selection=tuple(self.selection.info["ids"]),
            confirmation=tuple(self.confirmation.info["ids"]) if self.confirmation else (),
            unlabelled=pool_ids,
            test=tuple(i for s in self.tests.values() for i in s.info["ids"]),
        )
        labels.check()
        if not scarce.holds_no_reference(pool):
            raise RuntimeError(f"{pool}: the unlabelled pool holds a reference")
        return {"pool": pool, "labelled_copy": copy, "labels": labels}

    @property
    def backend(self) -> LLMClient:
        """The model, loaded on first use (a table or a settings check loads none)."""
        if self._backend is None:
            self._backend = C.make_backend(
                self.args.model, self.prof["n_ctx"], self.args.threads, self.args.base_url
            )
        return self.wrap_backend(self._backend) if self.wrap_backend else self._backend

    # -- helpers --------------------------------------------------------------------------
    def agent_sampling(self, seed: int) -> SamplingParams:
        return SamplingParams(temperature=0.0, max_tokens=self.prof["max_tokens"], seed=seed)

    def operator_sampling(self, seed: int) -> SamplingParams:
        return SamplingParams(
            temperature=0.8, max_tokens=self.prof["operator_max_tokens"], seed=seed
        )

    def stack(self, name: str, seed: int, backend: LLMClient | None = None, max_calls=None):
        return C.method_stack(
            backend or self.backend,
            self.work,
            name,
            seed,
            self.budget if max_calls == "budget" else max_calls,
        )

    def endpoint(self) -> LLMClient:
        """The OpenAI-compatible endpoint GEPA and promptolution talk to: a llama_cpp.server
        on the same GGUF file (local models), the given server (openai:), or the fake."""
        if self._endpoint is not None:
            return self._endpoint
        spec = self.args.model
        if spec == C.FAKE_SPEC or spec.startswith("fake:"):
            self._endpoint = self.backend
            self.endpoint_info = {"kind": "fake (in-process)"}
        elif spec.startswith("openai:"):
            self._endpoint = self.backend
            self.endpoint_info = {"kind": "given server", "base_url": self.args.base_url}
        else:
            threads = self.args.threads or getattr(self.backend, "n_threads", 2)
            self.server = C.LlamaServer(
                C.gguf_path(spec), self.prof["n_ctx"], threads, self.work / "llama-server.log"
            ).start()
            C.log(f"llama_cpp.server up at {self.server.base_url} in {self.server.startup_s:.1f}s")
            self._endpoint = C.LlamaServerClient.make(self.server.base_url, self.prof["n_ctx"])
            if self.wrap_backend:
                self._endpoint = self.wrap_backend(self._endpoint)
            self.endpoint_info = {
                "kind": "python -m llama_cpp.server (OpenAI-compatible)",
                "command": " ".join(self.server.command),
                "startup_s": round(self.server.startup_s, 1),
                "request_extras": C.LlamaServerClient.SAME_AS_EMBEDDED,
            }
        return self._endpoint

    def close(self) -> None:
        if self.server is not None:
            self.server.close()

    def labelled_pool(self) -> list[Instance]:
        """The AMI train meetings no split of this benchmark holds (with their references)."""
        train = C.resolve(self.args.train_data)
        if train is None or not train.is_file():
            raise SystemExit(f"this method needs the AMI train file ({train})")
        used = set(self.selection.info["ids"]) | set(self.gepa_train.info["ids"])
        if self.confirmation is not None:
            used |= set(self.confirmation.info["ids"])
        return [i for i in self.task.load(train) if i.id not in used]

    def model_config(self):
        return C.model_config(self.args.model, self.prof["n_ctx"], self.args.threads)

    def validator(self, stack, seed: int) -> Validator:
        ev = Evaluator(self.task, stack.client, self.agent_sampling(seed), SerialRunner())
        return Validator(
            self.task, ev, self.selection.instances, self.weights, self.selection.info["source"]
        )

    def seeds(self) -> list[PolicyGenome]:
        """The task's seed policies A, B, C with the profile's decoding and loop-cut genes."""
        return [with_genes(p, self.decoding, self.cut) for p in self.seed_policies()]

    # -- methods --------------------------------------------------------------------------
    def run_seeds(self, seed: int) -> dict[str, RunOut]:
        t0 = time.perf_counter()
        stack = self.stack("seeds", seed)
        seeds = self.seeds()
        res = self.validator(stack, seed).validate(seeds)
        wall = time.perf_counter() - t0
        out = {f"seed_{p.name}": RunOut(p, res[p.id].s_val, stack.budget, wall) for p in seeds}
        best = max(seeds, key=lambda p: (res[p.id].s_val, -ord(p.name)))
        out["seed_best"] = RunOut(
            best, res[best.id].s_val, stack.budget, wall, {"chosen": best.name}
        )
        return out

    def run_random_search(self, seed: int) -> RunOut:
        t0 = time.perf_counter()
        stack = self.stack("random_search", seed, max_calls="budget")
        validator = self.validator(stack, seed)
        rng = C.rng_for("random-search", seed)
        seeds = self.seeds()
        # the engine's operators, with the task's template library; the few-shot operator has
        # no examples and the feedback-directed edit no scores here, so they make no children
        ctx = OperatorContext(
            rng=rng,
            generation=1,
            llm=stack.client,
            sampling=self.operator_sampling(seed),
            templates=tuple(self.task.output_templates()),
            vocabulary=self.task.vocabulary(),
        )
        weights = default_operator_weights()
        n_sel = len(self.selection.instances)
        seen = {p.id for p in seeds}
        pending: list[PolicyGenome] = list(seeds)
        scored: dict[str, tuple[PolicyGenome, float]] = {}
        proposed = failed = 0
        budget = stack.budget

        def left() -> int:
            return self.budget - budget.backend_calls

        try:
            while left() >= n_sel:
                k = min(self.prof["random_batch"], left() // n_sel)
                tries = 0
                while len(pending) < k and left() // n_sel > len(pending) and tries < 20 * k:
                    tries += 1
                    child = self._variation(rng, seeds, ctx, weights)
                    proposed += 1
                    if child is None or child.id in seen:
                        failed += 1
                        continue
                    seen.add(child.id)
                    pending.append(child)
                k = min(len(pending), left() // n_sel)
                if k <= 0:
                    break
                batch, pending = pending[:k], pending[k:]
                res = validator.validate(batch)
                for p in batch:
                    scored[p.id] = (p, res[p.id].s_val)
        except BudgetExceeded:
            pass
        best, s = max(scored.values(), key=lambda t: t[1])
        return RunOut(
            best,
            s,
            budget,
            time.perf_counter() - t0,
            {"candidates_scored": len(scored), "proposed": proposed, "rejected": failed},
        )

    @staticmethod
    def _variation(
        rng: random.Random,
        seeds: list[PolicyGenome],
        ctx: OperatorContext,
        weights: dict[str, float],
    ) -> PolicyGenome | None:
        """1-2 random operators applied to random seeds (no reflective mutation: random search
        has no feedback to reflect on)."""
        current: PolicyGenome | None = None
        for _ in range(1 if rng.random() < 0.6 else 2):
            op = choose_operator(rng, weights, llm_available=True, exclude=("reflective",))
            if op.arity == 2:
                parents = [current or rng.choice(seeds), rng.choice(seeds)]
            else:
                parents = [current or rng.choice(seeds)]
            child = op.apply(parents, ctx)
            child = repair_child(child, ctx.max_chars) if child else None
            if child is not None:
                current = child
        return current

    def engine_config(
        self, seed: int, outer: bool, cache: Path | None = None, method: str | None = None
    ) -> RunConfig:
        """The RunConfig of an inner_ga (``outer=False``) or evotrainer run at the profile's
        sizes, with the profile's and the command line's ``engine_set`` overrides applied.
        ``method``: the scarce profile's engine method (fixed, evotrainer, labels_ga), whose
        harness and defences benchmarks/scarce.py sets."""
        p = self.prof
        model = {
            "spec": self.args.model if not self.args.model.startswith("fake") else "local:x",
            "n_ctx": p["n_ctx"],
            "n_threads": self.args.threads,
            "max_tokens": p["max_tokens"],
            "operator_max_tokens": p["operator_max_tokens"],
        }
        outer_cfg: dict[str, Any] = {
            "enabled": outer,
            "every": p["outer_every"],
            "variants": p["outer_variants"],
            "s_val_weights": dict(self.weights),  # every method selects on the same s_val
        }
        if "trial_generations" in p:
            outer_cfg["trial_generations"] = p["trial_generations"]
        harness: dict[str, Any] = {"difficulty": p["difficulty"]}
        validation: dict[str, Any] = {"data": None, "limit": None}
        n_confirm = len(self.confirmation.instances) if self.confirmation else 0
        if "confirm" in ValidationConfig.model_fields:
            validation["confirm"] = n_confirm  # 0 for quick/full: select on every meeting
        elif n_confirm:
            raise EngineContractError("validation.confirm")
        if p.get("real_data"):
            if "real_data" not in HarnessConfig.model_fields:
                raise EngineContractError("harness.real_data")
            train = C.resolve(self.args.train_data)
            harness["real_data"] = str(train) if train is not None and train.is_file() else None
        if p.get("real_share") is not None:
            if "real_share" not in HarnessConfig.model_fields:
                raise EngineContractError("harness.real_share")
            harness["real_share"] = p["real_share"]
        data = {
            "seed": seed,
            "model": model,
            "cache": {"enabled": cache is not None, "path": str(cache) if cache else None},
            # reserve_final (default): the engine holds back the calls one validation costs and
            # validates its final best when the cap stops the run
            "budget": {"max_calls": self.budget},
            "task": self.task_section(method),
            "inner": {
                "population": p["population"],
                "elites": p["elites"],
                "tasks_per_generation": p["tasks_per_generation"],
                "generations": 10_000,  # the budget ends the run
                # the seeds start with the profile's genes, as every other method's policies
                "seed_decoding": self.decoding.to_json(),
                "seed_postprocess": self.cut.to_json(),
            },
            "outer": outer_cfg,
            "harness": harness,
            "validation": validation,
            "report": False,
        }
        if method in ENGINE_DISTILL:
            from benchmarks.distill import engine_distill

            data["distill"] = engine_distill(int(p.get("distill_after", 3)))
        if self.scarce is not None:
            if self.domain == "dialogue":
                from benchmarks.dialogue import engine_overrides
            else:
                from benchmarks.scarce import engine_overrides

            name = method or ("evotrainer" if outer else "fixed")
            extra = engine_overrides(name, self.scarce["pool"], self.scarce["labelled_copy"])
            data["harness"].update(extra["harness"])
            data["defences"] = extra["defences"]
            data["outer"].update(extra.get("outer", {}))
        cfg = RunConfig.model_validate(data)
        return with_overrides(cfg, [*p.get("engine_set", []), *self.args.engine_set])

    def engine_task(self, cfg: RunConfig) -> Any:
        """The task an engine cell runs: the profile's, or (dialogue) the one its config's
        ``task`` section builds (the uniform_mix method's persona mix differs)."""
        if self.domain != "dialogue":
            return self.task
        from evotrainer.tasks.registry import build_task

        return build_task(cfg.task)

    def task_section(self, method: str | None) -> dict[str, Any]:
        """The engine config's ``task`` section: the profile's cut (meetings) or the dialogue
        task's settings (the uniform_mix method's persona mix)."""
        if self.domain == "dialogue":
            from benchmarks.dialogue import task_section

            return task_section(self.prof, self.args, method)
        return {
            "max_input_tokens": self.prof["max_input_tokens"],
            "truncation": "head_tail",
            "empty_reference_items": self.task.empty_reference_items,
        }

    def engine_validation(self) -> list[Instance]:
        """The validation list handed to the engine: the selection meetings, plus (standard
        profile) the confirmation meetings placed where the engine's own split
        (``validation.confirm``) takes its confirmation part from, so the engine selects on
        exactly the meetings every other method selects on. Checked with the engine's split."""
        sel = list(self.selection.instances)
        conf = list(self.confirmation.instances) if self.confirmation else []
        if not conf:
            return sel
        try:
            from evotrainer.run.validation_set import split_confirmation
        except ImportError as exc:
            raise EngineContractError("validation.confirm (split_confirmation)") from exc
        n = len(sel) + len(conf)
        slots = set(C.spread(list(range(n)), len(conf), offset=1))
        it_sel, it_conf = iter(sel), iter(conf)
        order = [next(it_conf) if i in slots else next(it_sel) for i in range(n)]
        got_sel, got_conf = split_confirmation(order, len(conf))
        if [i.id for i in got_sel] != [i.id for i in sel] or {i.id for i in got_conf} != {
            i.id for i in conf
        }:
            raise RuntimeError(
                "the engine's confirmation split does not take the benchmark's confirmation "
                f"meetings ({[i.id for i in got_conf]} vs {[i.id for i in conf]}): "
                "Bench.engine_validation must follow evotrainer.run.validation_set"
            )
        return order

    def run_engine(self, seed: int, outer: bool, method: str | None = None) -> RunOut:
        t0 = time.perf_counter()
        name = method or ("evotrainer" if outer else "inner_ga")
        cache = self.work / "cache" / f"{name}-seed{seed}.sqlite"
        cfg = self.engine_config(seed, outer, cache, method)
        run_dir = None
        resumed: dict[str, Any] | None = None
        if self.engine_runs is not None:  # the standard profile keeps each run's events
            run_dir = self.engine_runs / f"{name}-seed{seed}"
            resumed = resume_point(run_dir, cfg, cache)
            if resumed is None:
                shutil.rmtree(run_dir, ignore_errors=True)  # nothing to resume: start afresh
        if resumed is None:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{cache}{suffix}").unlink(missing_ok=True)
            co = CoEvolution(
                cfg,
                task=self.engine_task(cfg),
                llm=self.backend,
                validation=self.engine_validation(),
            )
        else:  # a killed cell goes on from its last checkpoint (see resume_point)
            C.log(
                f"{name} seed {seed}: resuming {run_dir} from {resumed['checkpoint']} "
                f"(generation {resumed['generation']}; {resumed['forgotten']} answers of the "
                "generation in progress forgotten, to be paid again)"
            )
            co, _ = CoEvolution.resume(
                run_dir,
                task=self.engine_task(cfg),
                llm=self.backend,
                validation=self.engine_validation(),
            )
        res = co.run(run_dir)
        best, best_s = res.best, res.best_s_val
        s = res.summary
        final_note = (
            f"final best validated: s_val {s['last_best_s_val']:.4f}"
            if s.get("last_best_s_val") is not None
            else "final best not validated (no budget left)"
        )
        details = {
            "stopped": s["stopped"],
            "generations": s["generations"],
            "outer_steps": s["outer_steps"],
            "trial_generations": s["trial_generations"],
            "initial_s_val": s["initial_s_val"],
            "archive_best_s_val": res.best_s_val,
            "final_validation": final_note,
            "harness": s["harness"],
            "best_lineage": best.lineage.operator,
        }
        if "confirmation" in s:  # the engine's held-out check of what it returns
            details["confirmation"] = s["confirmation"]
        if resumed is not None:
            details["resumed"] = resumed
        if self.engine_runs is not None:
            details["summary"] = s
            details["engine_config"] = cfg.model_dump(mode="json")
            details["run_dir"] = str(run_dir)
        return RunOut(best, best_s, co.components.budget, time.perf_counter() - t0, details)

    def _scorer(self, name: str, seed: int):
        from benchmarks.baselines import Scorer

        stack = self.stack(name, seed, backend=self.endpoint(), max_calls="budget")
        return Scorer(
            self.task,
            stack,
            self.agent_sampling(seed),
            self.weights,
            decoding=self.decoding,
            cut=self.cut,
        )

    def run_gepa(self, seed: int) -> RunOut:
        from benchmarks.baselines import run_gepa

        return self._external(
            "gepa",
            seed,
            run_gepa,
            self.seed_policies()[0].render(),
            self.gepa_train.instances,
            self.selection.instances,
        )

    def run_evoprompt(self, seed: int) -> RunOut:
        from benchmarks.baselines import run_evoprompt

        return self._external(
            "evoprompt_ga",
            seed,
            run_evoprompt,
            [p.render() for p in self.seed_policies()],
            self.selection.instances,
        )

    def _external(self, name: str, seed: int, optimise: Any, *inputs: Any) -> RunOut:
        """An external optimiser (``optimise(scorer, *inputs, sampling, seed)`` -> dict with
        ``best`` and ``selection_s_val``) on its own metered endpoint stack."""
        t0 = time.perf_counter()
        scorer = self._scorer(name, seed)
        if self.domain == "dialogue":
            from benchmarks.dialogue import feedback_text

            scorer.feedback = feedback_text
        out = optimise(scorer, *inputs, self.operator_sampling(seed), seed)
        best = with_genes(
            PolicyGenome.from_text(out.pop("best"), name=name), self.decoding, self.cut
        )
        return RunOut(
            best, out.pop("selection_s_val"), scorer.stack.budget, time.perf_counter() - t0, out
        )

    # -- test evaluation ----------------------------------------------------------------------
    def test_evaluate(self, policies: list[PolicyGenome]) -> tuple[dict[str, Any], dict]:
        """All chosen policies on the test meetings, instance-major, one shared evaluator (and,
        for real models, one persistent cache: identical prompts give identical outputs)."""
        t0 = time.perf_counter()
        if self.args.model == C.FAKE_SPEC or self.args.no_test_cache:
            cache_cfg = CacheConfig(enabled=False)
        else:
            cache_cfg = CacheConfig(enabled=True, path=str(C.WORK / "cache" / "test-shared.sqlite"))
        stack = build_stack(self.backend, cache_cfg, Budget())
        ev = Evaluator(self.task, stack.client, self.agent_sampling(0), SerialRunner())
        val = Validator(self.task, ev, self.test.instances, self.weights, self.test.info["source"])
        res = val.validate(policies)
        out = {}
        for p in policies:
            r = res[p.id]
            out[p.id] = {
                "s_val": r.s_val,
                **{k: r.aggregates.get(k) for k in TEST_KEYS},
                "n_action_items": r.aggregates.get("n_action_items"),
                "errors": sum(1 for row in r.per_instance if row.get("error")),
            }
        info = {**C.usage(stack.budget), "wall_s": round(time.perf_counter() - t0, 2)}
        info["distinct_policies"] = len({p.id for p in policies})
        return out, info


def with_genes(p: PolicyGenome, decoding: DecodingGenes, cut: LoopCut) -> PolicyGenome:
    """``p`` (its name and lineage kept) decoded and cut with these genes."""
    return replace(p, decoding=decoding, postprocess=cut)


def test_set_path(args: argparse.Namespace, name: str) -> str:
    """The JSONL file of a named test set."""
    paths = {"ami-dev": args.test_data, "icsi": args.icsi_data}
    if name not in paths:
        raise SystemExit(f"unknown test set {name!r}; known: {', '.join(paths)}")
    return paths[name]


def resume_point(run_dir: Path, cfg: RunConfig, cache: Path) -> dict[str, Any] | None:
    """Where a killed engine cell can go on from: its run directory's last checkpoint, when the
    directory holds an unfinished run of the same config (threads aside) and its cache is there.
    The answers the cache stored after that checkpoint (the generation in progress at the kill)
    are deleted, so the resumed cell pays for them again and spends its budget exactly as an
    uninterrupted cell does (greedy decoding: the answers are the same). None: start afresh."""
    from evotrainer.llm.cache import ResponseCache
    from evotrainer.run.checkpoint import load_latest
    from evotrainer.run.rundir import RunDirectory, absolute_paths

    if not (run_dir / "checkpoints").is_dir() or not cache.is_file():
        return None
    try:
        stored = RunDirectory.open(run_dir).config
        state, path, _ = load_latest(run_dir)
    except Exception as exc:  # noqa: BLE001 - finished, foreign or damaged: start afresh
        C.log(f"{run_dir}: not resumable ({type(exc).__name__}: {exc}); starting afresh")
        return None

    def plain(c: RunConfig) -> dict[str, Any]:
        d = absolute_paths(c).model_dump(mode="json")
        d["model"].pop("n_threads", None)
        return d

    if plain(stored) != plain(cfg):
        C.log(f"{run_dir}: its config differs from this cell's; starting afresh")
        return None
    rc = ResponseCache(cache)
    try:
        forgotten = rc.forget_after(path.stat().st_mtime)
    finally:
        rc.close()
    return {
        "checkpoint": path.name,
        "generation": int(state["inner"]["generation"]),
        "calls_at_checkpoint": state["budget"].get("backend_calls"),
        "forgotten": forgotten,
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def with_overrides(cfg: RunConfig, assignments: list[str]) -> RunConfig:
    """``cfg`` with ``--engine-set KEY=VALUE`` overrides applied (validated again)."""
    if not assignments:
        return cfg
    data = cfg.model_dump(mode="json")
    for assignment in assignments:
        apply_override(data, assignment)
    return RunConfig.model_validate(data)


OVERRIDE_FLAGS = ("budget", "seeds", "n_test", "n_selection", "max_input_tokens", "max_tokens")


def resolve_profile(args: argparse.Namespace) -> dict[str, Any]:
    """The profile's settings with the command line's flags and ``--profile-set`` applied."""
    prof = dict(PROFILES[args.profile])
    for key in OVERRIDE_FLAGS:
        if getattr(args, key) is not None:
            prof[key] = getattr(args, key)
    for assignment in args.profile_set:
        key, sep, raw = assignment.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in prof:
            raise SystemExit(
                f"--profile-set {assignment!r}: expected KEY=VALUE with KEY one of "
                f"{', '.join(sorted(prof))}"
            )
        try:
            prof[key] = json.loads(raw)
        except json.JSONDecodeError:
            prof[key] = raw
    return prof


def run(args: argparse.Namespace) -> dict[str, Any]:
    prof = resolve_profile(args)
    if prof.get("cells") or args.results_dir:  # results directory, cell by cell
        from benchmarks import standard

        return standard.run(args, prof)
    if args.cells or args.test_only or args.skip_test:
        raise SystemExit(
            "--cells, --test-only and --skip-test need a results directory "
            "(--profile standard or --results-dir DIR)"
        )
    methods = [m.strip() for m in args.methods.split(",")] if args.methods else list(METHODS)
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise SystemExit(f"unknown method(s) {unknown}; known: {', '.join(METHODS)}")
    try:  # a typo in --engine-set fails here, not in every engine run
        with_overrides(RunConfig(), args.engine_set)
    except Exception as exc:  # noqa: BLE001 - ConfigError, ValidationError
        raise SystemExit(f"--engine-set {args.engine_set}: {exc}") from exc
    started = time.time()
    t0 = time.perf_counter()
    bench = Bench(args, prof)
    out_path = Path(args.out) if args.out else C.RESULTS / f"quality-{args.profile}.json"
    doc: dict[str, Any] = {
        "benchmark": "quality",
        "profile": args.profile,
        "command": "python " + " ".join([sys.argv[0], *args.argv]),
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)),
        "machine": C.machine(),
        "model": args.model,
        "threads": args.threads or getattr(bench.backend, "n_threads", None),
        "settings": {**prof, **({"engine_set": args.engine_set} if args.engine_set else {})},
        "s_val_weights": bench.weights,
        "data": {
            "selection": bench.selection.info,
            "gepa_train": bench.gepa_train.info,
            "test": bench.test.info,
            "truncation": f"head_tail at {prof['max_input_tokens']} estimated tokens, all methods",
        },
        "methods": {row: {"description": DESCRIPTIONS[row], "runs": []} for row in ROWS},
        "partial": True,
    }
    runs: dict[str, list[tuple[int, RunOut | None, str | None]]] = {r: [] for r in ROWS}
    seeds = list(range(prof["seeds"]))
    jobs: list[tuple[str, Callable[[int], Any]]] = [
        ("seeds", bench.run_seeds),
        ("random_search", bench.run_random_search),
        ("inner_ga", lambda s: bench.run_engine(s, outer=False)),
        ("evotrainer", lambda s: bench.run_engine(s, outer=True)),
        ("gepa", bench.run_gepa),
        ("evoprompt_ga", bench.run_evoprompt),
    ]
    try:
        for name, fn in jobs:
            if name not in methods:
                continue
            for seed in seeds if name != "seeds" else [0]:
                C.log(f"{name} seed {seed}: start")
                cpu0 = time.process_time()
                try:
                    got = fn(seed)
                except Exception as exc:  # noqa: BLE001 - a failing method is a result
                    err = f"{type(exc).__name__}: {exc}"
                    C.log(f"{name} seed {seed}: FAILED {err}")
                    tb = traceback.format_exc(limit=6)
                    runs[name].append((seed, None, f"{err}\n{tb}"))
                    continue
                for r in got.values() if isinstance(got, dict) else [got]:
                    r.details.setdefault("process_cpu_s", round(time.process_time() - cpu0, 1))
                if name == "seeds":
                    # deterministic (temperature 0): one run stands for every seed
                    for row, r in got.items():
                        for s in seeds:
                            runs[row].append((s, r, None))
                    C.log(f"seeds: {_brief(got['seed_best'])}")
                else:
                    runs[name].append((seed, got, None))
                    C.log(f"{name} seed {seed}: {_brief(got)}")
                _fill(doc, runs, {}, partial=True)
                C.write_json(out_path, doc)
        policies = [r.best for rows in runs.values() for _, r, _ in rows if r is not None]
        C.log(f"test evaluation of {len({p.id for p in policies})} distinct policies")
        test, test_info = bench.test_evaluate(policies) if policies else ({}, {})
        doc["test_evaluation"] = test_info
        doc["endpoint"] = bench.endpoint_info
    finally:
        bench.close()
    _fill(doc, runs, test, partial=False)
    doc["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    doc["elapsed_s"] = round(time.perf_counter() - t0, 1)
    C.write_json(out_path, doc)
    C.log(f"wrote {out_path} ({doc['elapsed_s']:.0f} s)")
    print(table(doc))
    return doc


def _brief(r: RunOut) -> str:
    s = "n/a" if r.selection_s_val is None else f"{r.selection_s_val:.3f}"
    b = r.stack_budget.snapshot()
    return f"selection s_val {s}, {b['backend_calls']} calls, {r.wall_s:.0f}s, best {r.best.id}"


def _fill(doc: dict[str, Any], runs: dict, test: dict[str, Any], partial: bool) -> None:
    for row, items in runs.items():
        rec = doc["methods"][row]
        rec["runs"] = []
        for seed, r, err in items:
            if r is None:
                rec["runs"].append({"seed": seed, "status": "failed", "error": err})
                continue
            item = {
                "seed": seed,
                "status": "ok",
                "best_policy": {"id": r.best.id, "text": r.best.render()[:1500]},
                "selection_s_val": r.selection_s_val,
                **C.usage(r.stack_budget),
                "wall_s": round(r.wall_s, 2),
                "details": r.details,
            }
            if r.best.id in test:
                item["test"] = test[r.best.id]
            rec["runs"].append(item)
        _aggregate(rec)
    doc["partial"] = partial


def _aggregate(rec: dict[str, Any]) -> None:
    """Mean and std over the seeds of one method's runs."""
    ok = [x for x in rec["runs"] if x["status"] == "ok"]
    agg: dict[str, Any] = {
        "n_ok": len(ok),
        "n_failed": len(rec["runs"]) - len(ok),
        "selection_s_val": C.mean_std([x["selection_s_val"] for x in ok]),
        "calls": C.mean_std([x["calls"] for x in ok]),
        "tokens": C.mean_std([x["tokens"] for x in ok]),
        "wall_s": C.mean_std([x["wall_s"] for x in ok]),
    }
    for key in ("s_val", *TEST_KEYS):
        agg[f"test_{key}"] = C.mean_std([x.get("test", {}).get(key) for x in ok])
    rec["aggregate"] = agg
    if rec["runs"] and not ok:
        rec["error"] = rec["runs"][0]["error"].splitlines()[0]


def rescore(args: argparse.Namespace) -> dict[str, Any]:
    """Score the chosen policies of an existing (possibly partial) result file on the test
    meetings and rewrite its test fields: for a run that was stopped before its test phase."""
    path = Path(args.rescore)
    doc = json.loads(path.read_text())
    prof = dict(doc["settings"])
    args.model = doc["model"]
    args.threads = args.threads or doc.get("threads")
    bench = Bench(args, prof)
    pols = {
        run["best_policy"]["id"]: PolicyGenome.from_text(run["best_policy"]["text"])
        for rec in doc["methods"].values()
        for run in rec["runs"]
        if run["status"] == "ok"
    }
    test, info = bench.test_evaluate(list(pols.values()))
    by_text = {p.render(): test[p.id] for p in pols.values()}
    for rec in doc["methods"].values():
        for run in rec["runs"]:
            if run["status"] == "ok":
                run["test"] = by_text[run["best_policy"]["text"]]
        _aggregate(rec)
    doc["test_evaluation"] = {**info, "rescored": time.strftime("%Y-%m-%d %H:%M:%S")}
    C.write_json(path, doc)
    print(table(doc))
    return doc


def table(doc: dict[str, Any]) -> str:
    """The markdown results table of docs/benchmarks.md."""
    head = (
        "| method | test ROUGE-L | test action-item F1 | test s_val | selection s_val "
        "| calls | tokens | wall s |\n|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for row, rec in doc["methods"].items():
        a = rec.get("aggregate") or {}
        if not rec["runs"]:
            continue
        if a.get("n_ok", 0) == 0:
            lines.append(f"| {row} | failed: {rec.get('error', '?')[:80]} | | | | | | |")
            continue
        calls = a["calls"]["mean"]
        tokens = a["tokens"]["mean"]
        lines.append(
            f"| {row} | {C.fmt(a['test_rougeL'])} | {C.fmt(a['test_action_item_f1'])} "
            f"| {C.fmt(a['test_s_val'])} | {C.fmt(a['selection_s_val'])} "
            f"| {calls:.0f} | {tokens:.0f} | {a['wall_s']['mean']:.0f} |"
        )
    return "\n".join(lines)


def estimate(args: argparse.Namespace) -> dict[str, Any]:
    """Seconds per call at the profile's sizes (seeds A, B, C on one test meeting: one cold
    prefill, two with the transcript prefix reused) times the number of calls of a full run."""
    prof = resolve_profile(args)
    task = make_task(prof)
    inst = C.load_split(task, args.test_data, 1, name="estimate", synthetic_seed=2002).instances
    backend = C.make_backend(args.model, prof["n_ctx"], args.threads, args.base_url)
    params = SamplingParams(temperature=0.0, max_tokens=prof["max_tokens"], seed=0)
    times, cpu, tokens = [], [], []
    for p in seed_policies():
        t0, c0 = time.perf_counter(), time.process_time()
        c = backend.complete(task.render(p.render(), inst[0])[0], params)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        tokens.append((c.prompt_tokens, c.completion_tokens))
    per_call = sum(times) / len(times)
    # CPU seconds of the (single-threaded) model ~ wall seconds on an idle core
    per_call_cpu = sum(cpu) / len(cpu)
    n_methods = len(METHODS) - 1  # the budgeted ones
    n_test = {
        name: prof["n_test"] or C.count_lines(test_set_path(args, name), 20)
        for name in prof.get("test_sets", ["ami-dev"])
    }
    calls = {
        "seeds": 3 * prof["n_selection"],
        "budgeted": n_methods * prof["seeds"] * prof["budget"],
        "test_at_most": sum(n_test.values()) * (3 + n_methods * prof["seeds"]),
    }
    total = sum(calls.values())
    return {
        "profile": args.profile,
        "model": args.model,
        "threads": args.threads or getattr(backend, "n_threads", None),
        "seconds_per_call": [round(t, 2) for t in times],
        "cpu_seconds_per_call": [round(t, 2) for t in cpu],
        "tokens_per_call": tokens,
        "test_meetings": n_test,
        "calls": calls,
        "estimated_hours": round(total * per_call / 3600, 1),
        "estimated_hours_from_cpu_time": round(total * per_call_cpu / 3600, 1),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    ap.add_argument("--budget", type=int, help="backend LLM calls per method per seed")
    ap.add_argument(
        "--seeds",
        type=int,
        help="number of seeds (0..K-1); default 3 (a results directory records it: the grid)",
    )
    ap.add_argument("--model", default="local:smollm2", help=f"model spec, or {C.FAKE_SPEC}")
    ap.add_argument("--base-url", help="endpoint for an openai:<model> spec")
    ap.add_argument("--threads", type=int, help="CPU threads of the embedded model and server")
    ap.add_argument(
        "--methods",
        help=f"comma list of {', '.join(METHODS)} (default all; a filter in a results directory)",
    )
    ap.add_argument(
        "--train-data",
        default=C.DEFAULT_TRAIN,
        help="AMI train (JSONL): selection, confirmation, GEPA train and (standard) the engine's "
        "real training meetings",
    )
    ap.add_argument("--test-data", default=C.DEFAULT_TEST, help="test set ami-dev (JSONL)")
    ap.add_argument("--icsi-data", default=C.DEFAULT_ICSI, help="test set icsi (JSONL; standard)")
    from benchmarks.dialogue import add_arguments

    add_arguments(ap)
    ap.add_argument(
        "--n-test",
        type=int,
        help="test meetings per test set (spread over the file; standard: all)",
    )
    ap.add_argument("--n-selection", type=int, help="selection meetings")
    ap.add_argument("--max-input-tokens", type=int, help="transcript truncation (all methods)")
    ap.add_argument("--max-tokens", type=int, help="max tokens of one agent answer")
    ap.add_argument(
        "--engine-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="config override for the inner_ga and evotrainer runs (repeatable), e.g. "
        "defences.terminal_share=0.3",
    )
    ap.add_argument(
        "--profile-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a profile setting (repeatable; VALUE as JSON), e.g. population=4 "
        "n_confirm=2 n_gepa_train=2",
    )
    ap.add_argument("--out", help="result JSON (default benchmarks/results/quality-PROFILE.json)")
    cells = ap.add_argument_group(
        "results directory (standard profile, or any profile with --results-dir)"
    )
    cells.add_argument(
        "--results-dir",
        help="one JSON per (method, seed) cell + test scores + summary.json "
        "(default benchmarks/results/quality-PROFILE/); a rerun skips finished cells and "
        "refuses other settings",
    )
    cells.add_argument(
        "--cells",
        help="run only these cells: comma list of METHOD or METHOD:SEED (e.g. seeds,gepa:0)",
    )
    cells.add_argument("--skip-test", action="store_true", help="run cells, no test evaluation")
    cells.add_argument(
        "--test-only", action="store_true", help="no cells: test-evaluate the finished ones"
    )
    cells.add_argument(
        "--log-every", type=int, default=5, help="test evaluation: log (and save) every N meetings"
    )
    cells.add_argument(
        "--log-every-calls",
        type=int,
        default=50,
        help="log every N backend calls inside a cell (0 = off)",
    )
    ap.add_argument(
        "--work-dir",
        help="caches, logs, engine run dirs (default benchmarks/results/tmp/quality-TAG, or "
        "benchmarks/results/tmp/quality-NAME for a results directory NAME)",
    )
    ap.add_argument("--tag", default="run", help="name of the default work dir")
    ap.add_argument("--no-test-cache", action="store_true", help="no shared test-set cache")
    ap.add_argument(
        "--table",
        metavar="JSON_OR_DIR",
        help="print the table of a result file or results directory (partial ones too) and exit",
    )
    ap.add_argument("--rescore", metavar="JSON", help="(re)score a result file on the test set")
    ap.add_argument(
        "--estimate",
        action="store_true",
        help="time 3 real calls at the profile's sizes and print the estimated total time",
    )
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.table:
        path = Path(args.table)
        if path.is_dir():
            from benchmarks import standard

            print(standard.table_from_dir(path))
        else:
            print(table(json.loads(path.read_text())))
        return 0
    if args.estimate:
        print(json.dumps(estimate(args), indent=2))
        return 0
    if args.rescore:
        rescore(args)
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
