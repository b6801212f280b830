"""What every method of the quality benchmark runs against (``Bench``): the profile, the task,
the splits, the model (loaded on first use), a fresh budget and cache per method and seed, the
evaluator (the library's: ``evaluation.from_config``, as ``evotrainer eval`` builds it) and the
OpenAI-compatible endpoint the external optimisers talk to. ``RunOut`` is what one method run
on one seed hands back (benchmarks/methods/)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks import bench_profile
from benchmarks import common as C
from benchmarks.splits import Splits, meeting_splits
from evotrainer.config import ModelConfig
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.validation import Validator
from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.llm.budget import Budget
from evotrainer.llm.spec import LLMStack
from evotrainer.policy.decoding import DecodingGenes
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.postprocess import LoopCut
from evotrainer.types import Instance


@dataclass
class RunOut:
    """What one method run on one seed hands back."""

    best: PolicyGenome
    selection_s_val: float | None
    stack_budget: Budget
    wall_s: float
    details: dict[str, Any] = field(default_factory=dict)


def with_genes(p: PolicyGenome, decoding: DecodingGenes, cut: LoopCut) -> PolicyGenome:
    """``p`` (its name and lineage kept) decoded and cut with these genes."""
    return replace(p, decoding=decoding, postprocess=cut)


class Bench:
    """The profile's task, data and model, shared by every method run of one invocation."""

    def __init__(self, args: argparse.Namespace, prof: dict[str, Any]) -> None:
        self.args = args
        self.prof = prof
        self.budget = int(prof["budget"])
        self.weights = bench_profile.weights(prof)
        self.decoding, self.cut = bench_profile.genes(prof)
        self.domain = prof.get("task", "meetings")
        self.work: Path = Path(args.work_dir) if args.work_dir else C.WORK / f"quality-{args.tag}"
        self.work.mkdir(parents=True, exist_ok=True)
        if self.domain == "dialogue":
            from benchmarks import dialogue

            self.task: Any = dialogue.make_task(prof, args)
            self.weights = dict(dialogue.S_VAL)
            data = dialogue.splits(self.task, prof, args, self.work)
        else:
            self.task = bench_profile.meeting_task(prof)
            data = meeting_splits(self.task, args, prof, self.work)
        self.splits: Splits = data
        self.selection, self.confirmation = data.selection, data.confirmation
        self.gepa_train, self.tests = data.gepa_train, data.tests
        self.test = next(iter(self.tests.values()))
        self.scarce = data.scarce
        for s in (self.selection, self.confirmation, self.gepa_train, *self.tests.values()):
            if s is not None:
                C.log(s.info["message"])
        self._backend: LLMClient | None = None
        self.engine_runs: Path | None = None  # set by a results directory: keep run dirs
        self.train_cache: Path | None = None  # --train-cache: distillations share trainings
        self.wrap_backend: Callable[[LLMClient], LLMClient] | None = None  # e.g. progress logs
        self._endpoint: LLMClient | None = None
        self.server: C.LlamaServer | None = None
        self.endpoint_info: dict[str, Any] = {}

    @property
    def backend(self) -> LLMClient:
        """The model, loaded on first use (a table or a settings check loads none)."""
        if self._backend is None:
            self._backend = C.make_backend(
                self.args.model, self.prof["n_ctx"], self.args.threads, self.args.base_url
            )
        return self.wrap_backend(self._backend) if self.wrap_backend else self._backend

    def model_config(self) -> ModelConfig:
        return C.model_config(self.args.model, self.prof["n_ctx"], self.args.threads)

    # -- sampling, stacks, evaluation -----------------------------------------------------
    def agent_sampling(self, seed: int) -> SamplingParams:
        return SamplingParams(temperature=0.0, max_tokens=self.prof["max_tokens"], seed=seed)

    def operator_sampling(self, seed: int) -> SamplingParams:
        return SamplingParams(
            temperature=0.8, max_tokens=self.prof["operator_max_tokens"], seed=seed
        )

    def stack(
        self,
        name: str,
        seed: int,
        backend: LLMClient | None = None,
        max_calls: int | str | None = None,
    ) -> LLMStack:
        """A fresh budget and cache for method ``name`` on ``seed``; ``max_calls="budget"``:
        capped at the profile's budget."""
        cap = self.budget if max_calls == "budget" else max_calls
        return C.method_stack(
            backend or self.backend, self.work, name, seed, cap if cap is None else int(cap)
        )

    def evaluator(self, client: LLMClient, seed: int) -> Evaluator:
        """The library's evaluator (common.evaluator: ``evotrainer eval``'s) for every
        selection and test scoring, with the profile's ``max_tokens``."""
        return C.evaluator(self.task, client, self.prof["max_tokens"], seed)

    def validator(self, stack: LLMStack, seed: int) -> Validator:
        """s_val on the selection split (every method selects on it)."""
        return Validator(
            self.task,
            self.evaluator(stack.client, seed),
            self.selection.instances,
            self.weights,
            self.selection.info["source"],
        )

    # -- policies and data ----------------------------------------------------------------
    def seed_policies(self) -> list[PolicyGenome]:
        """The task's hand-written seeds A, B, C."""
        return list(self.task.seed_policies())

    def seeds(self) -> list[PolicyGenome]:
        """The task's seed policies A, B, C with the profile's decoding and loop-cut genes."""
        return [with_genes(p, self.decoding, self.cut) for p in self.seed_policies()]

    def labelled_pool(self) -> list[Instance]:
        """The AMI train meetings no split of this benchmark holds (with their references)."""
        train = C.resolve(self.args.train_data)
        if train is None or not train.is_file():
            raise SystemExit(f"this method needs the AMI train file ({train})")
        used = set(self.selection.info["ids"]) | set(self.gepa_train.info["ids"])
        if self.confirmation is not None:
            used |= set(self.confirmation.info["ids"])
        return [i for i in self.task.load(train) if i.id not in used]

    # -- the endpoint of the external optimisers ------------------------------------------
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
