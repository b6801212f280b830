"""What a run reads from people: at every outer step (and at the end) the ratings in
``RUN_DIR/ratings.sqlite`` on the run's selection meetings are read again and the human model
refitted (review/human_model.py). Ratings are outside input: a run resumed later sees the
ratings given meanwhile, which is the point. A ratings file that cannot be read is a warning,
never the end of a run.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from evotrainer.config import MetaConfig
from evotrainer.errors import EvoTrainerError
from evotrainer.review.agreement import agreement
from evotrainer.review.bradley_terry import policy_scores
from evotrainer.review.human_model import HumanModel, RowsOf, fit_human_model, usable
from evotrainer.run.ratings import RatingStore


class HumanFeedback:
    def __init__(self, cfg: MetaConfig, s_val_weights: dict[str, float]) -> None:
        self.cfg = cfg
        self.s_val_weights = s_val_weights
        self.store: RatingStore | None = None
        self.model: HumanModel | None = None
        self.seen = -1  # ratings read at the last refresh (-1: never read)

    def attach(self, run_dir: Path) -> None:
        self.store = RatingStore(run_dir)

    def refresh(self, rows_of: RowsOf, selection_ids: Collection[str]) -> dict[str, Any] | None:
        """Read the ratings and refit. A summary (for the ``human_feedback`` event) when the
        number of ratings changed since the last refresh, else None."""
        if self.store is None:
            return None
        try:
            ratings = [r for r in self.store.all() if r.meeting_id in selection_ids]
        except EvoTrainerError as exc:
            return {"warning": f"ratings not read: {exc}"}
        n_usable = len(usable(ratings, rows_of))
        enough = n_usable >= self.cfg.human_min_ratings
        concise = [self.cfg.concise_component] if self.cfg.concise_component else []
        self.model = (
            fit_human_model(ratings, rows_of, self.cfg.human_prior, concise) if enough else None
        )
        if len(ratings) == max(self.seen, 0):  # nothing new (no event for "no ratings yet")
            self.seen = len(ratings)
            return None
        new = len(ratings) - max(self.seen, 0)
        self.seen = len(ratings)
        return {
            "ratings": len(ratings),
            "new": new,
            "usable": n_usable,
            "used": enough,
            "min_ratings": self.cfg.human_min_ratings,
            "feature_weights": self.model.feature_weights() if self.model else {},
            "scores": [s.to_json() for s in policy_scores(ratings, self.cfg.human_prior)],
            "agreement": agreement(ratings, rows_of, self.s_val_weights, concise),
        }
