"""examples/quickstart.py, DSPy's quick start with EvoTrainer (issue 51): in-memory examples, a
metric function, compile, a call on a new transcript, save and load. CI runs it with the fake
model ``fake:minutes`` (the script's default is the embedded model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support import REPO


def test_the_quickstart_runs_with_the_fake_model(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    argv = [sys.executable, str(REPO / "examples" / "quickstart.py"), "--model", "fake:minutes"]
    res = subprocess.run(
        [*argv, "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=300
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "loaded back: the same policy, the same answer" in res.stdout
    assert "## Action items" in res.stdout  # the fake's minutes of the new transcript
    saved = json.loads((tmp_path / "policy.json").read_text())
    assert saved["summary"]["calls"] <= 120 and saved["settings"]["model"]["spec"] == "fake:minutes"
    assert "generation 1/" in res.stderr  # the run's progress, logged at INFO
    assert (tmp_path / "run" / "summary.json").is_file()
