"""EvoTrainer: co-evolve an LLM agent's policy (prompt) and its training harness."""

from pathlib import Path

from evotrainer.coevolution import CoEvolution, RunResult
from evotrainer.config import RunConfig, config_from_dict, load_config
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import ComponentScore, Instance, Lineage, Message, Rollout, ScoreVector

__all__ = [
    "CoEvolution",
    "ComponentScore",
    "Instance",
    "Lineage",
    "Message",
    "PolicyGenome",
    "Rollout",
    "RunConfig",
    "RunResult",
    "ScoreVector",
    "config_from_dict",
    "example_config",
    "load_config",
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
    from importlib.resources import files

    return Path(str(files("evotrainer") / "configs" / f"{name}.yaml"))
