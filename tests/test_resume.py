"""A run killed anywhere (kill -9 of a real process during an outer step, or a simulated kill
at chosen events) and resumed reaches exactly the result of an uninterrupted run with the same
seed and cache (issue 15, item 2). Also: a corrupt newest checkpoint is detected and the
previous one used; checkpoints do not grow with the run (journals, item 16)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evotrainer.errors import CheckpointError
from evotrainer.run.checkpoint import checkpoint_seq, load_latest, save_checkpoint
from tests.fake_runs import Killed, comparable_summary, fake_resume, fake_run, kill_at, small_config

REPO = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {repo!r})
    from evotrainer.coevolution import CoEvolution
    from evotrainer.config import config_from_dict
    from tests.fake_meetings import RecordingMeetingTask, family_llm

    mode, run_dir, cache = sys.argv[1], sys.argv[2], sys.argv[3]
    task = RecordingMeetingTask()
    llm = family_llm(task)
    answer = llm.fn
    in_outer_step = [0]

    def observer(event):  # the second outer step has begun: its incumbent is validated
        if event.type == "validation" and event.data["role"] == "incumbent":
            in_outer_step[0] += 1

    def killing(m, p):  # kill -9 in the middle of the second outer step's trials
        if mode == "kill" and in_outer_step[0] == 2:
            in_outer_step[0] += 1
        elif mode == "kill" and in_outer_step[0] == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return answer(m, p)

    llm.fn = killing
    if mode in ("run", "kill"):
        cfg = config_from_dict({{
            "seed": 2, "cache": {{"path": cache}}, "report": False,
            "inner": {{"population": 4, "elites": 2, "tasks_per_generation": 3,
                       "generations": 9}},
            "outer": {{"every": 3, "variants": 2}},
            "harness": {{"real_data": None}},
            "validation": {{"data": None, "synthetic_size": 3}},
        }})
        CoEvolution(cfg, task=task, llm=llm, observers=[observer]).run(run_dir)
    else:
        co, path = CoEvolution.resume(run_dir, task=task, llm=llm)
        co.run(path)
    """
)


def _generation(run_dir: Path) -> int:
    try:
        return json.loads((run_dir / "checkpoints" / "index.json").read_text())["generation"]
    except (OSError, ValueError, KeyError):
        return -1


def _job(script: Path, mode: str, run_dir: Path, cache: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run(
        [sys.executable, str(script), mode, str(run_dir), cache],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_sigkill_during_an_outer_step_then_resume_gives_the_uninterrupted_result(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT.format(repo=str(REPO)))
    clean = _job(script, "run", tmp_path / "clean", str(tmp_path / "clean.sqlite"))
    assert clean.returncode == 0, clean.stderr[-2000:]
    run_dir, cache = tmp_path / "run", str(tmp_path / "cache.sqlite")  # a cold cache: real calls
    killed = _job(script, "kill", run_dir, cache)
    assert killed.returncode == -signal.SIGKILL
    assert _generation(run_dir) == 6 and not (run_dir / "summary.json").exists()
    done = _job(script, "resume", run_dir, cache)
    assert done.returncode == 0, done.stderr[-2000:]
    assert comparable_summary(run_dir) == comparable_summary(tmp_path / "clean")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["generations"] == 9 and summary["outer_steps"] == 2
    events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines() if x]
    assert [e["generation"] for e in events if e["type"] == "run_resumed"] == [6]


@pytest.mark.parametrize("optimizer", ["gaussian", "cma"])
@pytest.mark.parametrize(
    ("event", "nth", "match"),
    [
        ("validation", 1, {"role": "incumbent"}),  # the first outer step has just begun
        ("validation", 1, {"role": "trial"}),  # its trials have run, the harness is undecided
        ("outer_step", 2, {}),  # the second step decided, not yet checkpointed
        ("checkpoint", 4, {}),  # between two checkpoints
        ("generation", 4, {}),
    ],
)
def test_a_kill_anywhere_then_resume_gives_the_uninterrupted_result(
    tmp_path, optimizer, event, nth, match
):
    cfg = small_config(
        tmp_path / "c.sqlite", outer={"optimizer": optimizer, "rollback_patience": 1}
    )
    fake_run(cfg, tmp_path / "clean")
    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "run", [kill_at(event, nth, **match)])
    fake_resume(tmp_path / "run")
    assert comparable_summary(tmp_path / "run") == comparable_summary(tmp_path / "clean")
    archive = [(tmp_path / d / "archive.json").read_text() for d in ("run", "clean")]
    assert archive[0] == archive[1]


