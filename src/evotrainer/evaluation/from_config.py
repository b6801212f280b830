"""The evaluation a config describes, assembled in one place: the agent's sampling
(``model.temperature``, ``model.max_tokens``, the seed), the runner (``runner``), the error-rate
guard (``budget.max_error_rate``) and, for a run, the reference-based reward components
(``harness.reference_components``). A run's components (engine/components.py) and
``evotrainer eval`` both build their evaluator here."""

from __future__ import annotations

from evotrainer.config import RunConfig
from evotrainer.evaluation.error_rate import ErrorRateGuard
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.runner import Runner, runner_for
from evotrainer.harness.reference import reference_components
from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.tasks.base import Task


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
