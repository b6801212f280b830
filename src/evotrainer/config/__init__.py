"""The run's configuration: typed, validated, round-trips to YAML (``RunConfig``,
``load_config``). The sections are defined by domain: base.py (the strict base model, the
``task`` section's ``TaskConfig``), llm.py (the model, the operators' model, cache, budget),
inner.py (the inner GA), outer.py (the outer loop, harness, validation, defences, meta
objectives), services.py (surrogate, Ray, distillation, tracking) and run.py (the run config that
gathers them, loading, overrides, the reference). Every public name is importable from here,
``from evotrainer.config import RunConfig``.

Lazy (PEP 562), as the package root is: the task registry needs ``config.base`` and ``config.run``
needs the registry, so importing this package loads none of its modules; a name is imported
from its module the first time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evotrainer.lazy import lazy_namespace

if TYPE_CHECKING:  # the names, for type checkers and readers
    from evotrainer.config.base import DEFAULT_TASK, TaskConfig
    from evotrainer.config.inner import COMPONENT_NAME, InnerConfig
    from evotrainer.config.llm import BudgetConfig, CacheConfig, ModelConfig, OperatorModelConfig
    from evotrainer.config.outer import (
        CONCISENESS,
        DEFAULT_OBJECTIVES,
        DIVERSITY,
        HUMAN,
        MAX_VARIANTS,
        OBJECTIVES,
        QUALITY,
        READABILITY,
        ROBUSTNESS,
        DefencesConfig,
        HarnessConfig,
        MetaConfig,
        OuterConfig,
        ValidationConfig,
    )
    from evotrainer.config.run import (
        LOCAL_MODEL_NAMES,
        MAX_YAML_VALUES,
        PATH_KEYS,
        RunConfig,
        apply_override,
        check_yaml_size,
        config_from_dict,
        load_config,
        load_yaml,
        merge_defaults,
        reference_markdown,
        resolve_paths,
        set_value,
    )
    from evotrainer.config.services import DistillConfig, RayConfig, SurrogateConfig, TrackingConfig

# name -> the module that defines it
_LAZY = {
    "DEFAULT_TASK": "evotrainer.config.base",
    "TaskConfig": "evotrainer.config.base",
    "BudgetConfig": "evotrainer.config.llm",
    "CacheConfig": "evotrainer.config.llm",
    "ModelConfig": "evotrainer.config.llm",
    "OperatorModelConfig": "evotrainer.config.llm",
    "COMPONENT_NAME": "evotrainer.config.inner",
    "InnerConfig": "evotrainer.config.inner",
    "CONCISENESS": "evotrainer.config.outer",
    "DEFAULT_OBJECTIVES": "evotrainer.config.outer",
    "DIVERSITY": "evotrainer.config.outer",
    "HUMAN": "evotrainer.config.outer",
    "MAX_VARIANTS": "evotrainer.config.outer",
    "OBJECTIVES": "evotrainer.config.outer",
    "QUALITY": "evotrainer.config.outer",
    "READABILITY": "evotrainer.config.outer",
    "ROBUSTNESS": "evotrainer.config.outer",
    "DefencesConfig": "evotrainer.config.outer",
    "HarnessConfig": "evotrainer.config.outer",
    "MetaConfig": "evotrainer.config.outer",
    "OuterConfig": "evotrainer.config.outer",
    "ValidationConfig": "evotrainer.config.outer",
    "DistillConfig": "evotrainer.config.services",
    "RayConfig": "evotrainer.config.services",
    "SurrogateConfig": "evotrainer.config.services",
    "TrackingConfig": "evotrainer.config.services",
    "LOCAL_MODEL_NAMES": "evotrainer.config.run",
    "MAX_YAML_VALUES": "evotrainer.config.run",
    "PATH_KEYS": "evotrainer.config.run",
    "RunConfig": "evotrainer.config.run",
    "apply_override": "evotrainer.config.run",
    "check_yaml_size": "evotrainer.config.run",
    "config_from_dict": "evotrainer.config.run",
    "load_config": "evotrainer.config.run",
    "load_yaml": "evotrainer.config.run",
    "merge_defaults": "evotrainer.config.run",
    "reference_markdown": "evotrainer.config.run",
    "resolve_paths": "evotrainer.config.run",
    "set_value": "evotrainer.config.run",
}


__getattr__, __dir__ = lazy_namespace(__name__, _LAZY, globals())

__all__ = [
    "BudgetConfig",
    "COMPONENT_NAME",
    "CONCISENESS",
    "CacheConfig",
    "DEFAULT_OBJECTIVES",
    "DEFAULT_TASK",
    "DIVERSITY",
    "DefencesConfig",
    "DistillConfig",
    "HUMAN",
    "HarnessConfig",
    "InnerConfig",
    "LOCAL_MODEL_NAMES",
    "MAX_VARIANTS",
    "MAX_YAML_VALUES",
    "MetaConfig",
    "ModelConfig",
    "OBJECTIVES",
    "OperatorModelConfig",
    "OuterConfig",
    "PATH_KEYS",
    "QUALITY",
    "READABILITY",
    "ROBUSTNESS",
    "RayConfig",
    "RunConfig",
    "SurrogateConfig",
    "TaskConfig",
    "TrackingConfig",
    "ValidationConfig",
    "apply_override",
    "check_yaml_size",
    "config_from_dict",
    "load_config",
    "load_yaml",
    "merge_defaults",
    "reference_markdown",
    "resolve_paths",
    "set_value",
]
