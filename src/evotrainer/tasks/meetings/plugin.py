"""The meeting task's plug-in: its ``task`` keys and the run-config defaults it needs (SPEC's
reward [0.5, 0.2, 0.3] over completeness/format/action_count, the reference components on real
training meetings, non-repetition, s_val = 0.4 ROUGE-L + 0.4 action-item F1 + 0.2 readability,
the seeds' decoding and loop-cut genes (docs/readability.md), the AMI files)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from evotrainer.config import TaskConfig
from evotrainer.tasks.base import Task
from evotrainer.tasks.registry import TaskPlugin, TaskWords

# Training and selection use AMI *train* only; ami-dev and ICSI are where a claim is tested.
DEFAULT_REAL_DATA = "../shared/data/meetings/ami-train.jsonl"
DEFAULT_VAL_DATA = DEFAULT_REAL_DATA


class MeetingTaskConfig(TaskConfig):
    max_input_tokens: int = Field(
        1536, ge=64, description="transcripts longer than this (estimated tokens) are truncated"
    )
    truncation: Literal["head", "head_tail", "error"] = Field(
        "head_tail", description="how over-long transcripts are cut (or rejected)"
    )
    hostile_share: float = Field(
        0.0, ge=0, le=1, description="share of generated meetings with planted injections/PII"
    )

    empty_reference_items: Literal["abstain", "skip"] = Field(
        "skip",
        description="action-item precision/recall/F1 on a meeting whose reference lists no "
        "action item: skip = undefined there, as on a meeting without annotation (s_val is "
        "then ROUGE-L and readability there; n_action_items still counts what was written); "
        "abstain = minutes with content (10+ words) and no item score 1, any item 0. With "
        "abstain, on a small model the F1 part of s_val mostly rewards writing no items "
        "(docs/benchmarks.md, docs/readability.md)",
    )

    def truncation_note(self) -> str:
        return f"{self.truncation} at {self.max_input_tokens} tokens"


DEFAULTS: dict[str, dict[str, Any]] = {
    "harness": {
        "weights": {
            "completeness": 0.5,
            "format": 0.2,
            "action_count": 0.3,
            "ref_rougeL": 0.5,
            "ref_action_item_f1": 0.5,
            "non_repetition": 0.3,
        },
        "real_data": DEFAULT_REAL_DATA,
        "reference_components": ["rougeL", "action_item_f1", "decision_recall"],
        "switchable": ["owner_accuracy", "conciseness", "faithfulness", "ref_decision_recall"],
    },
    "outer": {"s_val_weights": {"rougeL": 0.4, "action_item_f1": 0.4, "readability": 0.2}},
    "validation": {"data": DEFAULT_VAL_DATA},
    "defences": {"terminal_data": DEFAULT_REAL_DATA},
    "meta": {"concise_component": "conciseness"},
    # measured on 16 AMI train developer meetings, seeds A-C (benchmarks/readability.py,
    # docs/readability.md): no loops left, 0.95 distinct 4-grams, 106 words per answer;
    # drop_blanks on 1,392 stored AMI-train validation answers (benchmarks/blanks.py): +0.049
    # s_val on the 97 it changes, -0.004 ROUGE-L
    "inner": {
        "seed_decoding": {"repeat_penalty": 1.1, "frequency_penalty": 0.3},
        "seed_postprocess": {"enabled": True, "seen_share": 0.8, "drop_blanks": True},
    },
}


def build(cfg: MeetingTaskConfig) -> Task:
    # lazy: start-up time (a config check reads the plug-in; its task loads when built)
    from evotrainer.tasks.meetings.task import MeetingTask

    return MeetingTask(
        max_input_tokens=cfg.max_input_tokens,
        truncation=cfg.truncation,
        hostile_share=cfg.hostile_share,
        empty_reference_items=cfg.empty_reference_items,
    )


WORDS = TaskWords("meetings", "minutes", "human reference")
PLUGIN = TaskPlugin("meetings", build, MeetingTaskConfig, DEFAULTS, WORDS)
