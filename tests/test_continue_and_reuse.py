"""Continue and reuse (issue 35, item 12): ``resume RUN_DIR --more-generations N`` continues a
finished run (as Optuna continues a study); ``--init-from`` carries the earlier run's ratings
over; ``--task my_module:PLUGIN`` loads a task plug-in that was never packaged, and a run
directory cannot make a resume import one. Fakes only."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.coevolution import CoEvolution
from evotrainer.config import config_from_dict, load_config
from evotrainer.errors import ConfigError, RunDirectoryError
from evotrainer.run.ratings import Rating, RatingStore
from evotrainer.tasks import registry
from tests.fake_meetings import RecordingMeetingTask, family_llm
from tests.fake_runs import comparable_summary, fake_run, small_config

cli = CliRunner()


def _events(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines() if x]


def test_more_generations_continue_a_finished_run_like_a_longer_one(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite", inner={"generations": 4})
    fake_run(cfg, tmp_path / "run")
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["generations"] == 4
    with pytest.raises(RunDirectoryError, match="finished"):
        CoEvolution.resume(tmp_path / "run")  # without more generations: nothing to do
    task = RecordingMeetingTask()
    co, path = CoEvolution.resume(
        tmp_path / "run", task=task, llm=family_llm(task), more_generations=2
    )
    co.run(path)
    longer = small_config(tmp_path / "c.sqlite", inner={"generations": 6})
    fake_run(longer, tmp_path / "clean")
    continued = comparable_summary(tmp_path / "run")
    clean = comparable_summary(tmp_path / "clean")
    for key in ("llm_calls", "prompt_tokens", "completion_tokens"):
        continued.pop(key), clean.pop(key)  # the first finish's calls are not in the checkpoint
    assert continued["generations"] == 6
    assert continued == clean
    recorded = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert recorded["inner"]["generations"] == 6
    resumed = [e for e in _events(tmp_path / "run") if e["type"] == "run_resumed"]
    assert resumed and resumed[-1]["more_generations"] == 2


def test_more_generations_from_the_command_line(tmp_path):
    rd = tmp_path / "run"
    args = ["run", "--model", "fake:minutes", "--run-dir", str(rd)]
    sets = {
        "inner.population": 3,
        "inner.elites": 1,
        "inner.tasks_per_generation": 2,
        "inner.generations": 2,
        "validation.data": "null",
        "validation.synthetic_size": 5,
        "validation.confirm": 2,
        "harness.real_data": "null",
        "defences.terminal_data": "null",
        "cache.path": str(tmp_path / "c.sqlite"),
        "report": "false",
    }
    args += [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    assert cli.invoke(app, args).exit_code == 0
    refused = cli.invoke(app, ["resume", str(rd)])
    assert refused.exit_code == 2 and "--more-generations" in refused.output
    res = cli.invoke(app, ["resume", str(rd), "--more-generations", "3"])
    assert res.exit_code == 0, res.output
    assert json.loads((rd / "summary.json").read_text())["generations"] == 5


def _source_with_ratings(tmp_path: Path) -> tuple[Path, int]:
    cfg = small_config(
        tmp_path / "src.sqlite",
        inner={"generations": 2},
        validation={"data": None, "synthetic_size": 6, "confirm": 2},
    )
    co = fake_run(cfg, tmp_path / "source")
    policies = [e.policy.id for e in co.state.hopt.archive.entries]
    assert len(set(policies)) >= 2
    left, right = sorted(set(policies))[:2]
    store = RatingStore(tmp_path / "source")
    meetings = [i.id for i in co.components.validation_set.selection]
    for k, m in enumerate(meetings):
        store.add(
            Rating(
                m, left, right, "left" if k % 2 else "right", nonce=f"n{k}", issued_at=time.time()
            )
        )
    return tmp_path / "source", len(meetings)


def test_init_from_carries_the_ratings_over(tmp_path):
    source, n = _source_with_ratings(tmp_path)
    cfg = small_config(
        tmp_path / "warm.sqlite",
        inner={"generations": 2},
        validation={"data": None, "synthetic_size": 6, "confirm": 2},
        init_from=str(source),
    )
    fake_run(cfg, tmp_path / "warm")
    carried = RatingStore(tmp_path / "warm").all()
    assert len(carried) == n
    assert {r.nonce for r in carried} == {r.nonce for r in RatingStore(source).all()}
    (ws,) = [e for e in _events(tmp_path / "warm") if e["type"] == "warm_start"]
    assert ws["ratings"] == n
    summary = json.loads((tmp_path / "warm" / "summary.json").read_text())
    assert summary["meta"]["human"]["ratings"] == n  # read on the same selection meetings


def test_a_source_ratings_file_is_read_not_written(tmp_path):
    source, _ = _source_with_ratings(tmp_path)
    before = (source / "ratings.sqlite").read_bytes()
    from evotrainer.run.ratings import read_ratings

    assert len(read_ratings(source)) > 0
    assert (source / "ratings.sqlite").read_bytes() == before
    (source / "ratings.sqlite").unlink()
    (source / "ratings.sqlite").symlink_to(tmp_path / "elsewhere.sqlite")
    with pytest.raises(RunDirectoryError, match="symbolic link"):
        read_ratings(source)


PLUGIN_MODULE = """
from evotrainer.tasks.meetings.plugin import PLUGIN as MEETINGS
from evotrainer.tasks.meetings.task import MeetingTask
from evotrainer.tasks.registry import TaskPlugin


