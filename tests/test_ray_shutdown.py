"""``runner: ray`` from the command line exits when the run is done and leaves no Ray process
behind (issue 33, item 10): the pool's workers are stopped and the local Ray instance it started
is shut down before Ray's own exit handler runs, and a pool collected after that never starts a
second Ray instance. Starts a local Ray in a child process; fake backend only."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the Ray runner needs ray (pip install 'evotrainer[ray]')")
pytestmark = pytest.mark.timeout(420)

REPO = Path(__file__).resolve().parents[1]
EXIT_LIMIT_S = 240  # a run of seconds plus Ray's start; the bug made it hang for ever


def _marked(mark: str) -> list[int]:
    """Processes whose environment carries ``mark`` (the run and everything it started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found


def _stop(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):  # already ended
            os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_a_ray_run_exits_and_leaves_no_ray_process(tmp_path):
    mark = uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update({"EVOTRAINER_RAY_TEST": mark, "PYTHONPATH": str(REPO / "src")})
    sets = {
        "runner": "ray",
        "ray.workers": 1,
        "ray.num_cpus": 0.5,
        "inner.generations": 1,
        "inner.population": 3,
        "inner.elites": 1,
        "inner.tasks_per_generation": 2,
        "outer.every": 1,
        "validation.data": "null",
        "validation.synthetic_size": 3,
        "cache.enabled": "false",
        "report": "false",
        "defences.terminal_data": "null",
    }
    cmd = [sys.executable, "-m", "evotrainer.cli", "run", "--model", "fake:echo"]
    cmd += ["--run-dir", str(tmp_path / "run")]
    for key, value in sets.items():
        cmd += ["--set", f"{key}={value}"]
    proc = subprocess.Popen(
        cmd,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=EXIT_LIMIT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        _stop(_marked(mark))
        pytest.fail(f"the run did not exit within {EXIT_LIMIT_S} s:\n{output[-3000:]}")
    assert proc.returncode == 0, output[-3000:]
    assert (tmp_path / "run" / "summary.json").is_file()
    assert output.count("Started a local Ray instance") == 1, output[-3000:]
    deadline = time.monotonic() + 30  # Ray's processes end a moment after their driver
    left = _marked(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = _marked(mark)
    _stop(left)
    assert not left, f"processes left behind by the run: {left}"
