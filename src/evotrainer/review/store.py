"""Ratings in ``RUN_DIR/ratings.sqlite``: defined in evotrainer/run/ratings.py, with the rest of
the run directory (a warm start reads an earlier run's ratings without the review package);
this is their name in the review package, which writes them."""

from evotrainer.run.ratings import (  # noqa: F401
    BUSY_TIMEOUT_S,
    OUTCOMES,
    RATINGS_FILE,
    SCHEMA,
    Rating,
    RatingStore,
    ReplayedRating,
    read_ratings,
)
