"""The dialogue task's reward components, over the whole conversation (an Episode, not the
last reply): task success, inform match, requested slots given, grounded (no phone number,
postcode, reference or train ID that was not in the rows shown), efficiency, the customer's
patience left, its mood, brevity. On a validation-style item (one reply to a human context)
the conversation-level ones (success, efficiency, patience, mood) do not apply. Each scores in
[0, 1] with a short feedback text and never raises on a bad answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evotrainer.tasks.base import RewardComponent
from evotrainer.tasks.dialogue.episode import Episode
from evotrainer.tasks.dialogue.scoring import Episodes
from evotrainer.types import ComponentScore, Instance

BRIEF_WORDS = 40  # a reply up to this many words is brief


def _success(e: Episode) -> tuple[float | None, str]:
    if e.success is None:
        return None, "one reply: no conversation to finish"
    said = "the customer got everything" if e.success else f"{e.outcome} after {e.turns} replies"
    return e.success, "; ".join([said, *e.notes[:3]])


def _inform(e: Episode) -> tuple[float | None, str]:
    if e.inform is None:
        return None, "named no place"
    return e.inform, f"{e.inform:.0%} of the places offered fit what the customer asked"


def _requests(e: Episode) -> tuple[float | None, str]:
    if e.requests is None:
        return None, "the customer asked for nothing"
    missing = [n for n in e.notes if "never gave" in n or "did not give" in n]
    return e.requests, f"gave {e.requests:.0%} of the requested details" + (
        f" ({'; '.join(missing[:2])})" if missing else ""
    )


def _grounded(e: Episode) -> tuple[float | None, str]:
    if e.grounded is None:
        return None, "gave no phone number, postcode, reference or train ID"
    if not e.invented:
        return e.grounded, "every phone number, postcode, reference and train ID was in the rows"
    return e.grounded, "invented (not in the rows shown): " + ", ".join(e.invented[:3])


def _efficiency(e: Episode) -> tuple[float | None, str]:
    if e.efficiency is None or e.success is None:
        return None, "one reply"
    if not e.success:
        return 0.0, "the conversation did not succeed"
    return e.efficiency, f"done in {e.turns} replies"


def _patience(e: Episode) -> tuple[float | None, str]:
    if e.patience_left is None:
        return None, "one reply"
    return e.patience_left, f"{e.patience_left:.0%} of the customer's patience left"


def _mood(e: Episode) -> tuple[float | None, str]:
    if e.mood is None:
        return None, "one reply"
    return e.mood, f"the customer's mood ended at {e.mood:.2f}"


def _brevity(e: Episode) -> tuple[float | None, str]:
    value = 1.0 if e.words <= BRIEF_WORDS else BRIEF_WORDS / e.words
    return value, f"{e.words:.0f} words per reply on average"


class EpisodeComponent:
    """One reward component: ``read`` picks its value and feedback out of the episode."""

    def __init__(
        self,
        name: str,
        description: str,
        read: Callable[[Episode], tuple[float | None, str]],
        episodes: Episodes,
    ) -> None:
        self.name = name
        self.description = description
        self.read = read
        self.episodes = episodes

    def score(self, instance: Instance, output: str, parsed: Any) -> ComponentScore:
        value, feedback = self.read(self.episodes.of(instance, output, parsed))
        if value is None:
            return ComponentScore(self.name, 0.0, feedback, applicable=False)
        return ComponentScore(self.name, max(0.0, min(1.0, float(value))), feedback)


COMPONENTS: tuple[tuple[str, str, Callable[[Episode], tuple[float | None, str]]], ...] = (
    ("success", "the customer got all it wanted and said goodbye (task success)", _success),
    ("inform", "the places offered fit the customer's constraints", _inform),
    ("requests", "the requested details (phone, address, reference ...) were given", _requests),
    ("grounded", "no phone number, postcode, reference or train ID that was not shown", _grounded),
    ("efficiency", "a successful conversation in few replies", _efficiency),
    ("patience", "the customer's patience left at the end", _patience),
    ("mood", "the customer's mood at the end", _mood),
    ("brevity", f"replies of at most {BRIEF_WORDS} words", _brevity),
)


def component_registry(episodes: Episodes) -> dict[str, RewardComponent]:
    return {name: EpisodeComponent(name, desc, read, episodes) for name, desc, read in COMPONENTS}
