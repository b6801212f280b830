"""EvoTrainer: co-evolve an LLM agent's policy (prompt) and its training harness.

The package root is lazy: ``import evotrainer`` loads nothing of the engine; a name below is
imported from its module the first time it is used (PEP 562), so ``evotrainer --help`` and a
script that needs one class start fast.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from evotrainer.lazy import lazy_namespace

if TYPE_CHECKING:  # the names, for type checkers and readers
    from evotrainer.api.policy import Policy
    from evotrainer.api.run import Optimizer, optimize
    from evotrainer.coevolution import CoEvolution
    from evotrainer.config import RunConfig, config_from_dict, load_config
    from evotrainer.engine.outcome import RunResult
    from evotrainer.policy.genome import PolicyGenome
    from evotrainer.types import ComponentScore, Instance, Lineage, Message, Rollout, ScoreVector

# name -> the module that defines it
_LAZY = {
    "optimize": "evotrainer.api.run",
    "Optimizer": "evotrainer.api.run",
    "Policy": "evotrainer.api.policy",
    "CoEvolution": "evotrainer.coevolution",
    "RunResult": "evotrainer.engine.outcome",
    "RunConfig": "evotrainer.config.run",
    "config_from_dict": "evotrainer.config.run",
    "load_config": "evotrainer.config.run",
    "PolicyGenome": "evotrainer.policy.genome",
    "ComponentScore": "evotrainer.types",
    "Instance": "evotrainer.types",
    "Lineage": "evotrainer.types",
    "Message": "evotrainer.types",
    "Rollout": "evotrainer.types",
    "ScoreVector": "evotrainer.types",
}


__getattr__, __dir__ = lazy_namespace(__name__, _LAZY, globals())

__all__ = [
    "CoEvolution",
    "ComponentScore",
    "Instance",
    "Lineage",
    "Message",
    "Optimizer",
    "Policy",
    "PolicyGenome",
    "Rollout",
    "RunConfig",
    "RunResult",
    "ScoreVector",
    "config_from_dict",
    "example_config",
    "load_config",
    "optimize",
]
__version__ = "0.1.0"
EXAMPLES = ("starter", "demo", "code", "dialogue")  # src/evotrainer/configs/<name>.yaml


def example_config(name: str = "starter") -> Path:
    """The path of an example config shipped in the package (``starter``: a first, small run on
    meeting minutes, what ``evotrainer init`` writes; ``demo``: the settings of ``make demo``
    without its data; ``code``: the code gym; ``dialogue``: the dialogue task), e.g.
    ``load_config(example_config("demo"), ["inner.generations=2"])``."""
    if name not in EXAMPLES:
        raise ValueError(f"no example config {name!r}; examples: {', '.join(EXAMPLES)}")

    return Path(str(files("evotrainer") / "configs" / f"{name}.yaml"))
