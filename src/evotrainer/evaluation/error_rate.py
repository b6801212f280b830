"""The error-rate guard: a run whose LLM answers keep failing stops, instead of scoring every
failure as an (empty) answer and finishing "completed" with a meaningless s_val.

Every rollout reports whether its answer failed (no server, HTTP errors after retries, a hanging
server, unparseable replies, context overflow, ``task.truncation=error`` ...). When more than
``max_rate`` of the last ``window`` rollouts failed (in particular when all of the first
``window`` did), ``TooManyErrors`` is raised, and again for every later rollout, so the run ends
at once with a message naming the last error. A few failures below the threshold still score 0
and carry the error as feedback (one bad example never ends a run).
"""

from __future__ import annotations

import threading
from collections import deque

from evotrainer.errors import TooManyErrors


class ErrorRateGuard:
    def __init__(self, max_rate: float | None = 0.5, window: int = 10) -> None:
        self.max_rate = max_rate
        self.window = max(1, int(window))
        self._recent: deque[bool] = deque(maxlen=self.window)
        self._lock = threading.Lock()
        self._tripped: str | None = None
        self.failed = 0
        self.total = 0

    @classmethod
    def from_config(cls, budget: object) -> ErrorRateGuard:
        return cls(getattr(budget, "max_error_rate", 0.5), getattr(budget, "error_window", 10))

    def check(self) -> None:
        """Raise if the guard has tripped (called before each rollout)."""
        if self._tripped is not None:
            raise TooManyErrors(self._tripped)

    def record(self, error: str | None) -> None:
        """One rollout's outcome (``error`` is None when the answer came back)."""
        with self._lock:
            self.total += 1
            self.failed += error is not None
            self._recent.append(error is not None)
            n_bad = sum(self._recent)
            if (
                self._tripped is None
                and self.max_rate is not None
                and len(self._recent) == self.window
                and n_bad > self.max_rate * self.window
            ):
                self._tripped = (
                    f"{n_bad} of the last {self.window} LLM answers failed (more than "
                    f"budget.max_error_rate={self.max_rate:g}); last error: {error or '?'}. "
                    "Check the model and its server (`evotrainer doctor`); results built on "
                    "failed answers would be meaningless."
                )
        self.check()
