"""The teacher: the model the LLM-driven operators ask (``operator_model``), when it is not the
agent model (and, built the same way, an environment's own model: ``side_stack``). Its backend is wrapped like the agent's (MeteredLLM on the run's one Budget, then
CachedLLM on the run's one ResponseCache: its answers are keyed by its own model id), so every
call it makes counts against the same caps and a rerun answers from the cache."""

from __future__ import annotations

import os

from evotrainer.config import RunConfig
from evotrainer.errors import ModelSpecError
from evotrainer.llm.base import LLMClient
from evotrainer.llm.budget import MeteredLLM
from evotrainer.llm.cache import CachedLLM
from evotrainer.llm.spec import LLMStack, build_backend


def build_operator_stack(
    config: RunConfig, agent: LLMStack, client: LLMClient | None = None
) -> LLMStack:
    """The stack the LLM-driven operators ask: ``agent`` itself unless ``config.operator_model``
    names another model (or ``client`` is given: a teacher for tests and the API). Built in this
    process, also with ``runner: ray``."""
    op = config.operator_model
    model = op.as_model(config.model)
    if client is None and model is None:
        return agent
    if client is None:
        assert model is not None
        key = os.environ.get(op.api_key_env) if op.api_key_env else None
        if op.api_key_env and not key:
            raise ModelSpecError(
                f"operator_model.api_key_env: ${op.api_key_env} is not set (the API key of "
                f"{model.spec})"
            )
        client = build_backend(model, seed=config.seed)
        if key is not None and hasattr(client, "api_key"):
            client.api_key = key  # an OpenAI-compatible client, made at its first request
    return side_stack(client, agent)


def side_stack(client: LLMClient, agent: LLMStack) -> LLMStack:
    """A second model's backend wrapped like the agent's: MeteredLLM on the agent's Budget,
    then CachedLLM on its response cache (keyed by the second model's own id). The operators'
    teacher and an environment's model (an LLM-played user) are built so."""
    wrapped: LLMClient = MeteredLLM(client, agent.budget)
    if agent.cache is not None:
        wrapped = CachedLLM(wrapped, agent.cache, agent.budget)
    return LLMStack(client=wrapped, backend=client, budget=agent.budget, cache=agent.cache)
