"""The trained-adapter cache (``distill.cache_dir``, distill/train_cache.py), with a fake
training that writes a file of its inputs: an identical training is read back, any input that
changes the weights changes the key, a damaged entry is trained again, and a run's second
distillation with the same inputs trains nothing. The real training's determinism, which the
cache relies on, is checked in tests/test_distill.py."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from evotrainer.distill import base_model, extra
from evotrainer.distill import train as train_module
from evotrainer.distill.pairs import TrainingPair
from evotrainer.distill.settings import LoraSettings
from evotrainer.distill.train import AdapterResult
from evotrainer.distill.train_cache import train_cached, training_key
from evotrainer.llm import llamacpp

SETTINGS = LoraSettings(seed=3, threads=1, epochs=2.0)


def pairs(*completions: str, source: str = "human reference") -> list[TrainingPair]:
    return [
        TrainingPair(
            messages=({"role": "user", "content": f"meeting {i}"},),
            completion=c,
            source=source,
        )
        for i, c in enumerate(completions)
    ]


class FakeTraining(list):
    """A training that writes its inputs as the adapter file and records each call."""

    def __call__(self, ps, settings, out_dir, progress=None, start_from=None):
        data = json.dumps(
            {
                "pairs": [[p.completion, p.weight] for p in ps],
                "settings": settings.to_dict(),
                "start": None if start_from is None else Path(start_from).read_text(),
            }
        ).encode()
        sha = hashlib.sha256(data).hexdigest()
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        path = Path(out_dir) / f"{sha}.gguf"
        path.write_bytes(data)
        self.append(settings.threads)
        return AdapterResult(
            adapter_path=str(path),
            sha256=sha,
            losses=(2.0, 1.5),
            tokens_trained=100,
            loss_tokens=40,
            seconds=12.5,
            load_seconds=1.0,
            steps=2,
            threads=settings.threads or 0,
            pairs_used=len(ps),
            pairs_skipped=((1, "too long"),),
            truncated=0,
            settings=settings.to_dict(),
            base_model="base.gguf",
            cpu_seconds=24.0,
        )


@pytest.fixture()
def base(tmp_path, monkeypatch) -> Path:
    """A small stand-in for the base GGUF (its bytes are part of the key)."""
    path = tmp_path / "base.gguf"
    path.write_bytes(b"base model weights")
    monkeypatch.setattr(base_model, "base_gguf", lambda p=None: path)
    return path


def test_an_identical_training_is_read_back_with_its_record(tmp_path, base):
    train = FakeTraining()
    ps = pairs("Summary: a.", "Summary: b.")
    first, note1 = train_cached(train, tmp_path / "cache", ps, SETTINGS, tmp_path / "run1")
    second, note2 = train_cached(train, tmp_path / "cache", ps, SETTINGS, tmp_path / "run2")
    assert len(train) == 1, "the second training was read back"
    assert not note1["reused"] and note2["reused"] and note1["key"] == note2["key"]
    assert second.sha256 == first.sha256
    assert Path(second.adapter_path) == tmp_path / "run2" / f"{first.sha256}.gguf"
    assert Path(second.adapter_path).read_bytes() == Path(first.adapter_path).read_bytes()
    # the original training's record: what the adapter cost, not the copy
    assert {**second.to_dict(), "adapter_path": None} == {**first.to_dict(), "adapter_path": None}
    assert second.cpu_seconds == 24.0 and second.pairs_skipped == ((1, "too long"),)


def test_every_input_that_shapes_the_weights_changes_the_key(tmp_path, base):
    ps = pairs("Summary: a.", "Summary: b.")
    key = training_key(ps, SETTINGS, base)
    assert (
        training_key(pairs("Summary: a.", "Summary: b.", source="policy p1"), SETTINGS, base) == key
    )
    start = tmp_path / "start.gguf"
    start.write_bytes(b"adapter A")
    changed = [
        training_key(pairs("Summary: a.", "Summary: c."), SETTINGS, base),
        training_key([replace(ps[0], weight=2.0), ps[1]], SETTINGS, base),
        training_key(ps, replace(SETTINGS, seed=4), base),
        training_key(ps, replace(SETTINGS, threads=2), base),
        training_key(ps, replace(SETTINGS, epochs=3.0), base),
        training_key(ps, SETTINGS, base, start_from=start),
    ]
    start.write_bytes(b"adapter B")  # other starting weights under the same name
    os.utime(start, ns=(1, 1))
    changed.append(training_key(ps, SETTINGS, base, start_from=start))
    base.write_bytes(b"other base model")
    os.utime(base, ns=(2, 2))
    changed.append(training_key(ps, SETTINGS, base))
    assert len({key, *changed}) == len(changed) + 1


def test_unset_threads_are_resolved_before_the_key(tmp_path, base, monkeypatch):
    monkeypatch.setattr(llamacpp, "auto_threads", lambda: 2)
    train = FakeTraining()
    unset = replace(SETTINGS, threads=None)
    result, note = train_cached(train, tmp_path / "cache", pairs("x."), unset, tmp_path / "run")
    assert train == [2] and result.threads == 2
    assert note["key"] == training_key(pairs("x."), replace(SETTINGS, threads=2), base)
    monkeypatch.setattr(llamacpp, "auto_threads", lambda: 1)  # a busy core: another training
    train_cached(train, tmp_path / "cache", pairs("x."), unset, tmp_path / "run")
    assert train == [2, 1]


def test_a_start_from_adapter_is_passed_on(tmp_path, base):
    train = FakeTraining()
    start = tmp_path / "start.gguf"
    start.write_text("adapter A")
    result, _ = train_cached(
        train, tmp_path / "cache", pairs("x."), SETTINGS, tmp_path / "run", start_from=start
    )
    assert json.loads(Path(result.adapter_path).read_text())["start"] == "adapter A"


def entry(cache: Path) -> tuple[Path, Path]:
    (record,) = cache.glob("*.json")
    (adapter,) = cache.glob("*.gguf")
    return record, adapter


@pytest.mark.parametrize(
    "damage",
    ["changed adapter", "missing adapter", "linked adapter", "bad record"],
)
def test_a_damaged_entry_is_trained_again_and_replaced(tmp_path, base, damage):
    train = FakeTraining()
    cache, ps = tmp_path / "cache", pairs("Summary: a.")
    first, _ = train_cached(train, cache, ps, SETTINGS, tmp_path / "run1")
    record, adapter = entry(cache)
    if damage == "changed adapter":
        adapter.write_bytes(b"not the trained weights")
    elif damage == "missing adapter":
        adapter.unlink()
    elif damage == "linked adapter":  # never read through a link
        adapter.unlink()
        adapter.symlink_to(first.adapter_path)
    else:
        record.write_text("{not json")
    again, note = train_cached(train, cache, ps, SETTINGS, tmp_path / "run2")
    assert len(train) == 2 and not note["reused"] and note["damaged"]
    assert Path(again.adapter_path).read_bytes() == Path(first.adapter_path).read_bytes()
    third, note3 = train_cached(train, cache, ps, SETTINGS, tmp_path / "run3")
    assert len(train) == 2 and note3["reused"] and third.sha256 == first.sha256


def test_a_cache_that_cannot_be_written_costs_only_the_reuse(tmp_path, base):
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the folder should be")
    train = FakeTraining()
    result, note = train_cached(train, blocked, pairs("x."), SETTINGS, tmp_path / "run")
    assert Path(result.adapter_path).is_file() and not note["reused"]
    assert str(blocked) in note["not_stored"]


def test_a_run_reads_back_a_training_another_run_did(tmp_path, base, monkeypatch):
    """Two runs of the same config, one cache: the second trains nothing, records the
    reuse, carries the same adapter (copied into its own run directory) and ends the same."""
    from tests.test_distill_run import config, run

    train = FakeTraining()
    monkeypatch.setattr(train_module, "train_adapter", train)
    monkeypatch.setattr(extra, "installed", lambda: True)
    cfg = config(tmp_path, threads=1)
    cfg = cfg.model_copy(
        update={"distill": cfg.distill.model_copy(update={"cache_dir": str(tmp_path / "tc")})}
    )
    _, first = run(tmp_path, cfg, name="run1")
    trained = len(train)
    assert trained >= 1
    cfg2 = cfg.model_copy(
        update={"cache": cfg.cache.model_copy(update={"path": str(tmp_path / "c2")})}
    )
    _, second = run(tmp_path, cfg2, name="run2")
    assert len(train) == trained, "the second run trained nothing"
    d1, d2 = first.summary["distillations"], second.summary["distillations"]
    assert [r["adapter"] for r in d2] == [r["adapter"] for r in d1]
    assert all(r["training"]["cache"]["reused"] for r in d2 if r["adapter"])
    assert not any(r["training"]["cache"]["reused"] for r in d1 if r["adapter"])
    for r in d2:
        if r["adapter"]:
            assert (tmp_path / "run2" / "adapters" / f"{r['adapter']}.gguf").is_file()
    assert second.best_s_val == first.best_s_val


def test_the_benchmarks_train_cache_reads_back_a_cells_references_round(
    tmp_path, base, monkeypatch
):
    """``quality.py --train-cache``: a weights-first cell run again (its file deleted) trains
    its references' round no more; the training cost says how many adapters it read back."""
    from benchmarks import common as C
    from benchmarks import quality
    from benchmarks.cells.table import table as cells_table

    import evotrainer.distill.serve as serve
    from tests.support import real_data
    from tests.test_distill_1000 import TINY

    real_data("ami-train.jsonl")
    train = FakeTraining()
    monkeypatch.setattr(train_module, "train_adapter", train)
    monkeypatch.setattr(serve, "embedded_with_adapter", lambda *a, **k: C.fake_llm())
    monkeypatch.setattr(extra, "installed", lambda: True)
    res = tmp_path / "res"
    where = [
        *("--model", C.FAKE_SPEC, "--results-dir", str(res), "--work-dir", str(tmp_path / "w")),
        *TINY,
        *("--skip-test", "--train-cache", "--cells", "seeds,weights_prompts_once:0"),
    ]
    quality.main(where)
    trained = len(train)
    assert trained >= 1 and any((res / "train-cache").glob("*.json"))
    (res / "cells" / "weights_prompts_once-seed0.json").unlink()
    quality.main(where)
    cell = json.loads((res / "cells" / "weights_prompts_once-seed0.json").read_text())
    details = cell["rows"]["weights_prompts_once"]["details"]
    assert details["engine_config"]["distill"]["cache_dir"] == str(res / "train-cache")
    first = details["summary"]["distillations"][0]
    assert first["generation"] == 0 and first["training"]["cache"]["reused"]
    assert len(train) == trained, "every training of the rerun was read back"
    summary = json.loads((res / "summary.json").read_text())
    (cost,) = summary["training_cost"]["weights_prompts_once"]
    assert cost["adapters_reused"] == cost["adapters_trained"] >= 1
    assert cost["train_cpu_s"] == 24.0 * cost["adapters_trained"]  # the original's seconds
    text = cells_table(summary)
    assert f"({cost['adapters_kept']}), {cost['adapters_reused']} read back |" in text
    assert "found in the --train-cache" in text
