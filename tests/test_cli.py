"""The command line: errors name the problem and exit 2; generate/eval/doctor/config work."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.tasks.code.loader import load_problems
from evotrainer.tasks.meetings.loader import load_meetings
from tests.support import needs_model, needs_sandbox

runner = CliRunner()


def test_run_with_unknown_key_fails_cleanly(tmp_path):
    res = runner.invoke(app, ["run", "--set", "inner.populaton=3", "--run-dir", str(tmp_path)])
    assert res.exit_code == 2
    assert "inner.populaton: unknown key" in res.output


def test_run_with_bad_yaml_names_the_file(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("inner: [unclosed")
    res = runner.invoke(app, ["run", "-c", str(cfg)])
    assert res.exit_code == 2 and str(cfg) in res.output


def test_resume_of_a_non_run_dir(tmp_path):
    res = runner.invoke(app, ["resume", str(tmp_path)])
    assert res.exit_code == 2 and "not a run directory" in res.output


def test_generate_writes_loadable_meetings(tmp_path):
    out = tmp_path / "m.jsonl"
    res = runner.invoke(app, ["generate", "--difficulty", "0.4", "-n", "5", "--out", str(out)])
    assert res.exit_code == 0, res.output
    meetings = load_meetings(out)
    assert len(meetings) == 5 and all(m.topics and m.action_truth for m in meetings)


@needs_sandbox  # the code task is built with its sandbox, which it refuses to run without
def test_generate_asks_the_task_for_its_data_format(tmp_path):
    """Issue 49: ``generate --task NAME`` writes what the task's generator makes in the task's
    own format (tasks.base.WritesInstances); the code gym's problems read back with their
    tests."""
    out = tmp_path / "new" / "problems.jsonl"
    argv = ["generate", "--task", "code", "-n", "3", "--difficulty", "0.3", "--out", str(out)]
    res = runner.invoke(app, argv)
    assert res.exit_code == 0, res.output
    assert "wrote 3 problems to" in res.output and "(L=0.3)" in res.output
    problems = load_problems(out)
    assert len(problems) == 3 and all(p.payload.hidden for p in problems)


def test_generate_for_a_task_that_cannot_write_instances_names_it(tmp_path):
    out = tmp_path / "d.jsonl"
    res = runner.invoke(app, ["generate", "--task", "dialogue", "-n", "2", "--out", str(out)])
    assert res.exit_code == 2 and not out.exists()
    assert "task 'dialogue' cannot write generated instances" in res.output
    res = runner.invoke(
        app, ["generate", "--task", "code", "--hostile-share", "0.2", "--out", str(out)]
    )
    assert res.exit_code == 2 and "task.hostile_share" in res.output


def test_eval_with_a_malformed_data_line(tmp_path):
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": "x", "transcript": []}\n{not json\n')
    res = runner.invoke(app, ["eval", "--data", str(data), "--prompt", "seed:A"])
    assert res.exit_code == 2
    assert "bad.jsonl" in res.output and "2" in res.output


def test_config_prints_defaults():
    res = runner.invoke(app, ["config"])
    assert res.exit_code == 0 and "population: 10" in res.output


@pytest.mark.slow
@needs_model
def test_doctor_and_eval_on_the_embedded_model(tmp_path):
    res = runner.invoke(app, ["doctor"])
    assert res.exit_code == 0, res.output
    assert "tokens/s" in res.output and "healthy" in res.output
    data = tmp_path / "m.jsonl"
    runner.invoke(app, ["generate", "--difficulty", "0.0", "-n", "1", "--out", str(data)])
    out = tmp_path / "metrics.json"
    res = runner.invoke(
        app,
        [
            "eval",
            "--data",
            str(data),
            "--prompt",
            "seed:B",
            "--prompt",
            "seed:C",
            "--out",
            str(out),
            "--set",
            "model.max_tokens=48",
            "--set",
            "model.n_ctx=2048",
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    for key in ("rouge1", "rouge2", "rougeL", "action_item_f1", "decision_recall"):
        assert key in doc
    assert len(doc["policies"]) == 2 and len(doc["per_meeting"]) == 1
    assert doc["budget"]["backend_calls"] == 2
