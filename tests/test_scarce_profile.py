"""The scarce benchmark profile (issue 32) with a fake model: each labelled meeting serves one
purpose, the unlabelled pool holds no reference, and each method's engine run gets its harness
(benchmarks/scarce.py; protocol in docs/benchmarks.md, "Scarce profile")."""

from __future__ import annotations

import json

import pytest
from benchmarks import common as C
from benchmarks import quality, scarce

from tests.support import real_data, tiny_profile

TINY = tiny_profile("scarce", 40)


def args(tmp_path, *extra: str) -> list[str]:
    return [
        "--model",
        C.FAKE_SPEC,
        "--results-dir",
        str(tmp_path / "res"),
        "--work-dir",
        str(tmp_path / "work"),
        *TINY,
        *extra,
    ]


def test_the_label_ledger_refuses_a_meeting_with_two_purposes():
    labels = scarce.Labels(("a", "b"), ("c",), ("d", "e"), ("t",))
    labels.check()
    with pytest.raises(ValueError, match="selection and unlabelled pool"):
        scarce.Labels(("a", "b"), ("c",), ("b", "e"), ("t",)).check()
    with pytest.raises(ValueError, match="confirmation and test"):
        scarce.Labels(("a",), ("c",), ("d",), ("c",)).check()


def test_the_scarce_profile_runs_each_method_on_its_own_data(tmp_path):
    real_data("ami-train.jsonl")
    quality.main(args(tmp_path, "--cells", "seeds,fixed:0,evotrainer:0,labels_ga:0"))
    settings = json.loads((tmp_path / "res" / "settings.json").read_text())
    labels = settings["compared"]["data"]["labels"]
    assert len(labels["selection"]) == 3 and len(labels["confirmation"]) == 2
    parts = ("selection", "confirmation", "unlabelled_pool", "test")
    scarce.Labels(*(tuple(labels[k]) for k in parts)).check()
    assert len(labels["unlabelled_pool"]) == 102 - 5
    pool = tmp_path / "work" / "scarce" / "unlabelled-pool.jsonl"
    assert scarce.holds_no_reference(pool)
    copy = tmp_path / "work" / "scarce" / "selection-labelled.jsonl"
    assert not scarce.holds_no_reference(copy)
    copied = [json.loads(line)["id"] for line in copy.read_text().splitlines()]
    assert copied == [i + scarce.LABELLED_SUFFIX for i in labels["selection"]]

    cells = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "res" / "cells").glob("*")}
    assert {c: r["status"] for c, r in cells.items()} == dict.fromkeys(
        ["seeds", "fixed-seed0", "evotrainer-seed0", "labels_ga-seed0"], "ok"
    )

    def config(cell: str) -> dict:
        return next(iter(cells[cell]["rows"].values()))["details"]["engine_config"]

    fixed, evo, labels_ga = (
        config("fixed-seed0"),
        config("evotrainer-seed0"),
        config("labels_ga-seed0"),
    )
    for cfg in (fixed, evo):
        assert cfg["harness"]["real_data"] == str(pool)
        assert cfg["harness"]["weights"] == scarce.SEED_R
        assert cfg["harness"]["reference_components"] == []
        assert cfg["defences"]["terminal_share"] == 0 and not cfg["defences"]["discriminator"]
    assert not fixed["outer"]["enabled"] and evo["outer"]["enabled"]
    assert evo["defences"]["learned_reward"] and not fixed["defences"]["learned_reward"]
    assert evo["defences"]["learned_reward_data"] == "selection"
    assert evo["outer"]["trials"] == "rank" and fixed["outer"]["trials"] == "rerank"
    assert labels_ga["harness"]["real_data"] == str(copy)
    assert labels_ga["harness"]["real_share"] == 1.0
    assert labels_ga["harness"]["weights"] == scarce.LABELS_R
    for cfg in (fixed, evo, labels_ga):
        assert cfg["validation"]["confirm"] == 2


def test_co_evolution_may_change_after_the_baselines_ran_but_a_baseline_may_not(
    tmp_path, monkeypatch
):
    """The protocol lets co-evolution's outer loop change between cells; the engine settings
    are recorded per method, and a change is refused only for a method with a finished cell."""
    real_data("ami-train.jsonl")
    quality.main(args(tmp_path, "--cells", "fixed:0"))
    original = scarce.engine_overrides

    def changed(method: str):
        def overrides(m, pool, copy):
            out = original(m, pool, copy)
            if m == method:
                out["harness"]["difficulty_bounds"] = [0.0, 0.9]
            return out

        return overrides

    monkeypatch.setattr(scarce, "engine_overrides", changed("evotrainer"))
    quality.main(args(tmp_path, "--cells", "seeds"))  # accepted: no evotrainer cell has run
    settings = json.loads((tmp_path / "res" / "settings.json").read_text())
    evo = settings["engine"]["per_method"]["evotrainer"]
    assert evo["harness"]["difficulty_bounds"] == [0.0, 0.9]
    monkeypatch.setattr(scarce, "engine_overrides", changed("fixed"))
    with pytest.raises(SystemExit, match="fixed-seed0"):
        quality.main(args(tmp_path, "--cells", "seeds"))


def test_the_rank_picture_scores_each_chosen_harness_on_the_panel(tmp_path, monkeypatch):
    from benchmarks import rank_picture

    rows = [
        {
            "policy": f"p{i}",
            "meeting": f"m{j}",
            "s_val": 0.1 * i + 0.01 * j,
            "components": {"completeness": 0.1 * i, "format": 1.0 - 0.1 * i, "learned": 0.3},
        }
        for i in range(6)
        for j in range(3)
    ]
    panel = tmp_path / "panel.json"
    panel.write_text(json.dumps({"rows": rows}))
    results = tmp_path / "quality-scarce"
    run_dir = tmp_path / "work" / "quality-quality-scarce" / "runs" / "evotrainer-seed0"
    run_dir.mkdir(parents=True)
    steps = [
        {"type": "outer_step", "outer_step": 1, "selection": "rank",
         "chosen": {"weights": {"completeness": 1.0, "learned": 0.5}}},
        {"type": "outer_step", "outer_step": 2, "selection": "rank",
         "chosen": {"weights": {"format": 1.0}}},
    ]  # fmt: skip
    (run_dir / "events.jsonl").write_text("\n".join(json.dumps(e) for e in steps) + "\n")
    monkeypatch.setattr(rank_picture.C, "WORK", tmp_path / "work")
    doc = rank_picture.picture(results, panel)
    first, second = doc["cells"]["evotrainer-seed0"]
    assert first["over_policies"] == pytest.approx(1.0) and first["learned_weight_left_out"] == 0.5
    assert second["over_policies"] == pytest.approx(-1.0)
    assert "| evotrainer-seed0 | 1 (rank) | +1.00 |" in rank_picture.table(doc)
