"""The one way an episode is read: ``Episodes.of(instance, output, parsed)`` gives the
Episode every reward component and the validation metric score. A parsed Episode (what
``DialogueTask.parse_episode`` made of the whole rollout) is used as it is; anything else (an
answer scored on its own, an empty answer asked "does this component apply?") is replayed as a
one-reply episode. Replies are read with ``render.clerk_reply`` everywhere, live and replayed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evotrainer.tasks.dialogue.conversation import DialogueGoal, replay
from evotrainer.tasks.dialogue.database import Database
from evotrainer.tasks.dialogue.episode import Episode
from evotrainer.tasks.dialogue.items import ReplyItem, score_reply
from evotrainer.tasks.dialogue.render import clerk_reply
from evotrainer.types import Instance


class Episodes:
    def __init__(self, db: Database, max_rows: int) -> None:
        self.db = db
        self.max_rows = max_rows

    def of(self, instance: Instance, output: str, parsed: Any) -> Episode:
        if isinstance(parsed, Episode):
            return parsed
        return self.from_replies(instance, [output])

    def from_replies(self, instance: Instance, outputs: Sequence[str]) -> Episode:
        """The episode of the model's ``outputs`` (one per clerk turn) on ``instance``."""
        replies = [clerk_reply(o) for o in outputs]
        payload = instance.payload
        if isinstance(payload, ReplyItem):
            return score_reply(payload, replies[-1] if replies else "", self.db, self.max_rows)
        if isinstance(payload, DialogueGoal):
            return replay(payload, self.db, replies, self.max_rows)
        raise TypeError(f"instance {instance.id!r}: not a dialogue instance")