def test_corrupt_checkpoint_falls_back(tmp_path):
    save_checkpoint(tmp_path, 1, {"generation": 1}, {"generation": 1})
    p2 = save_checkpoint(tmp_path, 2, {"generation": 2}, {"generation": 2})
    p2.write_text(p2.read_text()[:20])  # truncated
    state, path, warnings = load_latest(tmp_path)
    assert state == {"generation": 1} and path.name == "ckpt-00001.json"
    assert warnings and "ckpt-00002" in warnings[0]
    # checksum mismatch is caught too
    p1 = tmp_path / "checkpoints" / "ckpt-00001.json"
    doc = json.loads(p1.read_text())
    doc["state"]["generation"] = 99
    p1.write_text(json.dumps(doc))
    with pytest.raises(CheckpointError):
        load_latest(tmp_path)


def test_checkpoints_do_not_grow_with_the_run(tmp_path):
    """Policies, validation rows and fitness are journals appended once, not rewritten by every
    checkpoint (which made the bytes written grow with the square of the run's length)."""
    sizes = {}
    for gens in (4, 12):
        run_dir = tmp_path / f"g{gens}"
        fake_run(small_config(tmp_path / "c.sqlite", inner={"generations": gens}), run_dir)
        newest = sorted((run_dir / "checkpoints").glob("ckpt-*.json"))[-1]
        sizes[gens] = newest.stat().st_size
        journal = run_dir / "checkpoints" / "validation_memo.jsonl"
        ids = [json.loads(x)["k"] for x in journal.read_text().splitlines()]
        assert len(ids) == len(set(ids))  # each validation result written once
    assert sizes[12] < 1.3 * sizes[4], sizes
    state, _, _ = load_latest(tmp_path / "g12")
    assert state["validation_memo"] and state["policies"] and state["inner"]["fitness"]


def test_a_journal_that_does_not_match_falls_back_to_an_older_checkpoint(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(Killed):
        fake_run(small_config(tmp_path / "c.sqlite"), run_dir, [kill_at("outer_step", 2)])
    journal = run_dir / "checkpoints" / "policies.jsonl"
    data = journal.read_bytes()
    journal.write_bytes(data[:-40] + b"X" * 40)  # the newest entries are damaged
    state, path, warnings = load_latest(run_dir)
    assert warnings and "does not match" in warnings[0]
    fake_resume(run_dir)
    assert json.loads((run_dir / "summary.json").read_text())["generations"] == 6


def test_the_runs_cpu_seconds_add_up_across_a_resume(tmp_path):
    """summary.json's ``cpu_s`` is the run's process CPU, the sessions before a resume
    included (each checkpoint records it); resumed from a checkpoint written before the
    field, the run's CPU is unknown: null, not this process's alone."""
    cfg = small_config(tmp_path / "c.sqlite")
    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "run", [kill_at("checkpoint", 4)])
    state, path, _ = load_latest(tmp_path / "run")
    assert state["cpu_s"] > 0
    fake_resume(tmp_path / "run")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["cpu_s"] >= round(state["cpu_s"], 1)

    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "old", [kill_at("checkpoint", 4)])
    state, path, _ = load_latest(tmp_path / "old")
    del state["cpu_s"]  # as a checkpoint from before the field
    index = json.loads((tmp_path / "old" / "checkpoints" / "index.json").read_text())
    save_checkpoint(tmp_path / "old", checkpoint_seq(path) + 1, state, index)
    fake_resume(tmp_path / "old")
    assert json.loads((tmp_path / "old" / "summary.json").read_text())["cpu_s"] is None
