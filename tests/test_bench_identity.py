"""Issue 49's must-show for the benchmark runner: under this tree as under the commit before it
(``bench_identity.BASE``, main with the old quality.py and standard.py), every stored results
directory and result file tables identically, and a tiny fake-model cell grid of every profile
writes the same JSON files (minus times; the changes made on purpose since are listed in
``bench_identity.CHANGED_SINCE_BASE``). benchmarks/bench_identity.py; here three of the nine
profiles' grids, each run twice."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from benchmarks import bench_identity

from tests.support import REPO


def _has_base() -> bool:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return False
    probe = ["git", "-C", str(REPO), "cat-file", "-e", f"{bench_identity.BASE}^{{commit}}"]
    return subprocess.run(probe, capture_output=True).returncode == 0


needs_base = pytest.mark.skipif(not _has_base(), reason=f"needs git and {bench_identity.BASE}")


@needs_base
def test_every_stored_result_tables_as_under_the_base_commit():
    assert bench_identity.compare(only="tables") == []


# three profiles that between them run every method kind (the prompt optimisers and GEPA, the
# weights methods, the dialogue task), to keep make test short; the script checks all nine
# (python benchmarks/bench_identity.py --only cells)
CELL_PROFILES = ["standard", "distill", "dialogue"]


@needs_base
def test_a_fake_cell_grid_of_three_profiles_is_as_under_the_base_commit():
    diffs = bench_identity.compare(only="cells", profiles=CELL_PROFILES)
    assert bench_identity.unexpected(diffs) == []


def test_only_the_changes_made_on_purpose_are_forgiven():
    said = [
        "cells.distill/res/cells/sft_refs-seed0.json.rows.sft_refs.calls: '9' != '12'",
        "cells.distill/res/summary.json.methods.sft_refs.runs[0].tokens: '8283' != '11107'",
    ]
    other = [
        "cells.distill/res/cells/sft_refs-seed0.json.rows.sft_refs.test_s_val: '1' != '2'",
        "cells.standard/res/summary.json.methods.sft_refs.calls.mean: '9.0' != '12.0'",
        "cells.distill/res/cells/weights_only-seed0.json.rows.weights_only.calls: '9' != '12'",
    ]
    assert bench_identity.unexpected(said + other) == other


def test_a_failed_cell_compares_by_its_exception_not_its_frames():
    """CI has no bench extra, so GEPA's cell fails under both trees with frames that name each
    tree's files; the comparison keeps the exception line (stop 53's CI failure)."""
    tb = 'Traceback (most recent call last):\n  File "{}", line {}, in run\n{}\n'
    exc = "ModuleNotFoundError: No module named 'gepa'"
    old = {"status": "failed", "traceback": tb.format("/tmp/base/quality.py", 881, exc)}
    new = {"status": "failed", "traceback": tb.format("/repo/methods/external.py", 19, exc)}
    work = bench_identity.REPO
    assert (
        bench_identity.differences(
            bench_identity.normal(old, work), bench_identity.normal(new, work)
        )
        == []
    )
    other = {**new, "traceback": tb.format("/repo/x.py", 1, "ValueError: no")}
    assert bench_identity.differences(
        bench_identity.normal(old, work), bench_identity.normal(other, work)
    ) == ["traceback: \"ModuleNotFoundError: No module named 'gepa'\" != 'ValueError: no'"]
