"""The dialogue benchmark profile (issue 48) end to end on the fake clerk: each method's
engine run gets its harness, no dialogue serves two purposes, the selection items' labelled
copy is what "just use your labels" trains on, and the test evaluation scores the dialogue
metric (benchmarks/dialogue.py; protocol in docs/dialogue.md, "The benchmark")."""

from __future__ import annotations

import json

import pytest
from benchmarks import dialogue, quality, scarce

from tests.support import real_dialogues

TINY = (
    "--profile", "dialogue", "--budget", "200", "--seeds", "1", "--n-test", "12",
    "--profile-set", "n_selection=4", "--profile-set", "n_confirm=2",
    "--profile-set", "population=4", "--profile-set", "elites=2",
    "--profile-set", "tasks_per_generation=2", "--profile-set", "max_turns=4",
)  # fmt: skip


def args(tmp_path, *extra: str) -> list[str]:
    return [
        "--model",
        "fake:clerk",
        "--results-dir",
        str(tmp_path / "res"),
        "--work-dir",
        str(tmp_path / "work"),
        *TINY,
        *extra,
    ]


def config(cells: dict, cell: str) -> dict:
    return next(iter(cells[cell]["rows"].values()))["details"]["engine_config"]


def test_the_dialogue_profile_runs_every_engine_method_on_its_harness(tmp_path):
    real_dialogues("val.json.gz")
    quality.main(args(tmp_path, "--cells", "seeds,fixed:0,evotrainer:0,labels_ga:0,uniform_mix:0"))
    res = tmp_path / "res"
    settings = json.loads((res / "settings.json").read_text())
    labels = settings["compared"]["data"]["labels"]
    parts = ("selection", "confirmation", "unlabelled_pool", "test")
    scarce.Labels(*(tuple(labels[k]) for k in parts)).check()  # one purpose per dialogue
    assert len(labels["selection"]) == 4 and len(labels["confirmation"]) == 2
    assert len(labels["unlabelled_pool"]) == 999 - 6
    cells = {p.stem: json.loads(p.read_text()) for p in (res / "cells").glob("*")}
    assert {c: r["status"] for c, r in cells.items()} == dict.fromkeys(
        ["seeds", "fixed-seed0", "evotrainer-seed0", "labels_ga-seed0", "uniform_mix-seed0"], "ok"
    )
    fixed, evo, labels_ga, uniform = (
        config(cells, c)
        for c in ("fixed-seed0", "evotrainer-seed0", "labels_ga-seed0", "uniform_mix-seed0")
    )
    assert (
        fixed["harness"]["task_mix"] == {"cooperative": 1.0}
        and fixed["harness"]["difficulty"] == 0.2
    )
    assert fixed["harness"]["real_share"] == 0.0 and not fixed["outer"]["enabled"]
    assert evo["outer"]["enabled"] and evo["harness"]["real_data"].endswith("val.json.gz")
    assert evo["task"]["persona_mix"] == "harness" and uniform["task"]["persona_mix"] == "uniform"
    assert uniform["outer"]["enabled"] and uniform["harness"] == evo["harness"]
    copy = tmp_path / "work" / "dialogue" / "selection-labelled.jsonl"
    assert (
        labels_ga["harness"]["real_data"] == str(copy) and labels_ga["harness"]["real_share"] == 1.0
    )
    copied = [json.loads(line)["id"] for line in copy.read_text().splitlines()]
    sel = settings["compared"]["data"]["selection"]["ids"]
    assert copied == [i + dialogue.LABELLED_SUFFIX for i in sel]
    for cfg in (fixed, evo, labels_ga, uniform):
        assert cfg["validation"]["confirm"] == 2 and cfg["budget"]["max_calls"] == 200
        assert cfg["task"]["name"] == "dialogue"
    for rec in cells.values():
        for r in rec["rows"].values():
            assert r["calls"] <= 200
    summary = json.loads((res / "summary.json").read_text())
    test = summary["methods"]["evotrainer"]["test"]["test-dev"]
    assert test["n_meetings"] == 12 and test["request_recall"]["mean"] >= 0.9  # the fake clerk
    assert any(t["target"].startswith("co-evolution beats fixed") for t in summary["targets"])
    assert any(c["b"] == "uniform_mix" for c in summary["comparisons"])
    table = quality.main(["--table", str(res)])
    assert table == 0


def test_without_the_data_the_profile_says_its_splits_are_synthetic(tmp_path):
    missing = tmp_path / "nowhere"
    quality.main(args(tmp_path, "--cells", "seeds", "--dialogue-data", str(missing)))
    data = json.loads((tmp_path / "res" / "settings.json").read_text())["compared"]["data"]
    assert data["selection"]["source"] == "synthetic (held out)"
    assert "labels" not in data


def test_an_unknown_dialogue_method_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not an engine method"):
        dialogue.engine_overrides("inner_ga", None, tmp_path / "copy.jsonl")


def test_the_profile_runs_against_an_openai_compatible_server(tmp_path):
    """The documented command with ``--model openai:<model> --base-url URL``: here a local
    server that answers as the reference clerk."""
    from evotrainer.llm.base import SamplingParams
    from evotrainer.llm.fake_server import LatencyServer
    from evotrainer.tasks.dialogue.clerk import clerk_answer
    from evotrainer.types import Message

    clerk = clerk_answer(False)

    def answer(body: dict) -> str:
        return clerk([Message(m["role"], m["content"]) for m in body["messages"]], SamplingParams())

    with LatencyServer(latency_s=0.0, answer=answer) as server:
        argv = args(tmp_path, "--cells", "seeds,fixed:0", "--base-url", server.url)
        argv[argv.index("fake:clerk")] = "openai:clerk"
        quality.main(argv)
        assert server.requests > 0
    cells = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "res" / "cells").glob("*")}
    assert {c: r["status"] for c, r in cells.items()} == {"seeds": "ok", "fixed-seed0": "ok"}
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert summary["methods"]["fixed"]["test"]["test-dev"]["request_recall"]["mean"] >= 0.9
