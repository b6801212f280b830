"""A run directory is untrusted input (issue 33, items 5-9 and 12, and the run-directory items of
its minor list): nothing is written through a link planted in it, ``resume`` takes from its
config.yaml only what the run needs (no code-running settings, no endpoint the command line did
not name), the data is identified by content, every path in config.yaml is absolute, the call
cap holds across a resume, and malformed checkpoints, archives and event logs end in a clear
message (or the older checkpoint), never a traceback. Fakes only."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.coevolution import CoEvolution
from evotrainer.config import TaskConfig
from evotrainer.errors import CheckpointError, ConfigError, RunDirectoryError
from evotrainer.llm.fake_server import LatencyServer
from evotrainer.report.build import build_report
from evotrainer.run.checkpoint import _digest, load_latest
from evotrainer.run.events import read_events
from evotrainer.run.rundir import RunDirectory
from tests.fake_meetings import RecordingMeetingTask, family_llm, write_corpus
from tests.fake_runs import Killed, comparable_summary, fake_resume, fake_run, kill_at, small_config

cli = CliRunner()


def _killed_run(tmp_path: Path, name: str = "run", nth: int = 1, **sections) -> Path:
    run_dir = tmp_path / name
    with pytest.raises(Killed):
        fake_run(
            small_config(tmp_path / "c.sqlite", **sections), run_dir, [kill_at("outer_step", nth)]
        )
    return run_dir


def _edit_config(run_dir: Path, change) -> None:
    data = yaml.safe_load((run_dir / "config.yaml").read_text())
    change(data)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(data))


def _tamper_latest(run_dir: Path, change) -> None:
    """Change the newest checkpoint's state and recompute its (unkeyed) checksum."""
    ck = sorted((run_dir / "checkpoints").glob("ckpt-*.json"))[-1]
    doc = json.loads(ck.read_text())
    change(doc["state"])
    doc["sha256"] = _digest(doc["state"])
    ck.write_text(json.dumps(doc))


# -- item 5: never write through a link -----------------------------------------------------
@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_journal_planted_as_a_link_is_never_written_through(tmp_path, link):
    run_dir = _killed_run(tmp_path)
    journal = run_dir / "checkpoints" / "outer.decisions.jsonl"
    victim = tmp_path / "victim.txt"
    victim.write_bytes(journal.read_bytes() + b"precious\n")
    before = victim.read_bytes()
    journal.unlink()
    if link == "symlink":
        journal.symlink_to(victim)
    else:
        os.link(victim, journal)
    with pytest.raises(RunDirectoryError, match="outer.decisions.jsonl"):
        fake_resume(run_dir)
    assert victim.read_bytes() == before
    res = cli.invoke(app, ["resume", str(run_dir)])
    assert res.exit_code == 2 and "link" in res.output and "Traceback" not in res.output
    assert victim.read_bytes() == before


