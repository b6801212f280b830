"""What a new user meets around a run (issue 51): the files a run writes are readable by group
and others (not mkstemp's 0600), a finished run leaves no ``.lock``, a mistyped config key gets a
"did you mean", and ``doctor`` on a fake model prints no made-up speed."""

from __future__ import annotations

import os
import stat

import pytest
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.config import config_from_dict
from evotrainer.errors import ConfigError
from evotrainer.report.build import build_report
from evotrainer.run.checkpoint import atomic_write, process_umask
from tests.fake_runs import fake_run, small_config

cli = CliRunner()


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_report_and_summary_are_readable_by_group_and_others(tmp_path):
    run_dir = tmp_path / "run"
    fake_run(small_config(tmp_path / "c.sqlite", inner={"generations": 2}), run_dir)
    build_report(run_dir)
    expected = 0o666 & ~process_umask()
    for name in ("summary.json", "report/index.html", "best/policy.json", "config.yaml"):
        assert _mode(run_dir / name) == expected, name
    if not process_umask() & 0o044:  # the usual umask (022): readable by group and others
        assert _mode(run_dir / "summary.json") & 0o044 == 0o044


def test_atomic_write_honours_the_umask(tmp_path):
    path = tmp_path / "f.txt"
    atomic_write(path, "x")
    assert _mode(path) == 0o666 & ~process_umask()


def test_a_finished_run_leaves_no_lock(tmp_path):
    run_dir = tmp_path / "run"
    fake_run(small_config(tmp_path / "c.sqlite", inner={"generations": 2}), run_dir)
    assert (run_dir / "summary.json").is_file()
    assert not (run_dir / ".lock").exists()


def test_a_lock_released_while_another_waits_is_taken_again(tmp_path):
    """The holder removes .lock when it lets go; a process that locked the removed file finds
    that it is not the one at .lock and takes the new one."""
    from evotrainer.run.lock import RunLock

    a, b = RunLock(tmp_path), RunLock(tmp_path)
    a.acquire()
    assert (tmp_path / ".lock").read_text().strip() == str(os.getpid())
    a.release()
    assert not (tmp_path / ".lock").exists()
    b.acquire()
    assert (tmp_path / ".lock").exists()
    b.release()


@pytest.mark.parametrize(
    ("data", "hint"),
    [
        ({"inner": {"generation": 3}}, "did you mean inner.generations?"),
        ({"inne": {}}, "did you mean inner?"),
        ({"inner": {"max_calls": 3}}, "did you mean budget.max_calls?"),
        ({"task": {"max_input_token": 5}}, "did you mean task.max_input_tokens?"),
    ],
)
def test_a_mistyped_key_gets_a_suggestion(data, hint):
    with pytest.raises(ConfigError, match="unknown key") as exc:
        config_from_dict(data)
    assert hint in str(exc.value)


def test_a_mistyped_key_on_the_command_line_gets_a_suggestion(tmp_path):
    res = cli.invoke(
        app,
        ["run", "--model", "fake:minutes", "--set", "inner.generation=2",
         "--run-dir", str(tmp_path / "run")],
    )  # fmt: skip
    assert res.exit_code == 2
    assert "did you mean inner.generations?" in res.output


def test_doctor_on_a_fake_model_prints_no_nan():
    res = cli.invoke(app, ["doctor", "--model", "fake:minutes"])
    assert res.exit_code == 0, res.output
    assert "nan" not in res.output.lower()
    assert "healthy" in res.output
