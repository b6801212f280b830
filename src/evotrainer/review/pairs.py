"""What there is to review in a run directory, and which pair to show next.

The review page only reads the run directory (the newest intact checkpoint, and at the end
archive.json, front.json and best/validation.json): it works on a run in progress, killed or
finished, and never takes the run's lock. Pairs are drawn from the **selection** meetings of the
validation data only (ratings feed selection; the confirmation meetings stay held out).

Candidates: the best seed (the human objective's reference), then the archived policies by meta
score (without the human objective), at most ``MAX_POLICIES``; only policies with minutes on
every selection meeting, and none whose minutes equal an earlier candidate's on all of them.
The next pair is the (two policies, meeting) combination with the fewest ratings so far (ties
at random), skipping meetings where both wrote the same text; the two sides are shown in random
order.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from evotrainer.config import config_from_dict, load_yaml
from evotrainer.errors import CheckpointError, EvoTrainerError
from evotrainer.evaluation.fitness import input_text
from evotrainer.evaluation.objectives import MetaObjective
from evotrainer.run.checkpoint import load_latest
from evotrainer.run.ratings import Rating
from evotrainer.run.validation_set import resolve_validation
from evotrainer.tasks.registry import build_task

MAX_POLICIES = 6
EXCERPT_CHARS = 6000


@dataclass(frozen=True)
class Pair:
    meeting_id: str
    left: str  # policy id shown as "Minutes A"
    right: str  # policy id shown as "Minutes B"


class ReviewSource:
    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir)
        if not (self.path / "config.yaml").is_file():
            raise EvoTrainerError(
                f"{self.path} is not a run directory (no config.yaml): give the --run-dir of a run"
            )
        source = str(self.path / "config.yaml")
        data = load_yaml((self.path / "config.yaml").read_text(encoding="utf-8"), source) or {}
        self.cfg = config_from_dict(data, source)
        self.rows: dict[str, dict[str, dict[str, Any]]] = {}  # policy -> meeting -> row
        self.selection: list[str] = []
        self.candidates: list[str] = []
        self._stamp: tuple[Any, ...] | None = None
        self._transcripts: dict[str, str] | None = None
        self._lock = threading.Lock()  # the server answers requests from several threads

    # -- reading the run ----------------------------------------------------------------------
    def refresh(self) -> None:
        """Re-read the run when its newest checkpoint or final files changed."""
        with self._lock:
            self._refresh()

    def _refresh(self) -> None:
        files = [self.path / "checkpoints" / "index.json", self.path / "summary.json"]
        stamp = tuple(f.stat().st_mtime_ns if f.exists() else 0 for f in files)
        if stamp == self._stamp:
            return

        try:
            state, _path, _warnings = load_latest(self.path)
        except CheckpointError as exc:
            raise EvoTrainerError(f"nothing to review yet: {exc}") from None
        self.selection = list((state.get("validation_ids") or {}).get("selection") or [])
        rows = {
            str(pid): _by_instance(v.get("per_instance") if isinstance(v, dict) else None)
            for pid, v in (state.get("validation_memo") or {}).items()
        }
        archive = [e for e in (state.get("outer") or {}).get("archive") or [] if _entry(e)]
        archive += [e for e in _json_list(self.path / "archive.json") if _entry(e)]
        best_rows = _by_instance(_json_list(self.path / "best" / "validation.json"))
        best = _json(self.path / "best" / "policy.json")
        if best_rows and isinstance(best, dict) and best.get("id"):
            rows[str(best["id"])] = best_rows
        complete = {pid for pid, r in rows.items() if all(m in r for m in self.selection)}
        meta = MetaObjective(self.cfg.meta.model_copy(update={"selection": "weighted"}))
        ranked = sorted(
            archive,
            key=lambda e: -meta.score(e.get("objectives") or {"quality": e.get("s_val") or 0.0}),
        )
        order = [state["initial"][0]] if state.get("initial") else []
        order += [str(e["policy"]["id"]) for e in ranked]
        # distinct minutes only: many archived variants of one policy write the same text, and
        # they would fill the candidate list with pairs there is nothing to choose between
        self.candidates, written = [], set()
        for pid in dict.fromkeys(p for p in order if p in complete):
            text = tuple(str(rows[pid][m].get("output") or "").strip() for m in self.selection)
            if text not in written and len(self.candidates) < MAX_POLICIES:
                written.add(text)
                self.candidates.append(pid)
        self.rows = rows
        self._stamp = stamp

    # -- what the page shows ------------------------------------------------------------------
    def next_pair(self, ratings: list[Rating], rng: random.Random) -> Pair | None:
        self.refresh()
        counts: dict[tuple[str, frozenset[str]], int] = {}
        for r in ratings:
            key = (r.meeting_id, frozenset((r.left, r.right)))
            counts[key] = counts.get(key, 0) + 1
        options = [
            (counts.get((m, frozenset((a, b))), 0), m, a, b)
            for a, b in combinations(self.candidates, 2)
            for m in self.selection
            if self.minutes(a, m).strip() != self.minutes(b, m).strip()
        ]
        if not options:
            return None
        fewest = min(o[0] for o in options)
        _, meeting, a, b = rng.choice([o for o in options if o[0] == fewest])
        return Pair(meeting, a, b) if rng.random() < 0.5 else Pair(meeting, b, a)

    def minutes(self, policy_id: str, meeting_id: str) -> str:
        row = self.rows.get(policy_id, {}).get(meeting_id) or {}
        return str(row.get("output") or "")

    def reference(self, meeting_id: str) -> str:
        for rows in self.rows.values():
            ref = (rows.get(meeting_id) or {}).get("reference")
            if ref:
                return reference_text(ref)
        return ""

    def transcript(self, meeting_id: str) -> str | None:
        """The meeting's transcript (cut to EXCERPT_CHARS), None when the validation data
        cannot be read back (e.g. a run given its validation set through the Python API)."""
        with self._lock:
            if self._transcripts is None:
                self._transcripts = self._load_transcripts()
        text = self._transcripts.get(meeting_id)
        if text is None or len(text) <= EXCERPT_CHARS:
            return text
        return text[:EXCERPT_CHARS] + f"\n[... {len(text) - EXCERPT_CHARS} more characters]"

    def _load_transcripts(self) -> dict[str, str]:
        try:
            task = build_task(self.cfg.task)
            vset = resolve_validation(
                task, self.cfg.validation, self.cfg.seed, columns=self.cfg.data_columns
            )
        except EvoTrainerError:
            return {}
        return {i.id: input_text(task, i) for i in vset.selection}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        return None


def _json_list(path: Path) -> list[Any]:
    doc = _json(path)
    return doc if isinstance(doc, list) else []


def _by_instance(rows: Any) -> dict[str, dict[str, Any]]:
    """Validation rows by instance id; anything that is not a row with an id (a damaged or
    hand-edited file) is left out instead of breaking the page."""
    if not isinstance(rows, list):
        return {}
    return {
        str(r["instance_id"]): r
        for r in rows
        if isinstance(r, dict) and isinstance(r.get("instance_id"), str | int)
    }


def _entry(e: Any) -> bool:
    """An archive entry the ranking can use: a dict with a policy that has an id."""
    return isinstance(e, dict) and isinstance(e.get("policy"), dict) and "id" in e["policy"]


def reference_text(ref: Any) -> str:
    """A validation row's reference as text (a mapping of lists as labelled bullets)."""
    if isinstance(ref, str):
        return ref
    if isinstance(ref, Mapping):
        out = []
        for k, v in ref.items():
            out.append(f"{k}:")
            items = v if isinstance(v, list | tuple) else [v]
            out += [f"- {x}" for x in items] or ["- (none)"]
        return "\n".join(out)
    if isinstance(ref, list | tuple):
        return "\n".join(f"- {x}" for x in ref)
    return str(ref)
