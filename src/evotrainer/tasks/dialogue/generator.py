"""The dialogue task's generator: conversations with a simulated customer whose goal is drawn
from the database at difficulty L (goals.py: domains, constraints, requests, failing first
choices) and whose persona is drawn from the harness's task mix (personas.py: the kinds are
the personas). Each instance carries the seed its conversation's randomness comes from, so a
conversation is the same every time it is run (and the LLM cache stays valid).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import asdict

from evotrainer.tasks.dialogue.conversation import DialogueGoal
from evotrainer.tasks.dialogue.database import Database
from evotrainer.tasks.dialogue.goals import sample_goal
from evotrainer.tasks.dialogue.personas import KINDS, PATIENCE
from evotrainer.types import Instance


def conversation_instance(payload: DialogueGoal, source: str = "synthetic") -> Instance:
    fields = asdict(payload)
    if fields.get("patience") == 1.0:  # the default keeps the ids instances always had
        del fields["patience"]
    canon = json.dumps(fields, sort_keys=True)
    digest = hashlib.sha1(canon.encode()).hexdigest()[:10]
    n = len(payload.goal.domains)
    return Instance(
        f"dlg-{payload.persona}-{digest}",
        payload,
        source=source,
        difficulty=payload.difficulty,
        kind=payload.persona,
        length_bucket="short" if n == 1 else "medium" if n == 2 else "long",
    )


class DialogueGenerator:
    """``sample(n, L, rng, mix)``: ``n`` conversations; ``mix`` weights the personas (uniform
    when None; a persona missing from a given mix is not drawn)."""

    kinds: tuple[str, ...] = KINDS

    def __init__(self, db: Database, follow_mix: bool = True) -> None:
        self.db = db
        self.follow_mix = follow_mix  # False: every persona alike, whatever the mix says

    def sample_with_genes(
        self,
        n: int,
        genes: Mapping[str, float],
        rng: random.Random,
        mix: Mapping[str, float] | None = None,
    ) -> list[Instance]:
        """``sample`` under the harness's genes: L and the customers' patience."""
        patience = round(float(genes.get(PATIENCE.name, PATIENCE.initial)), 4)
        return self.sample(n, float(genes.get("difficulty", 0.0)), rng, mix, patience)

    def sample(
        self,
        n: int,
        difficulty: float,
        rng: random.Random,
        mix: Mapping[str, float] | None = None,
        patience: float = 1.0,
    ) -> list[Instance]:
        weights = [
            max(0.0, float((mix or {}).get(k, 1.0 if mix is None else 0.0))) for k in self.kinds
        ]
        if sum(weights) <= 0:
            weights = [1.0] * len(self.kinds)
        out = []
        for _ in range(n):
            persona = rng.choices(self.kinds, weights)[0]
            goal = sample_goal(self.db, difficulty, rng)
            payload = DialogueGoal(
                goal, persona, round(difficulty, 4), rng.getrandbits(32), patience=patience
            )
            out.append(conversation_instance(payload))
        return out
