"""EvoTrainer: co-evolve an LLM agent's policy (prompt) and its training harness."""

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
    "load_config",
]
__version__ = "0.1.0"
