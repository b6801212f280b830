"""The harness's gene table: every numeric gene the outer loop may move, as data.

A gene is one declaration (``GeneSpec``: initial value, hard bounds, step, the trial that can
measure it) and one consumer (the code that reads ``harness.genes[name]``). Declarations come
from three places, in this order:

1. the engine: ``difficulty`` (the generator's L; bounds ``harness.difficulty_bounds``, a random
   step of -1, 0, 0 or +1 x ``outer.difficulty_step`` / 2) and ``real_share`` (the share of real
   training instances; bounds ``harness.real_share_bounds``, steps of ``outer.real_share_step``;
   it moves only when there are real training instances);
2. the task (``HasHarnessGenes.harness_genes()``) and the run's features (``extra``: e.g. a
   distillation's data mix);
3. the config (``harness.genes``): overrides of a declared gene's initial value, bounds, step
   or trial. Naming a gene nobody declared is an error: it would have no consumer.

The outer loop's perturbation, steering, rollback, reset and CMA-ES work on this table
(loops/outer.py); a gene whose trial the run cannot make is never moved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from evotrainer.config import HarnessConfig, OuterConfig
from evotrainer.config.outer import GeneConfig
from evotrainer.errors import ConfigError
from evotrainer.harness.genome import HarnessBounds
from evotrainer.tasks.base import Task, task_harness_genes
from evotrainer.types import GeneSpec

ENGINE_TRIALS = frozenset({"generation"})  # the trials the engine itself can make


def engine_genes(harness: HarnessConfig, outer: OuterConfig, real_pool: bool) -> list[GeneSpec]:
    """``difficulty`` and ``real_share`` as the config sets them (no real share without real
    training instances)."""
    lo, hi = harness.difficulty_bounds
    rlo, rhi = harness.real_share_bounds
    return [
        GeneSpec(
            "difficulty",
            harness.difficulty,
            lo,
            hi,
            step=outer.difficulty_step / 2,
            choices=(-1, 0, 0, 1),
            description="the task generator's difficulty L (real instances: length preference)",
        ),
        GeneSpec(
            "real_share",
            harness.real_share if real_pool else 0.0,
            rlo if real_pool else 0.0,
            rhi if real_pool else 0.0,
            step=outer.real_share_step if real_pool else 0.0,
            description="the share of real training instances in a batch",
        ),
    ]


def gene_table(
    harness: HarnessConfig,
    outer: OuterConfig,
    task: Task | object,
    real_pool: bool,
    extra: Iterable[GeneSpec] = (),
) -> dict[str, GeneSpec]:
    """The run's gene table, name -> spec, in declaration order (the order the outer loop's
    random steps draw them in)."""
    table: dict[str, GeneSpec] = {}
    for spec in (*engine_genes(harness, outer, real_pool), *task_harness_genes(task), *extra):
        if spec.name in table:
            raise ConfigError(f"harness gene {spec.name!r} is declared twice")
        table[spec.name] = spec
    for name, override in harness.genes.items():
        if name not in table:
            raise ConfigError(
                f"harness.genes.{name}: no such gene (declared: {', '.join(table)}); a gene "
                "needs a consumer, declared by the engine, the task or a feature"
            )
        table[name] = overridden(table[name], override)
    return table


def overridden(spec: GeneSpec, override: GeneConfig) -> GeneSpec:
    """``spec`` with the values a ``harness.genes`` entry sets (the keys it leaves out kept)."""
    try:
        return replace(spec, **override.model_dump(exclude_none=True))
    except ValueError as exc:
        raise ConfigError(f"harness.genes.{spec.name}: {exc}") from None


def default_bounds(real_pool: bool = False, weight_max: float = 1.0) -> HarnessBounds:
    """The hard bounds of a harness with the config's defaults (the engine's two genes): for an
    optimiser built by hand (tests, the Python API)."""
    table = gene_table(HarnessConfig(), OuterConfig(), _NoGenes(), real_pool)
    return HarnessBounds(weight_max, table)


class _NoGenes:
    """A task that declares no gene of its own."""


def initial_genes(table: Mapping[str, GeneSpec]) -> dict[str, float]:
    return {name: spec.initial for name, spec in table.items()}


def movable(table: Mapping[str, GeneSpec], trials: Iterable[str]) -> list[GeneSpec]:
    """The genes a random step moves: a step above 0 and a trial the run can make."""
    can = set(trials)
    return [spec for spec in table.values() if spec.step > 0 and spec.trial in can]
