"""Warm starts (``run --init-from RUN_DIR``): an earlier run's front seeds the population and
its best harness seeds the harness; refusals (not a run, another task, a run that trained or
selected on test data, an empty archive); the transfer measurement's plumbing. Fakes only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from evotrainer.coevolution import CoEvolution
from evotrainer.errors import RunDirectoryError
from evotrainer.run.warm_start import check_source, load_warm_start
from tests.fake_meetings import RecordingMeetingTask, write_corpus
from tests.fake_review import DECISIONS, PLAIN, SUMMARY, styled_llm
from tests.fake_runs import Killed, kill_at, small_config

pymoo = pytest.importorskip("pymoo")


def _cfg(tmp_path: Path, name: str, **sections):
    defaults = {
        "validation": {"data": None, "synthetic_size": 6, "confirm": 2},
        "inner": {
            "population": 5,
            "elites": 2,
            "tasks_per_generation": 3,
            "generations": 4,
            "seed_prompts": [SUMMARY, DECISIONS, PLAIN],
        },
        "outer": {"every": 2, "variants": 2},
    }
    return small_config(tmp_path / f"{name}.sqlite", **{**defaults, **sections})


def _run(cfg, run_dir: Path, observers=()) -> CoEvolution:
    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=styled_llm(task), observers=list(observers))
    co.run(run_dir)
    return co


@pytest.fixture(scope="module")
def source_run(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("source")
    # the source trains at L 0.6 on synthetic meetings only: a recognisable harness
    cfg = _cfg(
        base,
        "source",
        harness={"real_data": None, "difficulty": 0.6},
    )
    _run(cfg, base / "run")
    return base / "run"


def test_the_front_seeds_the_population_and_the_best_harness_seeds_the_harness(
    source_run, tmp_path
):
    front = json.loads((source_run / "front.json").read_text())
    assert front["front"] and front["axes"][0] == "quality"
    best = front["front"][0]
    cfg = _cfg(tmp_path, "warm", init_from=str(source_run))
    co = _run(cfg, tmp_path / "warm")
    events = [json.loads(x) for x in (tmp_path / "warm" / "events.jsonl").read_text().splitlines()]
    (ws,) = [e for e in events if e["type"] == "warm_start"]
    assert ws["policies"][0] == best["policy"]["id"] and ws["source"] == str(source_run)
    imported = {p: co.state.policies[p] for p in ws["policies"]}
    assert all(p.lineage.operator == "import" for p in imported.values())
    assert all(p.name.startswith("W") for p in imported.values())
    # every imported policy is validated at the start, like a seed, and may be the baseline
    seed_vals = {
        e["policy_id"]
        for e in events
        if e["type"] == "validation" and e["role"] in ("seed", "initial")
    }
    assert set(ws["policies"]) <= seed_vals
    # the harness starts where the source's best pair was
    assert ws["harness"]["difficulty"] == pytest.approx(best["harness"]["difficulty"])
    assert ws["harness"]["weights"] == pytest.approx(best["harness"]["weights"])
    first_gen = next(e for e in events if e["type"] == "generation")
    assert first_gen["harness"]["id"] == ws["harness"]["id"]
    recorded = yaml.safe_load((tmp_path / "warm" / "config.yaml").read_text())
    assert Path(recorded["init_from"]).is_absolute()
    summary = json.loads((tmp_path / "warm" / "summary.json").read_text())
    assert summary["initial_s_val"] >= best["s_val"] - 1e-9, "the imported front is the baseline"


def test_a_synthetic_only_source_keeps_this_runs_real_share(source_run, tmp_path):
    corpus = write_corpus(tmp_path / "train.jsonl", 8, seed=3)
    ws = load_warm_start(
        source_run,
        "meetings",
        {"completeness", "format", "action_count", "ref_rougeL"},
        3,
        real_pool=True,
        real_share=0.5,
    )
    assert ws.harness is not None and ws.harness.real_share == 0.5
    assert any("synthetic meetings only" in n for n in ws.notes)
    assert len(ws.policies) <= 3
    # components this run does not have are dropped and said so
    narrow = load_warm_start(source_run, "meetings", {"completeness"}, 3, False, 0.0)
    assert narrow.harness is not None and set(narrow.harness.weights) == {"completeness"}
    assert any("dropped" in n for n in narrow.notes)
    assert corpus.is_file()


def test_an_unfinished_source_is_read_from_its_checkpoint(tmp_path):
    cfg = _cfg(tmp_path, "src", harness={"real_data": None})
    with pytest.raises(Killed):
        _run(cfg, tmp_path / "unfinished", [kill_at("outer_step", 1)])
    assert not (tmp_path / "unfinished" / "archive.json").exists()
    entries = check_source(tmp_path / "unfinished", "meetings")
    assert entries and entries[0].s_val == max(e.s_val for e in entries)


def _copy_with_config(source: Path, tmp_path: Path, **changes) -> Path:
    dest = tmp_path / "src"
    shutil.copytree(source, dest)
    data = yaml.safe_load((dest / "config.yaml").read_text())
    for key, value in changes.items():
        section, _, sub = key.partition(".")
        data.setdefault(section, {})[sub] = value
    (dest / "config.yaml").write_text(yaml.safe_dump(data))
    return dest


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"validation.data": "/data/ami-dev.jsonl"}, "test data"),
        ({"harness.real_data": "../shared/data/meetings/ICSI.jsonl"}, "test data"),
        ({"defences.terminal_data": "/x/ami-dev.jsonl"}, "test data"),
        ({"task.name": "code"}, "task 'code'"),
    ],
)
def test_refused_sources(source_run, tmp_path, change, says):
    src = _copy_with_config(source_run, tmp_path, **change)
    with pytest.raises(RunDirectoryError, match=says):
        check_source(src, "meetings")


def test_not_a_run_and_an_empty_archive_are_refused(source_run, tmp_path):
    with pytest.raises(RunDirectoryError, match="not a run directory"):
        check_source(tmp_path / "nowhere", "meetings")
    src = _copy_with_config(source_run, tmp_path)
    (src / "front.json").unlink()
    (src / "archive.json").write_text("[]")
    with pytest.raises(RunDirectoryError, match="archive is empty"):
        check_source(src, "meetings")


@pytest.mark.parametrize("where", ["front.json", "archive.json"])
def test_a_huge_policy_text_is_refused_with_its_size(source_run, tmp_path, where):
    """Issue 50, cause 5: a 30 MB policy text in archive.json hung the run with no message."""
    from evotrainer.policy.genome import MAX_POLICY_CHARS

    src = _copy_with_config(source_run, tmp_path)
    doc = json.loads((src / "front.json").read_text())
    entry = doc["front"][0]
    entry["policy"]["components"]["system"] = "Write the minutes. " * (30_000_000 // 19)
    if where == "archive.json":
        (src / "front.json").unlink()
        (src / "archive.json").write_text(json.dumps([entry]))
    else:
        (src / "front.json").write_text(json.dumps(doc))
    with pytest.raises(RunDirectoryError, match=f"{where}.*entry 0.*{MAX_POLICY_CHARS:,}"):
        check_source(src, "meetings")


def test_cli_refuses_a_bad_source_before_the_model_loads(tmp_path):
    from typer.testing import CliRunner

    from evotrainer.cli.app import app

    res = CliRunner().invoke(
        app,
        [
            "run",
            "--run-dir",
            str(tmp_path / "run"),
            "--init-from",
            str(tmp_path / "missing"),
            "--model",
            "local:/nonexistent/model.gguf",
        ],
    )
    assert res.exit_code == 2 and "not a run directory" in res.output
    assert not (tmp_path / "run").exists()


def test_transfer_measurement_plumbing(tmp_path):
    from benchmarks.transfer import calls_to_reach, measure, table

    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    base = _cfg(
        tmp_path,
        "base",
        harness={"real_data": str(corpus), "real_share": 0.5},
        validation={"data": str(write_corpus(tmp_path / "val.jsonl", 8, seed=6)), "confirm": 2},
    )

    def make():
        task = RecordingMeetingTask()
        return task, styled_llm(task)

    (row,) = measure(base, [1], tmp_path / "work", make)
    assert row["target_s_val"] == row["cold"]["final_s_val"]
    cold = row["cold"]["calls_to_reach"]
    assert cold is not None and 0 < cold <= row["cold"]["llm_calls"]
    warm_dir = tmp_path / "work" / "seed1" / "warm"
    warm_cfg = yaml.safe_load((warm_dir / "config.yaml").read_text())
    assert warm_cfg["init_from"].endswith("seed1/source")
    assert (
        warm_cfg["harness"]["real_data"]
        and not yaml.safe_load(
            (tmp_path / "work" / "seed1" / "source" / "config.yaml").read_text()
        )["harness"]["real_data"]
    )
    assert calls_to_reach(warm_dir, 2.0) is None  # an s_val above 1 is never reached
    assert "| 1 |" in table([row])
    # resumable: finished runs are read back (no LLM call), a killed one starts again
    import shutil

    shutil.rmtree(warm_dir / "checkpoints", ignore_errors=True)
    (warm_dir / "summary.json").unlink()  # the warm run "was killed"

    calls = []

    def make_counting():
        calls.append(1)
        return make()

    (again,) = measure(base, [1], tmp_path / "work", make_counting)
    assert len(calls) == 1  # only the warm run ran again
    assert again["cold"] == row["cold"] and again["source"] == row["source"]
    assert again["warm"]["final_s_val"] == row["warm"]["final_s_val"]