class Brief(MeetingTask):
    name = "brief"


PLUGIN = TaskPlugin(
    "brief",
    lambda cfg: Brief(),
    defaults={**MEETINGS.defaults, "outer": {"s_val_weights": {"rougeL": 1.0}}},
)
"""


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "_PLUGINS", dict(registry._PLUGINS))
    monkeypatch.setattr(registry, "_IMPORTABLE", set(registry._IMPORTABLE))
    (tmp_path / "my_tasks.py").write_text(textwrap.dedent(PLUGIN_MODULE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # what the CLI does for the current folder
    monkeypatch.delitem(__import__("sys").modules, "my_tasks", raising=False)
    return "my_tasks:PLUGIN"


def test_task_module_attr_runs_a_plug_in_that_is_not_packaged(tmp_path, plugin_module):
    args = ["run", "--task", plugin_module, "--model", "fake:minutes", "--run-dir", "run"]
    sets = {
        "inner.population": 3,
        "inner.elites": 1,
        "inner.tasks_per_generation": 2,
        "inner.generations": 1,
        "validation.data": "null",
        "validation.synthetic_size": 4,
        "validation.confirm": 0,
        "harness.real_data": "null",
        "defences.terminal_data": "null",
        "cache.enabled": "false",
        "report": "false",
    }
    args += [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    recorded = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert recorded["task"]["name"] == plugin_module
    assert recorded["outer"]["s_val_weights"] == {"rougeL": 1.0}  # the plug-in's defaults


def test_a_file_path_plug_in_and_a_clear_error_for_a_bad_one(tmp_path, plugin_module):
    cfg = load_config(None, [], {"task.name": f"{tmp_path / 'my_tasks.py'}:PLUGIN"})
    assert cfg.outer.s_val_weights == {"rougeL": 1.0}
    with pytest.raises(ConfigError, match="no_such_module"):
        load_config(None, [], {"task.name": "no_such_module:PLUGIN"})
    with pytest.raises(ConfigError, match="NOPE"):
        load_config(None, [], {"task.name": "my_tasks:NOPE"})


def test_a_run_directory_cannot_make_a_resume_import_a_module(tmp_path, plugin_module):
    # the names a run directory holds are data: parsing one never imports a module
    with pytest.raises(ConfigError, match="--task"):
        config_from_dict({"task": {"name": "evil_module:PLUGIN"}})
    # a run of the plug-in, then a fresh process (nothing allowed yet) resumes it
    rd = tmp_path / "run"
    test_task_module_attr_runs_a_plug_in_that_is_not_packaged(tmp_path, plugin_module)
    (rd / "summary.json").unlink()
    registry._IMPORTABLE.clear()
    registry._PLUGINS.pop(plugin_module, None)
    refused = cli.invoke(app, ["resume", str(rd)])
    assert refused.exit_code == 2 and f"--task {plugin_module}" in refused.output
    res = cli.invoke(app, ["resume", str(rd), "--task", plugin_module])
    assert res.exit_code == 0, res.output
