"""Named, serialisable random streams. Every random choice in EvoTrainer draws from an explicit
``random.Random`` derived from the run seed and a purpose name; none touches global state."""

from __future__ import annotations

import random
from typing import Any


def stream(seed: int, *names: object) -> random.Random:
    return random.Random("/".join([str(seed), *map(str, names)]))


def rng_state(rng: random.Random) -> list[Any]:
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def rng_from_state(state: list[Any]) -> random.Random:
    rng = random.Random()
    rng.setstate((state[0], tuple(state[1]), state[2]))
    return rng
