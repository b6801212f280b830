"""A run directory is plain data that one process writes: loading never executes anything
(no pickle), writes never follow symlinks, a new run never mixes with an old one, two processes
never write one directory, and a finished run is not resumed (issue 15, items 1, 4, 9, 10, 14)."""

from __future__ import annotations

import base64
import json
import math
import pickle

import pytest
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.report.build import build_report
from evotrainer.run.checkpoint import _digest, atomic_write
from tests.fake_runs import Killed, fake_resume, fake_run, kill_at, small_config

cli = CliRunner()


class _Payload:
    """Unpickling this creates a marker file: the proof that a checkpoint executed code."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _events(run_dir):
    return [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines() if x]


def _tamper_latest(run_dir, change) -> None:
    """Change the newest checkpoint's state and recompute its (unkeyed) checksum, as an attacker
    who crafts a run directory can."""
    ck = sorted((run_dir / "checkpoints").glob("ckpt-*.json"))[-1]
    doc = json.loads(ck.read_text())
    change(doc["state"])
    doc["sha256"] = _digest(doc["state"])
    ck.write_text(json.dumps(doc))


def test_a_crafted_pickle_in_a_checkpoint_is_never_unpickled(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite", outer={"optimizer": "cma"})
    run_dir = tmp_path / "run"
    with pytest.raises(Killed):
        fake_run(cfg, run_dir, [kill_at("outer_step", 2)])
    marker = tmp_path / "pwned"
    payload = base64.b64encode(pickle.dumps(_Payload(str(marker)))).decode()

    def plant(state):
        state["outer"]["cma"] = payload

    _tamper_latest(run_dir, plant)
    fake_resume(run_dir)
    assert not marker.exists(), "resume executed code from the run directory"
    warnings = [e["message"] for e in _events(run_dir) if e["type"] == "warning"]
    assert any("not plain data" in w and "not loaded" in w for w in warnings)
    assert json.loads((run_dir / "summary.json").read_text())["generations"] == 6


def test_a_malformed_checkpoint_state_is_a_clear_error(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite")
    run_dir = tmp_path / "run"
    with pytest.raises(Killed):
        fake_run(cfg, run_dir, [kill_at("outer_step", 1)])

    def break_it(state):
        state["outer"]["cma"] = {"mean": "not numbers"}

    _tamper_latest(run_dir, break_it)
    res = cli.invoke(app, ["resume", str(run_dir)])
    assert res.exit_code == 2 and "not a checkpoint this version can read" in res.output


def test_cma_state_is_plain_json_and_continues_exactly():
    from evotrainer.loops.cma_es import CMAES

    es = CMAES([0.5, 0.2, 0.3], 0.2, popsize=4, seed=7)
    for _ in range(3):
        xs = es.ask()
        es.tell([sum((a - 0.1) ** 2 for a in x) for x in xs])
    state = json.loads(json.dumps(es.state_dict()))  # survives JSON: plain data only
    twin = CMAES.from_state(state)
    for _ in range(3):
        a, b = es.ask(), twin.ask()
        assert a == b
        f = [sum((v - 0.1) ** 2 for v in x) for x in a]
        es.tell(f)
        twin.tell(f)
    assert es.state_dict() == twin.state_dict()
    with pytest.raises(ValueError):
        CMAES.from_state({**state, "sigma": math.inf})


def test_a_new_run_refuses_a_directory_holding_a_run(tmp_path):
    from evotrainer.errors import RunDirectoryError

    cfg = small_config(tmp_path / "c.sqlite", inner={"generations": 2})
    run_dir = tmp_path / "run"
    fake_run(cfg, run_dir)
    before = (run_dir / "summary.json").read_text()
    with pytest.raises(RunDirectoryError, match="already holds a run"):
        fake_run(cfg, run_dir)
    assert (run_dir / "summary.json").read_text() == before
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("mine")
    with pytest.raises(RunDirectoryError, match="not empty and is not a run directory"):
        fake_run(cfg, other)
    # the CLI refuses before loading any model, and --force replaces only a run
    res = cli.invoke(app, ["run", "--run-dir", str(run_dir)])
    assert res.exit_code == 2 and "already holds a run" in res.output
    assert "--force" in res.output
    res = cli.invoke(app, ["run", "--run-dir", str(other), "--force"])
    assert res.exit_code == 2 and (other / "todo.txt").read_text() == "mine"


def test_run_force_replaces_the_previous_run(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite", inner={"generations": 2})
    run_dir = tmp_path / "run"
    fake_run(cfg, run_dir)
    res = cli.invoke(
        app,
        [
            "run",
            "--run-dir",
            str(run_dir),
            "--force",
            "--model",
            "openai:nothing",
            "--base-url",
            "http://127.0.0.1:9/v1",  # nothing listens: the new run fails at its first answers
            "--set",
            "model.max_retries=0",
            "--set",
            "report=false",
            "--set",
            f"cache.path={tmp_path / 'c2.sqlite'}",
            "--val-data",
            "../nowhere/none.jsonl",
        ],
    )
    assert res.exit_code == 2
    assert "not found" in res.output  # the new run's own config was read, the old one is gone
    assert not (run_dir / "summary.json").exists()


def test_writes_never_follow_a_planted_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "out" / "index.html"
    target.parent.mkdir()
    (target.parent / "index.html.tmp").symlink_to(victim)  # the old fixed temp name
    atomic_write(target, "<html>")
    assert victim.read_text() == "precious" and target.read_text() == "<html>"
    link = tmp_path / "out" / "summary.json"
    link.symlink_to(victim)  # a symlink at the destination is replaced, not written through
    atomic_write(link, "{}")
    assert victim.read_text() == "precious" and not link.is_symlink()


def test_report_with_a_planted_symlink_leaves_the_target_alone(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite", inner={"generations": 2})
    run_dir = tmp_path / "run"
    fake_run(cfg, run_dir)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (run_dir / "report").mkdir(exist_ok=True)
    (run_dir / "report" / "index.html.tmp").symlink_to(victim)
    build_report(run_dir)
    assert victim.read_text() == "precious"


def test_two_processes_cannot_write_one_run_directory(tmp_path):
    from evotrainer.errors import RunDirectoryError
    from evotrainer.run.lock import RunLock

    cfg = small_config(tmp_path / "c.sqlite")
    run_dir = tmp_path / "run"
    with pytest.raises(Killed):
        fake_run(cfg, run_dir, [kill_at("outer_step", 1)])
    other = RunLock(run_dir)  # another process resuming the same run holds the lock
    other.acquire()
    try:
        with pytest.raises(RunDirectoryError, match="in use by another process"):
            fake_resume(run_dir)
        res = cli.invoke(app, ["resume", str(run_dir)])
        assert res.exit_code == 2 and "in use by another process" in res.output
    finally:
        other.release()
    fake_resume(run_dir)  # once it is released, the run can be resumed
    finished = [e for e in _events(run_dir) if e["type"] == "run_finished"]
    assert len(finished) == 1


def test_a_lock_of_any_name_is_seen_held_without_being_taken(tmp_path):
    """The benchmarks lock each cell with a RunLock of its own name; ``in_use`` only reads."""
    from evotrainer.run.lock import LockHeld, RunLock

    lock = RunLock(tmp_path, "cell-a.lock")
    assert not lock.in_use() and not lock.path.exists()  # no file: no lock, none made
    lock.acquire()
    try:
        other = RunLock(tmp_path, "cell-a.lock")
        assert other.in_use() and lock.in_use()
        with pytest.raises(LockHeld, match="in use by another process"):
            other.acquire()
        assert not RunLock(tmp_path, "cell-b.lock").in_use()
    finally:
        lock.release()
    assert not RunLock(tmp_path, "cell-a.lock").in_use()


def test_resume_refuses_a_finished_run(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite", inner={"generations": 2})
    run_dir = tmp_path / "run"
    fake_run(cfg, run_dir)
    before = (run_dir / "summary.json").read_text()
    res = cli.invoke(app, ["resume", str(run_dir)])
    assert res.exit_code == 2 and "finished run" in res.output
    assert (run_dir / "summary.json").read_text() == before


def test_resume_after_a_torn_event_line_keeps_events_apart(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite")
    run_dir = tmp_path / "run"
    with pytest.raises(Killed):
        fake_run(cfg, run_dir, [kill_at("outer_step", 1)])
    with (run_dir / "events.jsonl").open("a") as fh:
        fh.write('{"type": "generation", "gen')  # a kill in the middle of a line
    fake_resume(run_dir)
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    bad = [x for x in lines if x.strip()]
    parsed = []
    for x in bad:
        try:
            parsed.append(json.loads(x))
        except json.JSONDecodeError:
            assert x == '{"type": "generation", "gen'  # only the torn line itself
    assert any(e["type"] == "run_resumed" for e in parsed)


def test_run_files_are_strict_json(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite", inner={"generations": 2})
    run_dir = tmp_path / "run"
    co = fake_run(cfg, run_dir)
    best = co.state.inner.best()
    co.state.inner.fitness[best.id] = co.state.inner.fitness[best.id].__class__(
        **{**co.state.inner.fitness[best.id].__dict__, "fitness": -math.inf}
    )
    from evotrainer.engine.outcome import write_results

    write_results(co, {"final_s_val": math.nan}, best)

    def strict(text):
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))

    for name in ("best/policy.json", "summary.json", "archive.json", "best/validation.json"):
        strict((run_dir / name).read_text())
    for line in (run_dir / "events.jsonl").read_text().splitlines():
        strict(line)


def test_run_dir_that_is_a_file(tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    res = cli.invoke(app, ["run", "--run-dir", str(f)])
    assert res.exit_code == 2 and "is not a directory" in res.output
