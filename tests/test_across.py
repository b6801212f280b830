"""benchmarks/across.py: one method in two results directories, paired on the test meetings."""

from __future__ import annotations

import json

import pytest
from benchmarks import across

LOOP = "the team will work on it " * 12


def _results(path, policies: dict[int, str], s_val: dict[str, float], outputs: dict[str, str]):
    (path / "cells").mkdir(parents=True)
    (path / "test").mkdir()
    for seed, pid in policies.items():
        cell = {"method": "sft_refs", "seed": seed, "status": "ok"}
        cell["rows"] = {"sft_refs": {"best_policy": {"id": pid}}}
        (path / "cells" / f"sft_refs-seed{seed}.json").write_text(json.dumps(cell))
    scores = {
        "ami-dev": {
            f"m{i}": {
                pid: {
                    "s_val": s_val[pid] + i / 100,
                    "action_item_f1": 0.5 if pid.startswith("new") else 0.0,
                    "n_action_items": 2.0 if pid.startswith("new") else 0.0,
                    "output": outputs.get(pid, f"Summary: meeting {i} of {pid} went well."),
                }
                for pid in policies.values()
            }
            for i in range(6)
        }
    }
    (path / "test" / "scores.json").write_text(json.dumps(scores))
    return path


def test_the_difference_is_the_changed_directory_minus_the_baseline(tmp_path, capsys):
    a = _results(
        tmp_path / "a", {0: "old0", 1: "old1"}, {"old0": 0.20, "old1": 0.22}, {"old1": LOOP}
    )
    b = _results(tmp_path / "b", {0: "new0", 1: "new1"}, {"new0": 0.30, "new1": 0.30}, {})
    doc = across.compare(a, b, "sft_refs")
    got = doc["sets"]["all"]
    assert got["meetings"] == 6 and doc["seeds"] == [[0, 1], [0, 1]]
    assert got["diff"]["mean"] == pytest.approx(0.09)  # 0.30 - mean(0.20, 0.22)
    assert got["diff"]["lo"] == pytest.approx(0.09) and got["diff_seeds"]["lo"] > 0
    assert got["a"]["action_item_f1"] == 0.0 and got["b"]["action_item_f1"] == 0.5
    assert got["a"]["loop_share"] == 0.5 and got["b"]["loop_share"] == 0.0
    assert across.main([str(a), str(b), "--method", "sft_refs"]) == 0
    assert "| all | 6 | +0.090" in capsys.readouterr().out


def test_a_directory_without_the_method_is_named(tmp_path):
    a = _results(tmp_path / "a", {0: "old0"}, {"old0": 0.2}, {})
    (tmp_path / "b" / "cells").mkdir(parents=True)
    with pytest.raises(SystemExit, match="sft_refs: no finished cell in .*b"):
        across.compare(a, tmp_path / "b", "sft_refs")
