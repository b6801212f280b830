"""Small co-evolution runs on the fake meeting LLM (seconds, no model), for the reliability
tests: a config builder, a run helper and a simulated kill."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evotrainer.coevolution import CoEvolution
from evotrainer.config import RunConfig, config_from_dict
from evotrainer.run import events as ev
from tests.fake_meetings import RecordingMeetingTask, family_llm


def small_config(cache: Path, **sections: Any) -> RunConfig:
    data: dict[str, Any] = {
        "seed": 3,
        "cache": {"path": str(cache)},
        "report": False,
        "inner": {"population": 4, "elites": 2, "tasks_per_generation": 3, "generations": 6},
        "outer": {"every": 2, "variants": 2},
        "validation": {"data": None, "synthetic_size": 3},
        "defences": {"terminal_data": None},
    }
    for key, value in sections.items():
        if isinstance(value, dict):
            data.setdefault(key, {}).update(value)
        else:
            data[key] = value
    return config_from_dict(data)


def fake_run(cfg: RunConfig, run_dir: Path | None, observers=()) -> CoEvolution:
    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=family_llm(task), observers=list(observers))
    co.run(run_dir)
    return co


def fake_resume(run_dir: Path, observers=()) -> CoEvolution:
    task = RecordingMeetingTask()
    co, path = CoEvolution.resume(
        run_dir, task=task, llm=family_llm(task), observers=list(observers)
    )
    co.run(path)
    return co


class Killed(BaseException):
    """Stands for kill -9: a BaseException, so nothing in the engine catches it."""


def kill_at(type_: str, nth: int = 1, **match: Any):
    """An observer that 'kills' the run at the nth event of ``type_`` whose data match."""
    seen = [0]

    def observer(event: ev.Event) -> None:
        if event.type == type_ and all(event.data.get(k) == v for k, v in match.items()):
            seen[0] += 1
            if seen[0] == nth:
                raise Killed(f"killed at {type_} #{nth}")

    return observer


def comparable_summary(run_dir: Path) -> dict[str, Any]:
    """summary.json without what legitimately differs between two equal runs: timings and the
    backend-level counters (cache hits vs calls)."""
    s = json.loads((run_dir / "summary.json").read_text())
    for k in ("wall_s", "cpu_s", "runtime"):
        s.pop(k, None)
    return s
