"""The console a person reads (issue 51): full key names, one line per event, raced-out estimates
collapsed (and never shown as a policy's score), progress that never stands still, in a log file
as plain lines; the transient progress events stay out of events.jsonl."""

from __future__ import annotations

import io
import json

from rich.console import Console

from evotrainer.engine import telemetry
from evotrainer.run import console as console_mod
from evotrainer.run import events as ev
from evotrainer.run.console import ConsoleProgress, harness_change, harness_text
from tests.fake_runs import fake_run, small_config

HARNESS = {
    "difficulty": 0.15,
    "real_share": 0.5,
    "weights": {"completeness": 0.22, "ref_action_item_f1": 0.22, "ref_rougeL": 0.22},
}


def _console(verbose: bool = False, terminal: bool = False) -> tuple[ConsoleProgress, io.StringIO]:
    buf = io.StringIO()
    con = Console(file=buf, width=200, color_system=None, force_terminal=terminal)
    return ConsoleProgress(con, verbose=verbose), buf


def _validation(pid: str, s_val: float, role: str = "trial", **more) -> ev.Event:
    return ev.Event(ev.VALIDATION, {"role": role, "policy_id": pid, "s_val": s_val, "n": 6, **more})


def test_harness_keys_are_written_out_in_full():
    text = harness_text(HARNESS)
    assert "completeness 0.22" in text and "ref_action_item_f1 0.22" in text
    assert "real share 0.50" in text and "comple=" not in text
    changed = {**HARNESS, "weights": {**HARNESS["weights"], "completeness": 0.3}}
    assert harness_change(HARNESS, changed) == "weight completeness 0.22 -> 0.30"
    assert harness_change(HARNESS, HARNESS) == "the incumbent harness"


def test_a_policy_validated_for_several_trials_is_one_line():
    progress, buf = _console()
    progress(ev.Event(ev.VALIDATION_STARTED, {"role": "trial", "policies": 1, "instances": 6}))
    for _ in range(4):  # the same best of four trials: four events
        progress(_validation("p3dfd20c3c1", 0.26))
    progress(ev.Event(ev.OUTER_STEP, {"outer_step": 1, "s_vals": [0.26] * 4, "reason": "kept"}))
    assert buf.getvalue().count("trial p3dfd20c3c1: s_val 0.260") == 1


def test_raced_out_estimates_are_one_line_and_never_a_score():
    progress, buf = _console()
    progress(_validation("pbest", 0.339, role="generation"))
    progress(ev.Event(ev.VALIDATION_STARTED, {"role": "generation", "policies": 3, "instances": 6}))
    for pid, est in (("pa", 0.2), ("pb", 0.25), ("pc", 0.0)):
        progress(_validation(pid, est, role="generation", partial=True, n=2))
    progress(_validation("pinc", 0.0, role="incumbent", partial=True, n=2))
    progress(ev.Event(ev.CHECKPOINT, {"generation": 3, "file": "ckpt"}))
    text = buf.getvalue()
    lines = [line for line in text.splitlines() if "raced out" in line]
    assert len(lines) == 2, text  # the generation round, then the incumbent on its own
    assert (
        "3 generation policies: raced out after 2 meetings: estimates 0.200, 0.250, 0.000" in text
    )
    assert "below the best validated policy (pbest, 0.339)" in lines[0]
    assert "incumbent pinc: raced out" in lines[1] and "s_val 0.000" not in text
    verbose, vbuf = _console(verbose=True)
    for pid in ("pa", "pb"):
        verbose(_validation(pid, 0.1, role="generation", partial=True, n=2))
    assert vbuf.getvalue().count("raced out") == 2


def test_a_notice_repeated_as_a_warning_prints_once():
    progress, buf = _console()
    msg = "falling back to a held-out synthetic validation set"
    progress(ev.Event(ev.VALIDATION_SET, {"message": msg}))
    progress(ev.Event(ev.WARNING, {"message": msg}))
    assert buf.getvalue().count(msg) == 1


def test_a_log_file_gets_a_progress_line_when_nothing_was_printed_for_a_while(monkeypatch):
    progress, buf = _console()
    data = {"phase": "seeds' validation", "phase_answered": 7, "phase_calls": 24,
            "backend_calls": 25, "cached": 3, "expected_calls": 161, "eta_s": 300.0}  # fmt: skip
    progress(ev.Event(ev.PROGRESS, data))
    assert "seeds' validation" not in buf.getvalue()  # a line was printed a moment ago
    progress.last_line -= console_mod.HEARTBEAT_S + 1
    progress(ev.Event(ev.PROGRESS, data))
    line = buf.getvalue().strip().splitlines()[-1]
    assert "seeds' validation: 7/24 answered" in line
    assert "backend calls 25 + 3 cached/~161" in line and "ETA 5m 00s" in line


def test_no_silent_stretch_in_a_log_file(tmp_path, monkeypatch):
    """Every answer may tick: with the heartbeat at 0 s each tick prints, so the seeds'
    validation and every stretch of work show progress lines in a log file."""
    monkeypatch.setattr(console_mod, "HEARTBEAT_S", 0.0)
    monkeypatch.setattr(telemetry, "TICK_S", 0.0)
    progress, buf = _console()
    seen: list[ev.Event] = []
    fake_run(small_config(tmp_path / "c.sqlite", inner={"generations": 2}), tmp_path / "run",
             [progress, seen.append])  # fmt: skip
    text = buf.getvalue()
    assert "validating the first population's best" in text
    assert "  ... seeds' validation:" in text and "  ... generation 1/2:" in text
    phases = {e.data["phase"] for e in seen if e.type == ev.PHASE}
    assert {"first population", "seeds' validation", "generation 1/2", "confirmation"} <= phases
    recorded = {
        json.loads(x)["type"] for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()
    }
    assert not recorded & ev.TRANSIENT  # the clock's, not the run's record
    ticks = [e.data for e in seen if e.type == ev.PROGRESS]
    assert ticks and all(t["backend_calls"] >= 0 and "eta_s" in t for t in ticks)


def test_a_log_file_hears_from_a_call_that_takes_long(monkeypatch):
    """One model call longer than the heartbeat: the heartbeat thread says the run waits."""
    import time

    monkeypatch.setattr(console_mod, "HEARTBEAT_S", 0.2)
    progress, buf = _console()
    progress(ev.Event(ev.PHASE, {"phase": "seeds' validation", "calls": 24, "message": ""}))
    try:
        time.sleep(0.6)  # no answer meanwhile
    finally:
        progress.close()
    assert "seeds' validation: 0/24 answered | waiting on the model" in buf.getvalue()
    assert progress._beat is None


def test_a_terminal_gets_bars_and_the_run_ends_cleanly(tmp_path):
    progress, buf = _console(terminal=True)
    fake_run(small_config(tmp_path / "c.sqlite", inner={"generations": 2}), tmp_path / "run",
             [progress])  # fmt: skip
    text = buf.getvalue()
    assert "generations" in text and "calls" in text and progress.bars is None  # closed


def test_json_stdout_streams_transient_events():
    buf = io.StringIO()
    ev.JsonStdout(buf)(ev.Event(ev.PROGRESS, {"backend_calls": 3}))
    assert json.loads(buf.getvalue())["type"] == "progress"
