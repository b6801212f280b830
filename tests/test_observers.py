"""Observers cannot kill a run (principle 14), and resume() keeps the caller's runner
(issue 15, item 16)."""

from __future__ import annotations

import json

import pytest

from evotrainer.coevolution import CoEvolution
from evotrainer.evaluation.runner import SerialRunner
from tests.fake_meetings import RecordingMeetingTask, family_llm
from tests.fake_runs import Killed, fake_run, kill_at, small_config


def test_an_observer_that_raises_is_reported_and_detached(tmp_path, capsys):
    calls = []

    def broken(event):
        calls.append(event.type)
        if event.type == "generation":
            raise RuntimeError("tracker is down")

    seen = []
    cfg = small_config(tmp_path / "c.sqlite")
    co = fake_run(cfg, tmp_path / "run", [broken, seen.append])
    assert co.state.inner.generation == 6  # the run went on to the end
    assert calls.count("generation") == 1  # detached after the first failure
    detached = [e for e in seen if e.type == "observer_detached"]
    assert len(detached) == 1 and "tracker is down" in detached[0].data["error"]
    assert "tracker is down" in capsys.readouterr().err
    events = [json.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    assert any(e["type"] == "observer_detached" for e in events)
    assert events[-1]["type"] == "run_finished"


def test_resume_keeps_the_given_runner(tmp_path):
    class CountingRunner(SerialRunner):
        jobs = 0

        def map(self, fn, items):
            CountingRunner.jobs += len(items)
            return super().map(fn, items)

    cfg = small_config(tmp_path / "c.sqlite")
    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "run", [kill_at("outer_step", 1)])
    task = RecordingMeetingTask()
    co, path = CoEvolution.resume(
        tmp_path / "run", task=task, llm=family_llm(task), runner=CountingRunner()
    )
    assert co.components.evaluator.runner.__class__ is CountingRunner
    co.run(path)
    assert CountingRunner.jobs > 0
