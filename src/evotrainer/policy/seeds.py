"""A run's seed policies: the task's own (A, B, C ...), or the user's ``inner.seed_prompts``
(instruction texts) and ``inner.seed_components`` (named components), with
``inner.add_components`` added to each seed that lacks them."""

from __future__ import annotations

from evotrainer.config import InnerConfig
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import Task


def seed_policies(cfg: InnerConfig, task: Task) -> list[PolicyGenome]:
    """The seeds, named S0, S1 ... when they are the user's (prompts first, then components)."""
    own: list[dict[str, str]] = [{"system": t} for t in cfg.seed_prompts or []]
    own += [dict(c) for c in cfg.seed_components or []]
    seeds = (
        [PolicyGenome(c, name=f"S{i}") for i, c in enumerate(own)]
        if own
        else list(task.seed_policies())
    )
    if not cfg.add_components:
        return seeds
    return [
        PolicyGenome(
            {**cfg.add_components, **p.components},
            lineage=p.lineage,
            name=p.name,
            adapter=p.adapter,
        )
        for p in seeds
    ]