@pytest.mark.parametrize("name", ["best", "checkpoints"])
def test_a_run_folder_planted_as_a_symlink_is_refused(tmp_path, name):
    run_dir = _killed_run(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    if (run_dir / name).exists():
        shutil.copytree(run_dir / name, outside, dirs_exist_ok=True)
        shutil.rmtree(run_dir / name)
    before = sorted(p.name for p in outside.iterdir())
    (run_dir / name).symlink_to(outside, target_is_directory=True)
    with pytest.raises(RunDirectoryError, match="symbolic link"):
        fake_resume(run_dir)
    assert sorted(p.name for p in outside.iterdir()) == before


def test_best_results_are_never_written_through_a_symlinked_folder(tmp_path):
    """Even if the link appears while the run is going (after the checks at the start)."""
    from evotrainer.engine.outcome import write_results

    run_dir = tmp_path / "run"
    co = fake_run(small_config(tmp_path / "c.sqlite", inner={"generations": 2}), run_dir)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(run_dir / "best")
    (run_dir / "best").symlink_to(outside, target_is_directory=True)
    with pytest.raises(RunDirectoryError, match="symbolic link"):
        write_results(co, {"final_s_val": 0.0}, co.state.inner.best())
    assert list(outside.iterdir()) == []


def test_a_report_folder_planted_as_a_symlink_is_refused(tmp_path):
    run_dir = tmp_path / "run"
    fake_run(small_config(tmp_path / "c.sqlite", inner={"generations": 2}), run_dir)
    outside = tmp_path / "outside"
    outside.mkdir()
    (run_dir / "report").symlink_to(outside, target_is_directory=True)
    res = cli.invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 2 and "symbolic link" in res.output, res.output
    assert list(outside.iterdir()) == []


# -- item 6: no code-running settings from config.yaml ------------------------------------------
def test_resume_refuses_a_ray_runtime_env_from_the_run_directory(tmp_path):
    run_dir = _killed_run(tmp_path)
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = tmp_path / "pwned"
    (planted / "evil.py").write_text(f"def hook():\n    open({str(marker)!r}, 'w').close()\n")

    def plant(data):
        data["runner"] = "ray"
        data["ray"]["runtime_env"] = {
            "py_modules": [str(planted)],
            "worker_process_setup_hook": "evil.hook",
        }

    _edit_config(run_dir, plant)
    with pytest.raises(ConfigError, match="ray.runtime_env"):
        fake_resume(run_dir)
    res = cli.invoke(app, ["resume", str(run_dir)])
    assert res.exit_code == 2 and "ray.runtime_env" in res.output, res.output
    assert not marker.exists()


def test_resume_drops_a_runtime_env_the_run_does_not_use(tmp_path):
    run_dir = _killed_run(tmp_path)
    _edit_config(run_dir, lambda d: d["ray"].update(runtime_env={"pip": ["x"]}))
    co = fake_resume(run_dir)  # runner is not ray: the setting is never used, so not taken
    assert co.components.cfg.ray.runtime_env is None


def test_resume_refuses_a_ray_address_the_command_line_did_not_name(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    run_dir = _killed_run(tmp_path)

    def plant(data):
        data["runner"] = "ray"
        data["ray"]["address"] = "ray://attacker.example:10001"

    _edit_config(run_dir, plant)
    with pytest.raises(ConfigError, match="--ray-address"):
        RunDirectory.open(run_dir)
    rd = RunDirectory.open(run_dir, ray_address="ray://attacker.example:10001")
    assert rd.config.ray.address == "ray://attacker.example:10001"


class _GuardedConfig(TaskConfig):
    """A task with a setting that weakens confinement (as the code gym's unsafe sandboxes)."""

    confinement: str = "strict"

    def executable_settings(self) -> list[str]:
        return [f"task.confinement={self.confinement}"] if self.confinement != "strict" else []


def test_resume_refuses_a_setting_a_task_marks_as_running_code(tmp_path, monkeypatch):
    from evotrainer.tasks import registry

    plugin = registry.TaskPlugin("guarded", lambda cfg: RecordingMeetingTask(), _GuardedConfig)
    monkeypatch.setitem(registry._PLUGINS, "guarded", plugin)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    task = {"name": "guarded", "confinement": "strict"}
    (run_dir / "config.yaml").write_text(yaml.safe_dump({"task": task}))
    assert RunDirectory.open(run_dir).config.task.name == "guarded"
    task["confinement"] = "none"
    (run_dir / "config.yaml").write_text(yaml.safe_dump({"task": task}))
    with pytest.raises(ConfigError, match="task.confinement=none"):
        RunDirectory.open(run_dir)


BOMB = "model:\n  extra_body:\n    a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"    {c}: &{c} [{', '.join(['*' + p] * 10)}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)  # 10**9 values once expanded, all under model.extra_body (a valid key)


def test_an_alias_bomb_in_config_yaml_is_refused_by_resume_report_and_init_from(tmp_path):
    from evotrainer.run.warm_start import check_source

    run_dir = _killed_run(tmp_path)
    (run_dir / "config.yaml").write_text(BOMB)
    with pytest.raises(CheckpointError, match="not a readable config"):
        RunDirectory.open(run_dir)
    with pytest.raises(RunDirectoryError, match="not a readable config"):
        check_source(run_dir, "meetings")
    assert build_report(run_dir).is_file()


# -- item 7: no endpoint the command line did not name ---------------------------------------
def test_resume_sends_nothing_to_a_base_url_only_config_yaml_names(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    run_dir = _killed_run(tmp_path, inner={"generations": 4})
    with LatencyServer(latency_s=0.0) as attacker:

        def plant(data):
            data["model"].update(spec="openai:x", base_url=attacker.url, max_retries=0)

        _edit_config(run_dir, plant)
        res = cli.invoke(app, ["resume", str(run_dir)])
        assert res.exit_code == 2, res.output
        assert "--base-url" in res.output and "Traceback" not in res.output
        assert attacker.requests == 0, "resume sent the run's data to config.yaml's base_url"
        # the user names the endpoint: the run goes on against it
        res = cli.invoke(app, ["resume", str(run_dir), "--base-url", attacker.url])
        assert res.exit_code == 0, res.output
        assert attacker.requests > 0
    assert (run_dir / "summary.json").exists()


def test_a_base_url_equal_to_the_environments_is_taken(tmp_path, monkeypatch):
    run_dir = _killed_run(tmp_path)
    _edit_config(run_dir, lambda d: d["model"].update(spec="openai:x", base_url="http://h:1/v1"))
    with pytest.raises(ConfigError, match="base_url"):
        RunDirectory.open(run_dir)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://h:1/v1")
    assert RunDirectory.open(run_dir).config.model.base_url == "http://h:1/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    other = RunDirectory.open(run_dir, base_url="http://elsewhere:2/v1")
    assert other.config.model.base_url == "http://elsewhere:2/v1"


# -- item 8: data identified by content --------------------------------------------------------
def _replace_contents_keep_ids(path: Path, seed: int = 99) -> None:
    """Other meetings (transcripts, references) under the same ids."""
    old = [json.loads(x) for x in path.read_text().splitlines()]
    other = write_corpus(path.with_name("other.jsonl"), len(old), seed=seed)
    new = [json.loads(x) for x in other.read_text().splitlines()]
    for n, o in zip(new, old, strict=True):
        n["id"] = o["id"]
    path.write_text("".join(json.dumps(n) + "\n" for n in new))


def test_resume_refuses_validation_data_replaced_under_the_same_ids(tmp_path):
    data = write_corpus(tmp_path / "val.jsonl", 4, seed=1)
    run_dir = _killed_run(tmp_path, validation={"data": str(data)})
    _replace_contents_keep_ids(data)
    with pytest.raises(CheckpointError, match="validation set changed"):
        fake_resume(run_dir)


def test_resume_refuses_training_data_replaced_under_the_same_ids(tmp_path):
    data = write_corpus(tmp_path / "train.jsonl", 6, seed=2)
    run_dir = _killed_run(tmp_path, harness={"real_data": str(data)})
    _replace_contents_keep_ids(data)
    with pytest.raises(CheckpointError, match="training data changed"):
        fake_resume(run_dir)


# -- item 9: every path in config.yaml absolute -------------------------------------------------
def test_config_yaml_records_every_path_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path / "train.jsonl", 6, seed=2)
    write_corpus(tmp_path / "val.jsonl", 4, seed=1)
    write_corpus(tmp_path / "terminal.jsonl", 4, seed=3)
    sections = {
        "harness": {"real_data": "train.jsonl"},
        "validation": {"data": "val.jsonl"},
        "defences": {"terminal_data": "terminal.jsonl", "terminal_share": 0.2},
        "model": {"spec": "local:models/m.gguf"},
    }
    cfg = small_config(Path("c.sqlite"), **sections)
    run_dir = tmp_path / "run"
    with pytest.raises(Killed):
        fake_run(cfg, run_dir, [kill_at("outer_step", 1)])
    recorded = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert recorded["harness"]["real_data"] == str(tmp_path / "train.jsonl")
    assert recorded["validation"]["data"] == str(tmp_path / "val.jsonl")
    assert recorded["defences"]["terminal_data"] == str(tmp_path / "terminal.jsonl")
    assert recorded["cache"]["path"] == str(tmp_path / "c.sqlite")
    assert recorded["model"]["spec"] == f"local:{tmp_path / 'models' / 'm.gguf'}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # resume from another working directory
    co = fake_resume(run_dir)
    assert len(co.components.real_pool.instances) == 6, (
        "the resumed run lost its real training data"
    )


def test_validation_source_is_the_same_after_a_resume(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path / "val.jsonl", 4, seed=1)
    write_corpus(tmp_path / "train.jsonl", 6, seed=2)
    sections = {"validation": {"data": "val.jsonl"}, "harness": {"real_data": "train.jsonl"}}
    cfg = small_config(Path("c.sqlite"), **sections)
    fake_run(cfg, tmp_path / "clean")
    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "run", [kill_at("outer_step", 1)])
    fake_resume(tmp_path / "run")
    clean, resumed = comparable_summary(tmp_path / "clean"), comparable_summary(tmp_path / "run")
    assert resumed["validation"]["source"] == clean["validation"]["source"]
    assert Path(clean["validation"]["source"]).is_absolute()
    assert resumed["training"]["real_source"] == clean["training"]["real_source"]
    assert resumed == clean


# -- item 12: the call cap holds across a resume -----------------------------------------------
def _counted_run(cfg, run_dir, calls, observers=(), resume=False):
    task = RecordingMeetingTask()
    llm = family_llm(task)
    answer = llm.fn

    def counting(m, p):
        calls.append(1)
        return answer(m, p)

    llm.fn = counting
    if resume:
        co, path = CoEvolution.resume(run_dir, task=task, llm=llm, observers=list(observers))
        co.run(path)
    else:
        co = CoEvolution(cfg, task=task, llm=llm, observers=list(observers))
        co.run(run_dir)
    return co


def _cache_off(cfg):
    return cfg.model_copy(update={"cache": cfg.cache.model_copy(update={"enabled": False})})


def test_max_calls_holds_across_a_resume_with_the_cache_off(tmp_path):
    free: list[int] = []
    _counted_run(_cache_off(small_config(tmp_path / "c.sqlite")), tmp_path / "free", free)
    cap = len(free) - 4  # the cap stops the run near its end
    cfg = _cache_off(small_config(tmp_path / "c.sqlite", budget={"max_calls": cap}))
    calls: list[int] = []
    with pytest.raises(Killed):
        _counted_run(cfg, tmp_path / "run", calls, [kill_at("checkpoint", 5)])
    co = _counted_run(cfg, tmp_path / "run", calls, resume=True)
    assert len(calls) <= cap, f"the server saw {len(calls)} calls, max_calls={cap}"
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["runtime"]["backend_calls"] == len(calls) == co.components.budget.backend_calls


def test_a_cap_reached_while_a_resume_rereads_the_population_ends_the_run_cleanly(tmp_path):
    free: list[int] = []
    _counted_run(_cache_off(small_config(tmp_path / "c.sqlite")), tmp_path / "free", free)
    cap = len(free) - 4
    cfg = _cache_off(small_config(tmp_path / "c.sqlite", budget={"max_calls": cap}))
    calls: list[int] = []
    with pytest.raises(Killed):  # late: the calls left cannot re-read the population
        _counted_run(cfg, tmp_path / "run", calls, [kill_at("checkpoint", 7)])
    _counted_run(cfg, tmp_path / "run", calls, resume=True)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stopped"] == "budget" and len(calls) <= cap


# -- minor: malformed checkpoints ---------------------------------------------------------------
@pytest.mark.parametrize("field", ["epoch", "outer_step", "trial_generations", "budget"])
def test_a_checkpoint_field_set_to_infinity_is_a_clear_error(tmp_path, field):
    run_dir = _killed_run(tmp_path)

    def infinite(state):
        if field == "budget":
            state["budget"]["llm_calls"] = float("inf")
        else:
            state[field] = float("inf")

    _tamper_latest(run_dir, infinite)
    with pytest.raises(CheckpointError, match="not a checkpoint this version can read"):
        fake_resume(run_dir)
    _edit_config(run_dir, lambda d: d["model"].update(spec="fake:echo"))  # never the real model
    res = cli.invoke(app, ["resume", str(run_dir)])
    assert res.exit_code == 2 and "Traceback" not in res.output


DEEP = "[" * 100_000 + "]" * 100_000


def test_a_deeply_nested_checkpoint_falls_back_to_the_older_one(tmp_path):
    run_dir = _killed_run(tmp_path)
    newest = sorted((run_dir / "checkpoints").glob("ckpt-*.json"))[-1]
    newest.write_text('{"sha256": "x", "state": {"epoch": ' + DEEP + "}}")
    state, path, warnings = load_latest(run_dir)
    assert path != newest and warnings and newest.name in warnings[0]
    assert build_report(run_dir).is_file()
    res = cli.invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 0, res.output
    fake_resume(run_dir)
    assert (run_dir / "summary.json").exists()


def test_a_deeply_nested_journal_line_falls_back_to_the_older_checkpoint(tmp_path):
    run_dir = _killed_run(tmp_path)
    ckdir = run_dir / "checkpoints"
    newest = sorted(ckdir.glob("ckpt-*.json"))[-1]
    journal = ckdir / "policies.jsonl"
    line = ('{"k": "x", "v": ' + DEEP + "}\n").encode()
    journal.write_bytes(journal.read_bytes() + line)
    import hashlib

    doc = json.loads(newest.read_text())
    ref = doc["state"]["policies"]
    ref["bytes"] = journal.stat().st_size
    ref["sha256"] = hashlib.sha256(journal.read_bytes()).hexdigest()
    doc["sha256"] = _digest(doc["state"])
    newest.write_text(json.dumps(doc))
    state, path, warnings = load_latest(run_dir)
    assert path != newest and newest.name in warnings[0]
    assert cli.invoke(app, ["report", str(run_dir)]).exit_code == 0


def test_a_deeply_nested_summary_or_archive_does_not_crash_the_report(tmp_path):
    run_dir = tmp_path / "run"
    fake_run(small_config(tmp_path / "c.sqlite", inner={"generations": 2}), run_dir)
    for name in ("summary.json", "archive.json", "front.json", "best/policy.json"):
        (run_dir / name).write_text(DEEP)
    res = cli.invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 0, res.output


def test_a_checkpoint_file_name_that_is_not_a_number_is_ignored(tmp_path):
    run_dir = _killed_run(tmp_path)
    newest = sorted((run_dir / "checkpoints").glob("ckpt-*.json"))[-1]
    shutil.copy(newest, run_dir / "checkpoints" / "ckpt-zzz.json")  # intact, misnamed
    fake_resume(run_dir)
    assert (run_dir / "summary.json").exists()


# -- minor: --init-from archives ---------------------------------------------------------------
@pytest.fixture(scope="module")
def finished_source(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("source")
    fake_run(small_config(base / "c.sqlite", inner={"generations": 2}), base / "run")
    return base / "run"


def _front_entry(source: Path) -> dict:
    return json.loads((source / "front.json").read_text())["front"][0]


BAD_ENTRIES = {
    "no policy": lambda e: e.pop("policy"),
    "no harness": lambda e: e.pop("harness"),
    "string s_val": lambda e: e.update(s_val="high"),
    "policy is a list": lambda e: e.update(policy=[1, 2]),
    "components mistyped": lambda e: e["policy"].update(components=7),
    "harness weights mistyped": lambda e: e["harness"].update(weights="x"),
    "difficulty a string": lambda e: e["harness"].update(difficulty="hard"),
    "not an object": None,
}


@pytest.mark.parametrize("what", [*BAD_ENTRIES, "deep nesting", "archive deep"])
def test_a_malformed_init_from_archive_is_refused_before_anything_is_created(
    finished_source, tmp_path, what
):
    src = tmp_path / "src"
    shutil.copytree(finished_source, src)
    if what == "deep nesting":
        (src / "front.json").write_text(DEEP)
    elif what == "archive deep":
        (src / "front.json").unlink()
        (src / "archive.json").write_text(DEEP)
    else:
        entry = _front_entry(src)
        change = BAD_ENTRIES[what]
        if change is None:
            entry = "just a string"
        else:
            change(entry)
        doc = json.loads((src / "front.json").read_text())
        doc["front"] = [entry]
        (src / "front.json").write_text(json.dumps(doc))
    new = tmp_path / "new"
    args = ["run", "--run-dir", str(new), "--init-from", str(src), "--model", "fake:echo"]
    res = cli.invoke(app, [*args, "--set", "report=false"])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    assert "--init-from" in res.output and "Traceback" not in res.output
    assert not new.exists(), "a half-made run directory was left behind"
    cfg = small_config(tmp_path / "c.sqlite", init_from=str(src))
    with pytest.raises(RunDirectoryError, match="--init-from"):
        fake_run(cfg, new)
    assert not new.exists(), "a half-made run directory was left behind"


# -- minor: events.jsonl -----------------------------------------------------------------------
def test_invalid_utf8_in_events_does_not_break_report_or_resume(tmp_path):
    run_dir = _killed_run(tmp_path)
    with (run_dir / "events.jsonl").open("ab") as fh:
        fh.write(b'{"type": "warning", "message": "\xff\xfe"}\n' + DEEP.encode() + b"\n")
    events = read_events(run_dir / "events.jsonl")
    assert events and all(isinstance(e, dict) for e in events)
    assert cli.invoke(app, ["report", str(run_dir)]).exit_code == 0
    fake_resume(run_dir)
    assert any(e["type"] == "run_finished" for e in read_events(run_dir / "events.jsonl"))


# -- minor: a kill before the first checkpoint ---------------------------------------------------
def test_a_run_killed_before_its_first_checkpoint_can_be_resumed(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite")
    fake_run(cfg, tmp_path / "clean")
    run_dir = tmp_path / "run"
    with pytest.raises(Killed):
        fake_run(cfg, run_dir, [kill_at("generation", 1)])
    assert not list((run_dir / "checkpoints").glob("ckpt-*.json"))
    res = cli.invoke(app, ["run", "--run-dir", str(run_dir)])
    assert res.exit_code == 2 and f"evotrainer resume {run_dir}" in res.output
    fake_resume(run_dir)  # what `run` says: resume continues it (from the start)
    assert comparable_summary(run_dir) == comparable_summary(tmp_path / "clean")


def test_a_run_whose_checkpoints_are_all_damaged_is_not_restarted(tmp_path):
    run_dir = _killed_run(tmp_path)
    for ck in (run_dir / "checkpoints").glob("ckpt-*.json"):
        ck.write_text("{}")
    with pytest.raises(CheckpointError, match="no intact checkpoint"):
        fake_resume(run_dir)


# -- issue 50, cause 4: adapter files are checked before anything is copied ---------------------
def test_an_adapter_that_is_a_link_is_refused_without_reading_its_target(tmp_path):
    """``adapters/X.gguf -> /etc/shadow`` was refused, but the message printed the sha256 of
    the file it pointed to."""
    import hashlib

    from evotrainer.errors import DataError
    from evotrainer.llm.adapter_file import adapter_file_name, verified_copy, verify_adapter

    secret = tmp_path / "shadow"
    secret.write_bytes(b"root:$6$secret-hash:19000:0:99999:7:::\n")
    leaked = hashlib.sha256(secret.read_bytes()).hexdigest()
    adapters = tmp_path / "run" / "adapters"
    adapters.mkdir(parents=True)
    link = adapters / adapter_file_name("ab" * 32)
    link.symlink_to(secret)
    for load in (lambda: verify_adapter(link), lambda: verified_copy(link).__enter__()):
        with pytest.raises(DataError, match="symbolic link") as err:
            load()
        assert leaked not in str(err.value)


def test_an_adapter_is_hashed_before_it_is_copied_and_a_full_disk_is_a_clear_error(
    tmp_path, monkeypatch
):
    """A 1 GB sparse adapter was copied whole into $TMPDIR before its hash was checked, and
    ended in a raw ENOSPC OSError."""
    import errno
    import tempfile

    from evotrainer.errors import DataError
    from evotrainer.llm import adapter_file
    from evotrainer.llm.adapter_file import adapter_file_name, sha256_file, verified_copy

    sparse = tmp_path / adapter_file_name("cd" * 32)
    with open(sparse, "wb") as fh:
        fh.truncate(1 << 30)  # 1 GB of holes: not the adapter its name says
    made: list[str] = []
    real_mkstemp = tempfile.mkstemp
    monkeypatch.setattr(
        adapter_file.tempfile,
        "mkstemp",
        lambda *a, **k: made.append("copy") or real_mkstemp(*a, **k),
    )
    with pytest.raises(DataError, match="expected"), verified_copy(sparse):
        pass
    assert made == []  # refused before any copy was made
    small = tmp_path / "a.gguf"
    small.write_bytes(b"adapter bytes" * 100)
    sha = sha256_file(small)

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(adapter_file, "_write_all", full)
    with pytest.raises(DataError, match="No space left") as err, verified_copy(small, sha):
        pass
    assert "TMPDIR" in str(err.value)
