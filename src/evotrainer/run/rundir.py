"""The run directory:

config.yaml          the fully resolved config
events.jsonl         one typed event per line
checkpoints/         ckpt-NNNNN.json (atomic, checksummed) + index.json
best/prompt.txt      the best policy's text
best/policy.json     its components, s_val and metrics, fitness and lineage (ancestors)
best/validation.json its per-meeting validation rows (outputs, metrics, rewards)
archive.json         every archived (policy, harness, s_val) pair
summary.json         the run's numbers
report/              the HTML report (evotrainer report RUN_DIR)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from evotrainer.config import RunConfig, config_from_dict
from evotrainer.errors import CheckpointError
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run.checkpoint import atomic_write
from evotrainer.run.events import JsonlLog

if TYPE_CHECKING:
    from evotrainer.coevolution import CoEvolution


@dataclass
class RunDirectory:
    path: Path
    config: RunConfig
    log: JsonlLog

    @classmethod
    def open_or_create(cls, path: Path, config: RunConfig) -> RunDirectory:
        path.mkdir(parents=True, exist_ok=True)
        cfg_file = path / "config.yaml"
        if not cfg_file.exists():
            atomic_write(cfg_file, config.to_yaml())
        return cls(path, config, JsonlLog(path / "events.jsonl"))

    @classmethod
    def open(cls, path: Path) -> RunDirectory:
        cfg_file = path / "config.yaml"
        if not cfg_file.is_file():
            raise CheckpointError(f"{path} is not a run directory (no config.yaml)")
        data = yaml.safe_load(cfg_file.read_text()) or {}
        return cls(path, config_from_dict(data, str(cfg_file)), JsonlLog(path / "events.jsonl"))


def lineage_chain(policy: PolicyGenome, known: dict[str, PolicyGenome]) -> list[dict[str, Any]]:
    """The policy and its ancestors (first parent at each step), newest first."""
    chain, seen = [], set()
    node: PolicyGenome | None = policy
    while node is not None and node.id not in seen:
        seen.add(node.id)
        chain.append(node.to_json())
        parents = node.lineage.parents
        node = known.get(parents[0]) if parents else None
    return chain


def write_results(co: CoEvolution, summary: dict[str, Any], best: PolicyGenome) -> None:
    rd = co.run_dir
    assert rd is not None
    known = dict(co.policies)
    for e in co.hopt.archive.entries:
        known.setdefault(e.policy.id, e.policy)
    v = co.validator.memo.get(best.id)
    fit = co.inner.fitness.get(best.id)
    atomic_write(rd / "best" / "prompt.txt", best.render() + "\n")
    policy_doc = {
        **best.to_json(),
        "text": best.render(),
        "s_val": v.s_val if v else None,
        "validation": dict(v.aggregates) if v else {},
        "train_fitness": fit.fitness if fit else None,
        "train_components": dict(fit.components) if fit else {},
        "ancestors": lineage_chain(best, known),
    }
    atomic_write(rd / "best" / "policy.json", json.dumps(policy_doc, indent=2))
    if v:
        atomic_write(rd / "best" / "validation.json", json.dumps(list(v.per_instance), indent=2))
    atomic_write(rd / "archive.json", json.dumps(co.hopt.archive.to_json(), indent=2))
    atomic_write(rd / "summary.json", json.dumps(summary, indent=2))
