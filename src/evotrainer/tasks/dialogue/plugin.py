"""The dialogue task's plug-in: its ``task`` keys and the run-config defaults it needs (its
reward components' weights, s_val over the validation items, the MultiWOZ files: validation
dialogues for goals and selection; test-dev only to test claims, never named here)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from evotrainer.config import TaskConfig
from evotrainer.errors import DataError
from evotrainer.tasks.base import Task
from evotrainer.tasks.dialogue.database import load_database
from evotrainer.tasks.dialogue.invented_db import invented_database
from evotrainer.tasks.registry import TaskPlugin, TaskWords

log = logging.getLogger(__name__)
DATA_DIR = "../shared/data/dialogue/multiwoz"
DEFAULT_DB = f"{DATA_DIR}/db"
DEFAULT_VAL_DATA = f"{DATA_DIR}/val.json.gz"


class DialogueTaskConfig(TaskConfig):
    db: str = Field(
        DEFAULT_DB,
        description="folder of the MultiWOZ databases (<domain>_db.json); where the default "
        "folder is absent, a small invented database is used instead (and the run says so)",
    )
    max_turns: int = Field(8, ge=1, le=30, description="clerk replies per conversation")
    max_rows: int = Field(5, ge=1, le=20, description="database rows shown to the clerk")
    user_model: str | None = Field(
        None,
        description="who words the simulated customer's messages: null = the agenda-based "
        "simulator's own templates (no model call); agent = the agent's model; or a model spec "
        "(openai:<model> ...), built like the agent's, on the same budget and cache "
        "(docs/dialogue.md)",
    )
    validate_on: Literal["items", "goals"] = Field(
        "items",
        description="what a MultiWOZ validation (or eval) file gives: items = the customer "
        "turns of the human dialogues that ask for a slot (the meta-objective); goals = the "
        "dialogues' goals, each a conversation with a fixed cooperative customer (success)",
    )
    persona_mix: Literal["harness", "uniform"] = Field(
        "harness",
        description="harness = the harness's task mix draws the simulated customers' personas "
        "(the outer loop evolves it); uniform = every persona alike whatever the mix (an "
        "ablation)",
    )


DEFAULTS: dict[str, dict[str, Any]] = {
    "harness": {
        "weights": {
            "success": 0.3,
            "requests": 0.2,
            "inform": 0.15,
            "grounded": 0.15,
            "efficiency": 0.05,
            "patience": 0.05,
            "mood": 0.05,
            "brevity": 0.05,
        },
        "real_data": DEFAULT_VAL_DATA,
        "real_share": 0.3,
        "reference_components": [],
        "switchable": [],
    },
    "outer": {"s_val_weights": {"request_recall": 0.6, "inform_match": 0.2, "grounded": 0.2}},
    "validation": {"data": DEFAULT_VAL_DATA, "limit": 24},
    "defences": {"terminal_data": None},
}


def database(path: str):
    """The databases at ``path``; the invented one where the default folder is absent (a
    notice says so); DataError for a folder named that is not there."""
    if Path(path).is_dir():
        return load_database(path)
    if path != DEFAULT_DB:
        raise DataError(
            f"task.db {path}: no such folder (the MultiWOZ databases, <domain>_db.json). Only "
            f"the default, {DEFAULT_DB}, falls back to the invented database."
        )
    # a logged warning (the command line prints it): no run event reports the task's database
    log.warning(
        "the MultiWOZ databases %r not found: the dialogue task runs on a small invented "
        "database (its scores say nothing about MultiWOZ)",
        DEFAULT_DB,
    )
    return invented_database()


def build(cfg: DialogueTaskConfig) -> Task:
    # lazy: start-up time (a config check reads the plug-in; its task loads when built)
    from evotrainer.tasks.dialogue.task import DialogueTask

    return DialogueTask(
        database(cfg.db),
        max_turns=cfg.max_turns,
        max_rows=cfg.max_rows,
        user_model=cfg.user_model,
        validate_on=cfg.validate_on,
        persona_mix=cfg.persona_mix,
    )


WORDS = TaskWords("dialogues", "clerk replies", "human clerk's reply")
PLUGIN = TaskPlugin("dialogue", build, DialogueTaskConfig, DEFAULTS, WORDS)
