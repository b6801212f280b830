"""The run config's model sections (config/run.py gathers them): the agent model, the operators'
model, the response cache and the budget of calls, tokens and time."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from evotrainer.config.base import StrictModel as _Strict


class ModelConfig(_Strict):
    spec: str = Field(
        "local:smollm2",
        description=(
            "local:smollm2 | local:smollm2-q4_0 (its weights requantized: faster on x86, "
            "other answers) | local:/path/to/model.gguf | openai:<model> (with base_url)"
        ),
    )
    base_url: str | None = Field(
        None, description="endpoint of an OpenAI-compatible server; default $OPENAI_BASE_URL"
    )
    n_ctx: int = Field(8192, ge=512, description="context window of the embedded model (tokens)")
    n_threads: int | None = Field(
        None, ge=1, description="CPU threads (embedded); None = the cores not already busy"
    )
    chat_format: str | None = Field(
        None,
        description="embedded model: llama.cpp's chat format (e.g. chatml, gemma); None = the "
        "chat template in the GGUF file (a file without one is refused rather than given "
        "another model's format)",
    )
    concurrency: int = Field(
        4, ge=1, description="parallel requests (HTTP backends; with runner ray: per worker)"
    )
    batch_size: int = Field(
        4,
        ge=1,
        le=64,
        description="embedded model: up to this many prompts decoded together (batched "
        "multi-sequence decoding; instance-major, a group may span meetings, each transcript "
        "prefilled once); the answers are those of one at a time (checked at 4, 8 and 16: "
        "docs/efficiency.md); 1 = one at a time",
    )
    draft_tokens: int = Field(
        0,
        ge=0,
        le=16,
        description="embedded model, batched groups: up to this many prompt-lookup draft "
        "tokens per sequence and decoding step, taken from its own prompt and answer and kept "
        "only where the model chose them (docs/efficiency.md); 0 = no drafts",
    )
    timeout_s: float = Field(
        120.0, gt=0, description="HTTP request timeout (eval --timeout sets it)"
    )
    max_retries: int = Field(4, ge=0, description="HTTP retries on 429/5xx/timeouts")
    wait_notice_s: float = Field(
        15.0,
        gt=0,
        description="HTTP: after this many seconds without a reply from the model server, the "
        "command says it is waiting (and again every as many seconds while it waits)",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="extra JSON fields sent with every request to an HTTP backend, e.g. "
        "{repeat_penalty: 1.0} for llama_cpp.server (default 1.1) to decode like the embedded "
        "model; fields the run sets itself (model, messages, temperature, max_tokens ...) win",
    )
    temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature of the agent")
    max_tokens: int = Field(320, ge=16, description="max tokens of one agent answer")
    operator_temperature: float = Field(
        0.8, ge=0, le=2, description="temperature of LLM mutation/crossover calls"
    )
    operator_max_tokens: int = Field(200, ge=16, description="max tokens of one operator call")


class OperatorModelConfig(_Strict):
    """The teacher: the model the LLM-driven operators ask (reflection, paraphrase, merge),
    when it is not the agent model (GEPA's ``reflection_lm``). Its calls count against the
    same budget and go through the same response cache; sampling is model.operator_temperature
    and model.operator_max_tokens. ``operator_model: openai:<name>`` is short for ``spec``."""

    spec: str | None = Field(
        None,
        description="model spec of the operators' model (the forms of model.spec: "
        "openai:<name> with base_url, local:...); None = the agent model (model.spec) edits "
        "the policies as well",
    )
    base_url: str | None = Field(
        None, description="its OpenAI-compatible endpoint; default $OPENAI_BASE_URL"
    )
    api_key_env: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="environment variable holding its server's API key; None = $OPENAI_API_KEY",
    )
    concurrency: int = Field(4, ge=1, description="parallel requests (HTTP)")
    timeout_s: float = Field(120.0, gt=0, description="HTTP request timeout")
    max_retries: int = Field(4, ge=0, description="HTTP retries on 429/5xx/timeouts")
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="extra JSON fields sent with every request (HTTP)"
    )
    n_ctx: int = Field(8192, ge=512, description="context window (embedded local: model)")
    n_threads: int | None = Field(
        None, ge=1, description="CPU threads (embedded); None = the cores not busy"
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"spec": data} if isinstance(data, str) else data

    def as_model(self, agent: ModelConfig) -> ModelConfig | None:
        """The ModelConfig to build the operators' backend from; None = use the agent's."""
        if self.spec is None or not self.spec.strip():
            return None
        return agent.model_copy(
            update={
                "spec": self.spec,
                "base_url": self.base_url,
                "concurrency": self.concurrency,
                "timeout_s": self.timeout_s,
                "max_retries": self.max_retries,
                "extra_body": dict(self.extra_body),
                "n_ctx": self.n_ctx,
                "n_threads": self.n_threads,
                "batch_size": 1,
                "draft_tokens": 0,
            }
        )


class CacheConfig(_Strict):
    enabled: bool = Field(True, description="persistent request-keyed LLM response cache")
    path: str | None = Field(
        None, description="SQLite file; default $EVOTRAINER_CACHE_DIR or ~/.cache/evotrainer"
    )


class BudgetConfig(_Strict):
    max_calls: int | None = Field(None, ge=1, description="hard cap on backend LLM calls")
    max_tokens: int | None = Field(None, ge=1, description="hard cap on prompt+completion tokens")
    max_wall_s: float | None = Field(
        None,
        gt=0,
        description="time limit (seconds of wall time from the start of this process's run; a "
        "resume counts from its own start): checked before every generation and outer step, "
        "the run then stops as with max_calls (summary stopped: timeout) but still validates "
        "its best policy and confirms it, so it ends a little later; `run --timeout`",
    )
    reserve_final: bool = Field(
        True,
        description="with max_calls: hold back the calls one validation costs, so that when the "
        "cap stops the run the final best policy is still validated (and can be returned)",
    )
    max_error_rate: float | None = Field(
        0.5,
        ge=0,
        lt=1,
        description="stop the run (non-zero exit) when more than this share of the last "
        "error_window agent answers failed (dead or broken server, context overflow ...); "
        "None = never stop",
    )
    error_window: int = Field(10, ge=1, description="answers the error rate is measured over")
