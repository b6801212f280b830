"""Issue 34's must-show, kept for every refactor since: the demo run (``configs/demo.yaml``,
the fake model ``fake:minutes``, seed 0) writes the same run directory (summary.json, best
policy, archive, front, events, checkpoints; minus times) under this tree as under the base
commit (``demo_identity.BASE``: the last commit that changed the demo's behaviour on purpose,
issue 46's drop_blanks gene; benchmarks/demo_identity.py). About 20 s: two short runs."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from benchmarks import demo_identity

from tests.support import REPO


def _has_base() -> bool:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return False
    probe = ["git", "-C", str(REPO), "cat-file", "-e", f"{demo_identity.BASE}^{{commit}}"]
    return subprocess.run(probe, capture_output=True).returncode == 0


@pytest.mark.skipif(not _has_base(), reason=f"needs git and commit {demo_identity.BASE}")
def test_demo_run_is_identical_to_the_base_commit():
    assert demo_identity.compare() == []
