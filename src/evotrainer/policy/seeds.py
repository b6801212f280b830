"""A run's seed policies: the task's own (A, B, C ...), or the user's ``inner.seed_prompts``
(instruction texts) and ``inner.seed_components`` (named components), with
``inner.add_components`` added to each seed that lacks them, each starting with the decoding
and post-processing genes of ``inner.seed_decoding`` and ``inner.seed_postprocess``."""

from __future__ import annotations

from dataclasses import replace

from evotrainer.config import InnerConfig
from evotrainer.policy.decoding import DecodingGenes
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.postprocess import LoopCut
from evotrainer.tasks.base import Task


def seed_genes(cfg: InnerConfig) -> tuple[DecodingGenes, LoopCut]:
    """The decoding and post-processing genes the config gives every seed."""
    d = cfg.seed_decoding
    decoding = DecodingGenes(
        repeat_penalty=d.repeat_penalty,
        frequency_penalty=d.frequency_penalty,
        presence_penalty=d.presence_penalty,
        max_tokens=d.max_tokens,
        stop=tuple(d.stop),
    )
    return decoding, LoopCut(**cfg.seed_postprocess.model_dump())


def seed_policies(cfg: InnerConfig, task: Task) -> list[PolicyGenome]:
    """The seeds, named S0, S1 ... when they are the user's (prompts first, then components)."""
    own: list[dict[str, str]] = [{"system": t} for t in cfg.seed_prompts or []]
    own += [dict(c) for c in cfg.seed_components or []]
    seeds = (
        [PolicyGenome(c, name=f"S{i}") for i, c in enumerate(own)]
        if own
        else list(task.seed_policies())
    )
    decoding, cut = seed_genes(cfg)
    return [
        replace(
            p,
            components={**cfg.add_components, **p.components},
            decoding=decoding,
            postprocess=cut,
        )
        for p in seeds
    ]
