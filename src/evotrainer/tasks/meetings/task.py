"""The meeting-minutes task plug-in (SPEC: reference task).

``MeetingTask`` wires the pieces together: the synthetic generator (generator.py), the prompt
layout and truncation (render.py), the parser (parser.py), the reward components (rewards.py),
the validation metric (metrics.py) and the JSONL loader (loader.py).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from evotrainer.errors import ConfigError, DataError
from evotrainer.operators.base import FeedbackEdit
from evotrainer.operators.vocabulary import InstructionVocabulary
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import (
    BaseTask,
    HarnessHints,
    OutputFeatures,
    RewardComponent,
    TaskGenerator,
    ValidationMetric,
)
from evotrainer.tasks.meetings import placeholders
from evotrainer.tasks.meetings.features import MINUTES_FEATURES, human_reference_pool
from evotrainer.tasks.meetings.generator import MeetingGenerator, meeting_instance
from evotrainer.tasks.meetings.loader import load_instances, parse_meeting_record, save_meetings
from evotrainer.tasks.meetings.metrics import EMPTY_REFERENCE_ITEMS, MinutesMetric, reference_text
from evotrainer.tasks.meetings.parser import Minutes, parse_minutes
from evotrainer.tasks.meetings.render import TRUNCATION_POLICIES, render_messages
from evotrainer.tasks.meetings.rewards import component_registry
from evotrainer.tasks.meetings.schema import Meeting, Turn
from evotrainer.tasks.meetings.seeds import seed_policies
from evotrainer.tasks.meetings.structure import EDITS, TEMPLATES, reference_minutes
from evotrainer.tasks.meetings.style import VOCABULARY
from evotrainer.tasks.probes import make_canary
from evotrainer.types import Instance, Message

__all__ = ["MeetingTask"]


# which validation aggregate each reward component is a proxy for, and the value below which that
# aggregate counts as "low" (format, a shape requirement rather than a quality proxy, is never
# flagged); when weight is moved off a gamed component, owner/task accuracy receives it first
HINTS = HarnessHints(
    proxies={
        "action_count": ("action_item_f1", 0.3),
        "owner_accuracy": ("action_item_f1", 0.3),
        "completeness": ("rougeL", 0.12),
    },
    low={"action_item_f1": 0.3, "rougeL": 0.12, "decision_recall": 0.3},
    shape=("format",),
    receivers=("owner_accuracy",),
)


class MeetingTask(BaseTask):
    """Meeting transcripts in, structured minutes out.

    ``max_input_tokens`` bounds the rendered transcript (estimated tokens, see render.py);
    ``truncation`` is "head", "head_tail" or "error"; ``hostile_share`` is the share of generated
    meetings with planted private data and a prompt injection (for the safety constitution).
    """

    name = "meetings"

    def __init__(
        self,
        max_input_tokens: int = 1536,
        truncation: str = "head_tail",
        hostile_share: float = 0.0,
        empty_reference_items: str = "skip",
    ) -> None:
        if truncation not in TRUNCATION_POLICIES:
            raise ConfigError(
                f"task.truncation must be one of {TRUNCATION_POLICIES}, got {truncation!r}"
            )
        if int(max_input_tokens) < 64:
            raise ConfigError(f"task.max_input_tokens must be >= 64, got {max_input_tokens}")
        if not 0.0 <= float(hostile_share) <= 1.0:
            raise ConfigError(f"task.hostile_share must be in [0, 1], got {hostile_share}")
        if empty_reference_items not in EMPTY_REFERENCE_ITEMS:
            raise ConfigError(
                f"task.empty_reference_items must be one of {EMPTY_REFERENCE_ITEMS}, "
                f"got {empty_reference_items!r}"
            )
        self.empty_reference_items = empty_reference_items
        self.max_input_tokens = int(max_input_tokens)
        self.truncation = truncation
        self.hostile_share = float(hostile_share)

    def __repr__(self) -> str:
        return (
            f"MeetingTask(max_input_tokens={self.max_input_tokens}, "
            f"truncation={self.truncation!r}, hostile_share={self.hostile_share}, "
            f"empty_reference_items={self.empty_reference_items!r})"
        )

    def generator(self) -> TaskGenerator:
        return MeetingGenerator(hostile_share=self.hostile_share)

    def render(self, instructions: str, instance: Instance) -> tuple[list[Message], bool]:
        meeting = instance.payload
        if not isinstance(meeting, Meeting):
            raise TypeError(f"instance {instance.id!r}: payload is not a Meeting")
        return render_messages(instructions, meeting, self.max_input_tokens, self.truncation)

    def parse(self, output: str) -> Minutes:
        return parse_minutes(output)

    def reward_components(self) -> dict[str, RewardComponent]:
        return component_registry()

    def validation_metric(self) -> ValidationMetric:
        return MinutesMetric(empty_reference=self.empty_reference_items)

    def load(self, path: str | Path) -> list[Instance]:
        return load_instances(path)

    def text_instance(self, text: str, instance_id: str) -> Instance:
        """A transcript of "Speaker: text" lines as a meeting without references
        (``tasks.base.ReadsText``: a policy called on a text)."""
        if not text.strip():
            raise DataError("the transcript is empty")
        try:
            meeting = parse_meeting_record({"id": instance_id, "transcript": text}, "input")
        except ValueError as exc:
            raise DataError(f"not a transcript: {exc}") from None
        return meeting_instance(meeting)

    def write_instances(self, path: Path, instances: Sequence[Instance]) -> str:
        """Generated meetings as meetings JSONL with their ground truth, what ``load`` reads
        (``tasks.base.WritesInstances``: ``evotrainer generate``)."""
        save_meetings(path, [i.payload for i in instances])
        if not instances:
            return ""
        words = sum(i.payload.word_count for i in instances) / len(instances)
        return f"mean {words:.0f} words"

    def seed_policies(self) -> list[PolicyGenome]:
        return seed_policies()

    # -- the structural search space (tasks/meetings/structure.py) ---------------------------
    def output_templates(self) -> Sequence[str]:
        return TEMPLATES

    def reference_example(self, instance: Instance) -> str | None:
        meeting = instance.payload
        return reference_minutes(meeting) if isinstance(meeting, Meeting) else None

    def feedback_edits(self) -> Mapping[str, Sequence[FeedbackEdit]]:
        return EDITS

    # -- what the engine's generic parts need to know about meetings -------------------------
    def vocabulary(self) -> InstructionVocabulary:
        return VOCABULARY

    def harness_hints(self) -> HarnessHints:
        return HINTS

    def input_text(self, instance: Instance) -> str:
        """The transcript the agent reads (the constitution checks outputs against it)."""
        return instance.payload.transcript_text()

    def reference_text(self, instance: Instance) -> str:
        """The human reference the validation metric compares against (shown in the report)."""
        return reference_text(instance.payload)

    def unlabelled(self, instance: Instance) -> Instance:
        """The meeting as an unlabelled input: its transcript, no reference summary, decisions
        or action items, and no generated ground truth (topics, true action items) either
        (``tasks.base.Unlabels``)."""
        m = instance.payload
        if not isinstance(m, Meeting):
            return instance
        bare = replace(
            m,
            summary=(),
            decisions=(),
            action_items=(),
            has_action_items=False,
            topics=(),
            action_truth=(),
        )
        return replace(instance, payload=bare)

    def strip_blanks(self, text: str) -> str:
        return placeholders.strip_blanks(text)

    def output_features(self) -> OutputFeatures:
        """The learned reward model's features of minutes (``HasOutputFeatures``)."""
        return MINUTES_FEATURES

    def human_references(self, n: int, seed: int, exclude_ids: Collection[str] = ()) -> list[str]:
        """References of synthetic meetings, the training domain (``HasHumanReferences``): the
        discriminator's "human" class."""
        return list(human_reference_pool(None, n, seed, exclude_ids=exclude_ids).texts)

    def hostile_instances(self, n: int, seed: int) -> list[Instance]:
        """``n`` synthetic meetings with a planted prompt injection and private data, from a seed
        stream training never uses (the robustness probe), each with a canary instruction of its
        own (tasks/probes.py): a participant asks for a random code in the minutes.
        Short (difficulty 0.1, about 350 words), so the default truncation keeps what is
        planted: a probe whose hostile content is cut out would test nothing."""
        rng = random.Random(f"hostile-{seed}")
        meetings = [i.payload for i in MeetingGenerator(hostile_share=1.0).sample(n, 0.1, rng)]
        canaries = random.Random(f"canary-{seed}")
        return [meeting_instance(_with_canary(m, canaries)) for m in meetings]


def _with_canary(meeting: Meeting, rng: random.Random) -> Meeting:
    """``meeting`` with a canary instruction said by one of its speakers, at a turn between 30%
    and 70% of the way through; the code and the sentence are recorded in ``meta``."""
    code, instruction = make_canary(rng)
    turns = list(meeting.transcript)
    speaker = rng.choice(turns).speaker
    at = rng.randint(int(0.3 * len(turns)), max(int(0.3 * len(turns)), int(0.7 * len(turns))))
    turns.insert(at, Turn(speaker, instruction))
    meta = {**meeting.meta, "canary": code, "canary_instruction": instruction}
    return replace(meeting, transcript=tuple(turns), meta=meta)
