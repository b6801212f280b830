"""SIGKILL a real run process mid-way; `resume` finishes it with the same generation count.
Also: a corrupt newest checkpoint is detected and the previous one used."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evotrainer.errors import CheckpointError
from evotrainer.run.checkpoint import load_latest, save_checkpoint

REPO = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {repo!r})
    from evotrainer.coevolution import CoEvolution
    from evotrainer.config import config_from_dict
    from tests.fake_meetings import RecordingMeetingTask, family_llm

    mode, run_dir, cache = sys.argv[1], sys.argv[2], sys.argv[3]
    task = RecordingMeetingTask()
    slow = family_llm(task)
    inner_fn = slow.fn
    def delayed(m, p):
        time.sleep(0.03)
        return inner_fn(m, p)
    slow.fn = delayed
    if mode == "run":
        cfg = config_from_dict({{
            "seed": 2, "cache": {{"path": cache}}, "report": False,
            "inner": {{"population": 4, "elites": 2, "tasks_per_generation": 3,
                       "generations": 9}},
            "outer": {{"every": 4, "variants": 2}},
            "harness": {{"real_data": None}},
            "validation": {{"data": None, "synthetic_size": 3}},
        }})
        CoEvolution(cfg, task=task, llm=slow).run(run_dir)
    else:
        co, path = CoEvolution.resume(run_dir, task=task, llm=slow)
        co.run(path)
    """
)


def _generation(run_dir: Path) -> int:
    try:
        return json.loads((run_dir / "checkpoints" / "index.json").read_text())["generation"]
    except (OSError, ValueError, KeyError):
        return -1


def test_resume_after_sigkill(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT.format(repo=str(REPO)))
    run_dir, cache = tmp_path / "run", str(tmp_path / "cache.sqlite")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, str(script), "run", str(run_dir), cache], env=env)
    deadline = time.time() + 120
    while _generation(run_dir) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = _generation(run_dir)
    assert 3 <= killed_at < 9
    assert not (run_dir / "summary.json").exists()
    done = subprocess.run(
        [sys.executable, str(script), "resume", str(run_dir), cache],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["generations"] == 9
    events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines() if x]
    resumed = [e for e in events if e["type"] == "run_resumed"]
    assert resumed and resumed[0]["generation"] >= killed_at - 1


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
