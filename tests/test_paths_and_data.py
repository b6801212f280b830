"""Paths and data (issue 35, item 1): relative paths in a config file mean the config file's
folder, whatever the current directory; a data file the user or a config names that is missing
is an error, never a synthetic fallback; the fallback that remains (no data named: the task's
default file is absent) is announced through ``logging`` too, so Python API users see it.
Fakes only."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.coevolution import CoEvolution
from evotrainer.config import load_config
from evotrainer.errors import DataError
from evotrainer.run.validation_set import resolve_validation
from evotrainer.tasks.meetings.task import MeetingTask
from tests.fake_meetings import write_corpus

cli = CliRunner()


def _config_in(folder: Path, **sections) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "exp.yaml"
    path.write_text(yaml.safe_dump(sections))
    return path


def test_relative_paths_in_a_config_file_resolve_against_its_folder(tmp_path, monkeypatch):
    cfg_file = _config_in(
        tmp_path / "project" / "configs",
        validation={"data": "../data/val.jsonl"},
        harness={"real_data": "../data/train.jsonl"},
        defences={"terminal_data": "train.jsonl"},
        cache={"path": "cache/llm.sqlite"},
        model={"spec": "local:models/m.gguf"},
        init_from="../runs/earlier",
    )
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    cfg = load_config(cfg_file)
    here = (tmp_path / "project" / "configs").resolve()
    assert cfg.validation.data == str((here / "../data/val.jsonl").resolve())
    assert cfg.harness.real_data == str(here.parent / "data" / "train.jsonl")
    assert cfg.defences.terminal_data == str(here / "train.jsonl")
    assert cfg.cache.path == str(here / "cache" / "llm.sqlite")
    assert cfg.model.spec == f"local:{here / 'models' / 'm.gguf'}"
    assert cfg.init_from == str(here.parent / "runs" / "earlier")


def test_absolute_paths_model_names_and_command_line_values_are_kept(tmp_path, monkeypatch):
    cfg_file = _config_in(
        tmp_path / "c",
        validation={"data": "/abs/val.jsonl"},
        harness={"real_data": None},
        model={"spec": "local:smollm2"},
    )
    monkeypatch.chdir(tmp_path)
    cfg = load_config(
        cfg_file, ["harness.real_data=mine.jsonl"], {"defences.terminal_data": "t.jsonl"}
    )
    assert cfg.validation.data == "/abs/val.jsonl"
    assert cfg.model.spec == "local:smollm2"
    # --set and option values are typed in a shell: relative to the current directory
    assert cfg.harness.real_data == "mine.jsonl"
    assert cfg.defences.terminal_data == "t.jsonl"


@pytest.mark.parametrize(
    "section,key",
    [("validation", "data"), ("harness", "real_data"), ("defences", "terminal_data")],
)
def test_a_named_data_file_that_is_missing_is_an_error(tmp_path, section, key):
    cfg_file = _config_in(
        tmp_path / "c",
        validation={"data": None, "synthetic_size": 4, "confirm": 0},
        harness={"real_data": None},
        defences={"terminal_data": None, "terminal_share": 0.2},
        cache={"enabled": False},
    )
    data = yaml.safe_load(cfg_file.read_text())
    data[section][key] = "no-such-file.jsonl"
    cfg_file.write_text(yaml.safe_dump(data))
    cfg = load_config(cfg_file, [], {"model.spec": "fake:echo"})
    with pytest.raises(DataError, match="no-such-file.jsonl"):
        CoEvolution(cfg)


def test_the_demo_configs_take_the_tasks_default_data(monkeypatch):
    """make demo runs from the repository's root, where the task's default data path is
    ../shared's AMI train; a fresh clone without it falls back and says so (the demo names no
    file, so a missing one is no error: test_the_fallback_when_no_data_is_named_is_logged)."""
    from evotrainer.tasks.meetings.plugin import DEFAULT_REAL_DATA, DEFAULT_VAL_DATA

    repo = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(repo)
    for name in ("demo.yaml", "distill.yaml"):
        cfg = load_config(repo / "configs" / name)
        assert cfg.validation.data == DEFAULT_VAL_DATA, name
        assert cfg.harness.real_data == DEFAULT_REAL_DATA, name


def test_the_fallback_when_no_data_is_named_is_logged(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)  # the task's default file (../shared/...) is not here
    cfg = load_config(
        None,
        ["validation.synthetic_size=4", "validation.confirm=0", "cache.enabled=false"],
        {"model.spec": "fake:echo"},
    )
    with caplog.at_level(logging.WARNING, logger="evotrainer"):
        co = CoEvolution(cfg)
    assert co.components.validation_set.synthetic
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "synthetic validation set" in logged
    assert "synthetic training only" in logged


def test_resolve_validation_refuses_a_named_file_even_when_it_is_the_default(tmp_path):
    # a config file that names the default's text names a file next to it: not the default
    cfg_file = _config_in(
        tmp_path / "c", validation={"data": "../shared/data/meetings/ami-train.jsonl"}
    )
    cfg = load_config(cfg_file)
    with pytest.raises(DataError, match="not found"):
        resolve_validation(MeetingTask(), cfg.validation, 0)


def test_run_from_another_folder_uses_the_configs_data(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    write_corpus(project / "data" / "val.jsonl", 6, seed=1)
    write_corpus(project / "data" / "train.jsonl", 6, seed=2)
    cfg_file = _config_in(
        project,
        validation={"data": "data/val.jsonl", "confirm": 2, "limit": None},
        harness={"real_data": "data/train.jsonl"},
        defences={"terminal_data": None},
        inner={"population": 3, "elites": 1, "tasks_per_generation": 2, "generations": 1},
        outer={"every": 1},
        cache={"path": "cache.sqlite"},
        report=False,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    res = cli.invoke(
        app, ["run", "-c", str(cfg_file), "--model", "fake:echo", "--run-dir", "run", "--json"]
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((elsewhere / "run" / "summary.json").read_text())
    assert summary["validation"]["source"] == str((project / "data" / "val.jsonl").resolve())
    assert not summary["validation"]["synthetic"]
    assert summary["training"]["real_source"] == str((project / "data" / "train.jsonl").resolve())
    assert (project / "cache.sqlite").is_file()


def test_run_data_names_training_and_validation_data(tmp_path, monkeypatch):
    write_corpus(tmp_path / "my.jsonl", 10, seed=4)
    monkeypatch.chdir(tmp_path)
    args = ["run", "--model", "fake:echo", "--data", "my.jsonl", "--run-dir", "run", "--json"]
    sets = {
        "inner.population": 3,
        "inner.elites": 1,
        "inner.tasks_per_generation": 2,
        "inner.generations": 1,
        "validation.confirm": 2,
        "cache.enabled": "false",
        "report": "false",
    }
    args += [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    mine = str((tmp_path / "my.jsonl").resolve())
    assert summary["validation"]["source"] == mine
    assert summary["training"]["real_source"] == mine
    # the validation meetings are held out of the training pool
    assert summary["training"]["real_pool"] == 10 - summary["validation"]["n"] - 2
