"""The benchmark scripts run once at a tiny budget with fake LLMs (and, where cheap, one real
model call) so they cannot rot. No assertion on speed: numbers come from the benchmarks."""

from __future__ import annotations

import importlib.util
import json

import pytest
from benchmarks import common as C
from benchmarks import efficiency, quality, run_all

from tests.support import needs_model

AGG_KEYS = ("test_rougeL", "test_action_item_f1", "test_s_val", "selection_s_val", "calls")
EXTERNAL = {"gepa": "gepa", "evoprompt_ga": "promptolution"}


def _quality_args(tmp_path, *extra: str) -> list[str]:
    return [
        "--model",
        C.FAKE_SPEC,
        "--out",
        str(tmp_path / "quality.json"),
        "--work-dir",
        str(tmp_path / "work"),
        *extra,
    ]


def test_quality_every_method_at_a_tiny_budget(tmp_path):
    doc = quality.run(quality.parse_args(_quality_args(tmp_path, "--budget", "16", "--seeds", "3")))
    on_disk = json.loads((tmp_path / "quality.json").read_text())
    assert on_disk["partial"] is False
    assert set(on_disk["methods"]) == set(quality.ROWS)
    assert on_disk["settings"]["budget"] == 16
    assert on_disk["data"]["test"]["n"] >= 1
    for row, rec in doc["methods"].items():
        agg = rec["aggregate"]
        for key in AGG_KEYS:
            assert {"mean", "std", "n"} <= set(agg[key]), (row, key)
        assert len(rec["runs"]) == 3, row
        package = EXTERNAL.get(row)
        if package and importlib.util.find_spec(package) is None:
            assert agg["n_failed"] == 3 and "error" in rec  # failure reported, not raised
            continue
        assert agg["n_ok"] == 3, (row, rec.get("error"))
        for run in rec["runs"]:
            assert run["calls"] <= 16, (row, run["calls"])  # the budget is a hard cap
            assert run["test"]["s_val"] is not None
            assert run["best_policy"]["text"]
        assert agg["test_s_val"]["mean"] is not None
    table = quality.table(doc)
    assert table.count("\n") == len(quality.ROWS) + 1


def test_quality_engine_overrides_reach_the_engine(tmp_path):
    args = _quality_args(
        tmp_path,
        "--budget",
        "30",
        "--seeds",
        "1",
        "--methods",
        "inner_ga",
        "--engine-set",
        "inner.population=5",
        "--engine-set",
        "defences.terminal_share=0.3",
    )
    doc = quality.run(quality.parse_args(args))
    assert doc["settings"]["engine_set"] == ["inner.population=5", "defences.terminal_share=0.3"]
    run = doc["methods"]["inner_ga"]["runs"][0]
    assert run["status"] == "ok" and run["calls"] <= 30
    with pytest.raises(SystemExit, match="nope"):
        quality.run(quality.parse_args([*args[:-1], "nope.key=1"]))


def test_quality_rejects_unknown_method(tmp_path):
    with pytest.raises(SystemExit, match="unknown method"):
        quality.run(quality.parse_args(_quality_args(tmp_path, "--methods", "seeds,nope")))


def test_quality_falls_back_to_synthetic_data_and_says_so(tmp_path):
    args = _quality_args(
        tmp_path,
        "--methods",
        "seeds,random_search",
        "--budget",
        "10",
        "--train-data",
        str(tmp_path / "missing-train.jsonl"),
        "--test-data",
        str(tmp_path / "missing-test.jsonl"),
    )
    doc = quality.run(quality.parse_args(args))
    for split in ("selection", "test"):
        assert doc["data"][split]["synthetic"] is True
        assert "SYNTHETIC" in doc["data"][split]["message"]
    assert doc["methods"]["random_search"]["aggregate"]["n_ok"] == 3
    assert doc["methods"]["gepa"]["runs"] == []  # not asked for


def test_efficiency_throughput_on_the_fake(tmp_path):
    out = tmp_path / "eff.json"
    efficiency.main(
        [
            "--model",
            C.FAKE_SPEC,
            "--out",
            str(out),
            "--work-dir",
            str(tmp_path / "work"),
            "--min-seconds",
            "0.01",
            "--engine-generations",
            "1",
        ]
    )
    doc = json.loads(out.read_text())
    rows = doc["throughput"]["evaluator"]
    assert {(r["population"], r["batch"]) for r in rows} == {
        (p, b) for p in (4, 10, 20) for b in (5, 20, 50)
    }
    assert all(r["evals_per_s"] > 0 for r in rows)
    assert doc["throughput"]["engine"]["llm_calls"] > 0
    assert "demo" not in doc  # no model, no demo run


def test_run_all_passes_flags_through(tmp_path):
    run_all.main(
        [
            "--model",
            C.FAKE_SPEC,
            "--work-dir",
            str(tmp_path / "w"),
            "--efficiency-out",
            str(tmp_path / "e.json"),
            "--min-seconds",
            "0.01",
            "--out",
            str(tmp_path / "q.json"),
            "--methods",
            "seeds",
            "--seeds",
            "3",
        ]
    )
    assert json.loads((tmp_path / "e.json").read_text())["benchmark"] == "efficiency"
    q = json.loads((tmp_path / "q.json").read_text())
    assert q["methods"]["seed_best"]["aggregate"]["n_ok"] == 3


def test_plausible_minutes_parse_as_minutes():
    from evotrainer.tasks.meetings.parser import parse_minutes

    text = C.plausible_minutes(
        "Alice: we need a budget for the remote control\nBob: the budget is tight\n"
        "Carol: I will check the design of the remote"
    )
    m = parse_minutes(text)
    assert 1 <= len(m.action_items) <= 3
    assert text.startswith("# Minutes")


@needs_model
def test_layout_measurement_on_the_real_model():
    """Two policies on one short meeting, transcript-first vs policy-first: 4 short real calls."""
    task = efficiency.MeetingTask(max_input_tokens=128)
    inst = task.synthetic_validation(1, 0)
    backend = C.make_backend("local:smollm2", 1024, 1)
    counter = efficiency.PrefillCounter(backend)
    pairs = ((False, "instance-major"), (True, "instance-major"))
    out = efficiency.layout(backend, counter, inst, 2, 2, 128, arrangements=pairs)
    assert len(out["rows"]) == 2
    by = {(r["layout"], r["order"]): r for r in out["rows"]}
    first = by[("transcript-first", "instance-major")]["prefilled_tokens_per_evaluation"]
    other = by[("policy-first (system message)", "instance-major")][
        "prefilled_tokens_per_evaluation"
    ]
    assert first < other  # the shared transcript prefix is reused only when it comes first


def test_quality_table_and_estimate_modes(tmp_path, capsys):
    quality.run(quality.parse_args(_quality_args(tmp_path, "--methods", "seeds", "--budget", "8")))
    capsys.readouterr()
    assert quality.main(["--table", str(tmp_path / "quality.json")]) == 0
    assert "| seed_best |" in capsys.readouterr().out
    out = tmp_path / "quality.json"
    assert quality.main(["--rescore", str(out), "--work-dir", str(tmp_path / "w")]) == 0
    doc = json.loads(out.read_text())
    assert "rescored" in doc["test_evaluation"]
    assert doc["methods"]["seed_best"]["aggregate"]["test_s_val"]["mean"] is not None
    capsys.readouterr()
    assert quality.main(["--estimate", "--model", C.FAKE_SPEC, "--profile", "full"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert est["calls"]["budgeted"] == 5 * 3 * quality.PROFILES["full"]["budget"]
