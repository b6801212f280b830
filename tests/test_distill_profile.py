"""The distill benchmark profile (issue 31) with a fake model and a fake training: every method
runs, the weights-only methods train on what they should, the alternation cells distil inside
the engine, and the test evaluation serves each policy's adapter (benchmarks/distill.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from benchmarks import common as C
from benchmarks import distill, quality

from evotrainer.distill import extra
from tests.support import real_data, tiny_profile

TINY = tiny_profile("distill", 60, "n_gepa_train=2", "distill_after=1")


def fake_training(monkeypatch) -> list[list[str]]:
    """Training writes the pairs' sources to a file named by its hash; serving an adapter is
    the benchmark's fake model (the same answers: the plumbing is what is tested)."""
    trained: list[list[str]] = []

    def train_adapter(pairs, settings, out_dir, progress=None, base_path=None, start_from=None):
        sources = [p.source for p in pairs]
        data = json.dumps(sources).encode()
        sha = hashlib.sha256(data).hexdigest()
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        path = Path(out_dir) / f"{sha}.gguf"
        path.write_bytes(data)
        trained.append(sources)
        result = {"sha256": sha, "adapter_path": str(path), "losses": [1.0], "seconds": 0.1}
        return type("R", (), {"sha256": sha, "to_dict": lambda self: dict(result)})()

    import evotrainer.distill.serve as serve
    import evotrainer.distill.train as train

    monkeypatch.setattr(train, "train_adapter", train_adapter)
    monkeypatch.setattr(serve, "embedded_with_adapter", lambda *a, **k: C.fake_llm())
    monkeypatch.setattr(extra, "installed", lambda: True)
    return trained


def test_every_distill_method_runs_and_its_adapter_is_served_in_the_test(tmp_path, monkeypatch):
    real_data("ami-train.jsonl")
    trained = fake_training(monkeypatch)
    cells = "seeds,weights_only:0,sft_refs:0,alternation:0,alternation_frozen:0"
    quality.main(
        [
            "--model",
            C.FAKE_SPEC,
            "--results-dir",
            str(tmp_path / "res"),
            "--work-dir",
            str(tmp_path / "work"),
            *TINY,
            "--cells",
            cells,
        ]
    )
    got = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "res" / "cells").glob("*")}
    assert {c: r["status"] for c, r in got.items()} == dict.fromkeys(
        [
            "seeds",
            "weights_only-seed0",
            "sft_refs-seed0",
            "alternation-seed0",
            "alternation_frozen-seed0",
        ],  # fmt: skip
        "ok",
    ), {c: r.get("error") for c, r in got.items()}
    sft = [s for s in trained if s and all(x.startswith("human reference") for x in s)]
    own = [s for s in trained if s and all(x.startswith("policy") for x in s)]
    assert sft and own  # sft_refs trained on references, weights_only on the seed's answers
    assert len(sft[0]) <= distill.MAX_PAIRS
    for cell in ("alternation-seed0", "alternation_frozen-seed0"):
        details = got[cell]["rows"][cell.split("-")[0]]["details"]
        assert details["engine_config"]["distill"]["enabled"]
        assert details["summary"]["distillations"], cell
    alt = got["alternation-seed0"]["rows"]["alternation"]["details"]["engine_config"]
    frozen = got["alternation_frozen-seed0"]["rows"]["alternation_frozen"]["details"]
    assert alt["outer"]["enabled"] and not frozen["engine_config"]["outer"]["enabled"]
    scores = json.loads((tmp_path / "res" / "test" / "scores.json").read_text())
    pols = json.loads((tmp_path / "res" / "test" / "policies.json").read_text())
    with_adapter = [pid for pid, p in pols.items() if p.get("adapter")]
    for name in scores:
        for meeting in scores[name].values():
            assert set(with_adapter) <= set(meeting)  # every adapter policy was scored
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    cost = summary["training_cost"]  # issue 31: training CPU seconds beside each method
    assert set(cost) == {"weights_only", "sft_refs", "alternation", "alternation_frozen"}
    for row in ("weights_only", "sft_refs"):
        (x,) = cost[row]
        assert x["adapters_trained"] == 1 and x["cell_cpu_s"] is not None
    targets = {t["target"]: t for t in summary["targets"]}
    beats = [t for t in targets if t.startswith("alternation beats")]
    assert len(beats) == 3, targets  # issue 31's three targets
    assert targets["alternation beats sft_refs (paired mean above 0)"]["met"] is not None
    assert (
        targets[
            "alternation beats evotrainer by at least +0.03 s_val, paired 95% interval above 0"
        ]["met"]
        is None
    )  # no evotrainer cell ran: not judged


def test_training_cost_reads_both_kinds_of_cell():
    from benchmarks.cells import summary

    weights = {
        "status": "ok",
        "method": "weights_only",
        "seed": 1,
        "process_cpu_s": 900.0,
        "wall_s": 500.0,
        "rows": {
            "weights_only": {
                "best_policy": {"id": "p1", "adapter": "abc"},
                "details": {
                    "training": {
                        "sha256": "abc",
                        "process_cpu_s": 700.0,
                        "seconds": 350.0,
                        "load_seconds": 20.0,
                    }
                },
            }
        },
    }
    engine = {
        "status": "ok",
        "method": "alternation",
        "seed": 1,
        "process_cpu_s": 1500.0,
        "wall_s": 800.0,
        "rows": {
            "alternation": {
                "best_policy": {"id": "p2"},
                "details": {
                    "summary": {
                        "distillations": [
                            {
                                "adapter": "def",
                                "kept": False,
                                "why": "set aside",
                                "training": {"cpu_seconds": 300.0, "seconds": 150.0},
                            },
                            {"adapter": None, "kept": False, "why": "skipped: calls"},
                        ]
                    }
                },
            }
        },
    }
    plain = {"status": "ok", "method": "evotrainer", "rows": {"evotrainer": {"best_policy": {}}}}
    cost = summary.training_cost({"a": weights, "b": engine, "c": plain})
    assert set(cost) == {"weights_only", "alternation"}
    (w,) = cost["weights_only"]
    assert (w["train_cpu_s"], w["train_wall_s"], w["adapters_kept"]) == (700.0, 370.0, 1)
    (e,) = cost["alternation"]
    assert (e["adapters_trained"], e["adapters_kept"], e["train_cpu_s"]) == (1, 0, 300.0)
    assert e["not_trained"] == ["skipped: calls"] and not e["returned_adapter"]
    assert (e["cell_cpu_s"], e["cell_wall_s"]) == (1500.0, 800.0)  # the run not resumed
    # a resumed engine cell: its run's summary counts every session, the record the last one
    run = engine["rows"]["alternation"]["details"]
    run["summary"].update(wall_s=6500.0, cpu_s=9000.0)
    run["resumed"] = {"checkpoint": "ckpt-00011.json"}
    (e,) = summary.training_cost({"b": engine})["alternation"]
    assert (e["cell_cpu_s"], e["cell_wall_s"]) == (9000.0, 6500.0)
    del run["summary"]["cpu_s"]  # an engine from before the field: the CPU is unknown
    (e,) = summary.training_cost({"b": engine})["alternation"]
    assert (e["cell_cpu_s"], e["cell_wall_s"]) == (None, 6500.0)
