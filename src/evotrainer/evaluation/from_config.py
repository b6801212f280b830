"""The evaluation a config describes, assembled in one place: the agent's sampling
(``model.temperature``, ``model.max_tokens``, the seed), the runner (``runner``), the error-rate
guard (``budget.max_error_rate``) and, for a run, the reference-based reward components
(``harness.reference_components``). A run's components (engine/components.py) and
``evotrainer eval`` both build their evaluator here, and hand an environment that asks a
model of its own that model (``bind_environment``)."""

from __future__ import annotations

from evotrainer.config import RunConfig
from evotrainer.evaluation.error_rate import ErrorRateGuard
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.runner import Runner, runner_for
from evotrainer.harness.reference import reference_components
from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.llm.spec import LLMStack, build_backend
from evotrainer.llm.teacher import side_stack
from evotrainer.tasks.base import HasEnvironmentModel, Task


def agent_sampling(cfg: RunConfig) -> SamplingParams:
    """How the agent model answers (training rollouts and validation)."""
    return SamplingParams(
        temperature=cfg.model.temperature, max_tokens=cfg.model.max_tokens, seed=cfg.seed
    )


def evaluator_from_config(
    cfg: RunConfig,
    task: Task,
    client: LLMClient,
    runner: Runner | None = None,
    *,
    references: bool = False,
) -> Evaluator:
    """The evaluator of ``task`` answered by ``client``. ``runner``: instead of the one
    ``cfg.runner`` names; ``references``: add the reference-based reward components a run's
    training signal uses (``harness.reference_components``)."""
    evaluator = Evaluator(
        task,
        client,
        agent_sampling(cfg),
        runner or runner_for(client, cfg.runner),
        guard=ErrorRateGuard.from_config(cfg.budget),
    )
    if references:
        evaluator.components.update(
            reference_components(task.validation_metric(), cfg.harness.reference_components)
        )
    return evaluator


def bind_environment(
    cfg: RunConfig, task: Task, agent: LLMStack, client: LLMClient | None = None
) -> LLMStack | None:
    """Give a task whose environment asks a model of its own (``HasEnvironmentModel``) that
    model, on the agent's budget and response cache (``llm.teacher.side_stack``): the spec the
    task names, built like the agent's model (its server, timeouts ...), or ``client`` (a fake,
    in tests). ``"agent"``: the agent's own client. Returns the stack handed over (None when
    the task needs no model)."""
    if not isinstance(task, HasEnvironmentModel):
        return None
    spec = task.environment_model()
    if spec is None:
        return None
    if client is None and spec == "agent":
        task.bind_environment(agent.client)
        return agent
    if client is None:
        model = cfg.model.model_copy(update={"spec": spec, "batch_size": 1, "draft_tokens": 0})
        client = build_backend(model, seed=cfg.seed)
    stack = side_stack(client, agent)
    task.bind_environment(stack.client)
    return stack
