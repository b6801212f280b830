"""Ratings in ``RUN_DIR/ratings.sqlite``: one row per rating, written in one transaction.

The file is in WAL mode with ``synchronous=FULL``: a rating whose submission was answered is on
disk (a crash or kill -9 of the review server a moment later loses nothing), concurrent
reviewers are serialised by SQLite's write lock (``BEGIN IMMEDIATE`` with a busy timeout), and
the run reads the ratings at the same time without blocking anyone. Every rating carries the
one-time nonce of the pair it answers (UNIQUE): a replayed or doubled submission is refused by
the database itself, never stored twice.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotrainer.errors import EvoTrainerError, RunDirectoryError

RATINGS_FILE = "ratings.sqlite"
OUTCOMES = ("left", "right", "tie")
BUSY_TIMEOUT_S = 15.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS ratings (
  id INTEGER PRIMARY KEY,
  nonce TEXT NOT NULL UNIQUE,          -- the pair token's one-time nonce
  meeting_id TEXT NOT NULL,
  left_policy TEXT NOT NULL,           -- shown as "Minutes A"
  right_policy TEXT NOT NULL,          -- shown as "Minutes B"
  outcome TEXT NOT NULL CHECK (outcome IN ('left', 'right', 'tie')),
  comment TEXT NOT NULL DEFAULT '',
  reviewer TEXT NOT NULL DEFAULT '',
  issued_at REAL NOT NULL,
  created_at REAL NOT NULL
);
"""


class ReplayedRating(EvoTrainerError):
    """The pair was rated before: a replayed or doubled submission."""


@dataclass(frozen=True)
class Rating:
    meeting_id: str
    left: str  # policy id shown on the left (A)
    right: str  # policy id shown on the right (B)
    outcome: str  # "left" | "right" | "tie"
    comment: str = ""
    reviewer: str = ""
    nonce: str = ""
    issued_at: float = 0.0
    created_at: float = 0.0
    id: int | None = None

    @property
    def winner(self) -> str | None:
        return {"left": self.left, "right": self.right}.get(self.outcome)

    @property
    def left_score(self) -> float:
        """1 when the left policy won, 0 when it lost, 0.5 for a tie."""
        return {"left": 1.0, "right": 0.0}.get(self.outcome, 0.5)


def _all_rows(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """Every row of the ratings table, oldest first, in ``_rating``'s column order."""
    return conn.execute(
        "SELECT id, nonce, meeting_id, left_policy, right_policy, outcome, comment,"
        " reviewer, issued_at, created_at FROM ratings ORDER BY id"
    ).fetchall()


def _rating(row: tuple[Any, ...]) -> Rating:
    """One row as a Rating, each value checked for its type (a ratings file from another run
    is untrusted: a wrong type is a TypeError or ValueError the reader turns into a clear
    error)."""
    i, n, m, lp, rp, o, c, rv, ia, ca = row
    return Rating(
        meeting_id=str(m),
        left=str(lp),
        right=str(rp),
        outcome=str(o),
        comment=str(c),
        reviewer=str(rv),
        nonce=str(n),
        issued_at=float(ia),
        created_at=float(ca),
        id=int(i),
    )


def read_ratings(run_dir: Path) -> list[Rating]:
    """Every rating of another run's ratings file, read only (``--init-from``: that run
    directory is untrusted input): the file is opened read-only and never through a symbolic
    link; [] when there is none."""
    path = Path(run_dir) / RATINGS_FILE
    if path.is_symlink():
        raise RunDirectoryError(f"{path} is a symbolic link: ratings are never read through one")
    if not path.is_file():
        return []
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
        try:
            rows = _all_rows(conn)
        finally:
            conn.close()
        return [_rating(row) for row in rows if row[5] in OUTCOMES]
    except (sqlite3.DatabaseError, TypeError, ValueError) as exc:
        raise RunDirectoryError(f"{path}: not a readable ratings file ({exc})") from None


class RatingStore:
    """The ratings file of one run directory. Each call opens its own connection (safe from
    any thread or process)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / RATINGS_FILE

    def exists(self) -> bool:
        return self.path.is_file()

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise EvoTrainerError(
                f"{self.path}: not a readable ratings file ({exc}); move it aside to start a new one"
            ) from None
        return conn

    def add(self, r: Rating) -> int:
        """Store one rating in one transaction; its id. ReplayedRating when the nonce was used."""
        if r.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}")
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                cur = conn.execute(
                    "INSERT INTO ratings (nonce, meeting_id, left_policy, right_policy, outcome,"
                    " comment, reviewer, issued_at, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        r.nonce,
                        r.meeting_id,
                        r.left,
                        r.right,
                        r.outcome,
                        r.comment,
                        r.reviewer,
                        r.issued_at,
                        r.created_at or time.time(),
                    ),
                )
                conn.execute("COMMIT")
            except sqlite3.IntegrityError:
                conn.execute("ROLLBACK")
                raise ReplayedRating("this pair was already rated") from None
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return int(cur.lastrowid or 0)
        finally:
            conn.close()

    def all(self) -> list[Rating]:
        """Every rating, oldest first ([] when the file does not exist yet)."""
        if not self.exists():
            return []
        conn = self._connect()
        try:
            rows = _all_rows(conn)
        finally:
            conn.close()
        return [_rating(row) for row in rows]

    def count(self) -> int:
        if not self.exists():
            return 0
        conn = self._connect()
        try:
            return int(conn.execute("SELECT COUNT(*) FROM ratings").fetchone()[0])
        finally:
            conn.close()
