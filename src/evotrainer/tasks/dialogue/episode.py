"""What a whole episode amounts to: the record the reward components and the validation metric
read (``Task.parse_episode``), for a conversation with a simulated customer and for one reply
to a human context (a validation item) alike. Fields that do not apply to the episode's kind
are None (a reply item has no success, no patience, no mood).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Episode:
    kind: str  # "goal" (a simulated conversation) | "reply" (one reply to a human context)
    turns: int  # clerk replies
    requests: float | None  # share of the requested slots the clerk gave
    inform: float | None  # goal: share of domains whose place fits the goal; reply: share of
    # the places and values it gives that belong to the rows in question
    grounded: float | None  # share of its phone numbers, postcodes, references and train IDs
    # that were shown to it (None when it gave none)
    invented: tuple[str, ...] = ()  # the values it gave that it was never shown
    success: float | None = None  # every domain done: place fits, requests given, booked
    booked: float | None = None  # share of the bookings the goal asks for that were made
    efficiency: float | None = None  # the fewest replies a good clerk needs / replies used
    patience_left: float | None = None  # share of the customer's patience left at the end
    mood: float | None = None  # the customer's mood at the end, 0..1
    words: float = 0.0  # mean words per clerk reply
    outcome: str = ""  # "success" | "left" | "out of turns" | "reply"
    notes: tuple[str, ...] = ()  # what went wrong, for feedback


def grounded_share(given: int, invented: int) -> float | None:
    """1 - invented/given over the checkable values given; None when none was given."""
    return None if given == 0 else 1.0 - invented / given
