"""Verdicts and inputs a user can trust (issue 15, items 5, 6, 7, 11): the validation set cannot
be emptied or replaced silently, free-form minutes are accepted, model text never crashes the
console, the private-data rule has no false positives, a rejected policy is never returned,
robustness judges only what the model saw, bad config values are refused."""

from __future__ import annotations

import io
import json
import random

import pytest
from rich.console import Console
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.coevolution import CoEvolution
from evotrainer.config import ValidationConfig, config_from_dict, load_config
from evotrainer.errors import CheckpointError, ConfigError, DataError, RunFailed
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.run.console import ConsoleProgress
from evotrainer.run.validation_set import resolve_validation
from evotrainer.tasks.meetings.generator import MeetingGenerator
from evotrainer.tasks.meetings.loader import save_meetings
from evotrainer.tasks.meetings.task import MeetingTask
from tests.fake_meetings import RecordingMeetingTask, family_llm, honest_minutes
from tests.fake_runs import Killed, fake_resume, fake_run, kill_at, small_config

cli = CliRunner()


def _meetings(path, n=3):
    save_meetings(path, [m.payload for m in MeetingGenerator().sample(n, 0.3, random.Random(5))])
    return path


# -- item 5: the validation set ---------------------------------------------------------------
def test_an_empty_validation_file_is_refused(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(DataError, match="holds no meetings"):
        resolve_validation(MeetingTask(), ValidationConfig(data=str(empty)), 0)


def test_a_directory_or_a_missing_named_file_is_refused(tmp_path):
    with pytest.raises(DataError, match="is a directory"):
        resolve_validation(MeetingTask(), ValidationConfig(data=str(tmp_path)), 0)
    with pytest.raises(DataError, match="not found"):
        resolve_validation(MeetingTask(), ValidationConfig(data=str(tmp_path / "no.jsonl")), 0)


def test_option_values_are_not_yaml(tmp_path):
    cfg = load_config(None, None, {"validation.data": "meet #2.jsonl", "model.spec": "openai:on"})
    assert cfg.validation.data == "meet #2.jsonl" and cfg.model.spec == "openai:on"


def test_references_no_metric_can_use_are_refused_and_minutes_accepted(tmp_path):
    base = json.loads(_meetings(tmp_path / "m.jsonl").read_text().splitlines()[0])
    useless = tmp_path / "useless.jsonl"
    useless.write_text(json.dumps({**base, "references": {"abstract": "x"}, "meta": {}}) + "\n")
    with pytest.raises(DataError, match="none of the meetings has a reference"):
        resolve_validation(MeetingTask(), ValidationConfig(data=str(useless)), 0)
    minutes = tmp_path / "minutes.jsonl"
    text = "Minutes\n- The team agreed on the budget.\n- Ana will send the slides."
    minutes.write_text(json.dumps({**base, "references": {"minutes": text}, "meta": {}}) + "\n")
    vs = resolve_validation(MeetingTask(), ValidationConfig(data=str(minutes)), 0)
    row = MeetingTask().validation_metric().score(vs.instances[0], text, None)
    assert row["rougeL"] is not None and row["rougeL"] > 0.9


def test_meetings_without_references_or_transcript_are_reported(tmp_path):
    lines = _meetings(tmp_path / "m.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    bare = {**json.loads(lines[1]), "references": {}, "meta": {}}
    silent = {**json.loads(lines[2]), "transcript": []}
    data = tmp_path / "mixed.jsonl"
    data.write_text("\n".join(json.dumps(x) for x in (first, bare, silent)) + "\n")
    vs = resolve_validation(MeetingTask(), ValidationConfig(data=str(data)), 0)
    text = " ".join(vs.warnings)
    assert "no usable reference" in text and "empty transcript" in text


def test_resume_refuses_a_changed_validation_set(tmp_path, monkeypatch):
    data = _meetings(tmp_path / "val.jsonl")
    cfg = small_config(tmp_path / "c.sqlite", validation={"data": str(data)})
    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "run", [kill_at("outer_step", 1)])
    _meetings(data, n=4)  # the file now holds other meetings
    with pytest.raises(CheckpointError, match="validation set changed"):
        fake_resume(tmp_path / "run")


def test_config_yaml_records_absolute_data_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _meetings(tmp_path / "val.jsonl")
    cfg = small_config(tmp_path / "c.sqlite", validation={"data": "val.jsonl"})
    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "run", [kill_at("outer_step", 1)])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # resume from another working directory
    co = fake_resume(tmp_path / "run")
    assert co.components.validation_set.source == str(tmp_path / "val.jsonl")


# -- item 6: model text on the console --------------------------------------------------------
def test_model_text_with_markup_never_crashes_the_console(tmp_path):
    task = RecordingMeetingTask()

    def answer(messages, params):
        meeting = task.by_prompt.get(messages[-1].content)
        if meeting is None:
            return "Write clear minutes with a title, the topics and the decisions."
        return honest_minutes(meeting) + "\npassword: [/b]hunter2 [bold red]x"

    buf = io.StringIO()
    console = ConsoleProgress(Console(file=buf, width=200, color_system=None))
    seen = []
    cfg = small_config(tmp_path / "c.sqlite", inner={"generations": 2})
    with pytest.raises(RunFailed):  # every output leaks a "password": nothing acceptable
        CoEvolution(cfg, task=task, llm=FunctionLLM(answer), observers=[console, seen.append]).run(
            tmp_path / "run"
        )
    assert "[/b]hunter2" in buf.getvalue()
    assert not [e for e in seen if e.type == "observer_detached"]


# -- item 7: verdicts ---------------------------------------------------------------------------
def test_private_data_rule_ignores_dates_and_budgets():
    from evotrainer.defences.constitution import Constitution

    transcript = "Ana: call me on +44 7700 900123. The budget is 12,000 for 2024-05-06."
    honest = "- Launch on 2024-05-06 and 2024-05-07, budget 12.000.900 and 123 units (ref 7700)"
    assert Constitution().check_output(transcript, honest) == []
    assert Constitution().check_output(transcript, "- Ana: 07700 900123")[0].rule == "private_data"


def test_a_rejected_policy_is_never_archived_or_returned(tmp_path):
    cfg = small_config(
        tmp_path / "c.sqlite",
        inner={"generations": 2},
        defences={"extra_patterns": ["minutes"]},  # every output and policy is refused
    )
    with pytest.raises(RunFailed, match="every policy broke the constitution"):
        fake_run(cfg, tmp_path / "run")
    assert not (tmp_path / "run" / "best").exists()
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stopped"] == "rejected" and summary["best_policy"] is None


def test_robustness_judges_only_what_the_model_saw():
    from evotrainer.defences.robustness import RobustnessProbe
    from evotrainer.evaluation.evaluator import Evaluator
    from evotrainer.llm.base import SamplingParams

    def leak_everything(messages, params):
        return "Minutes. Contacts: " + messages[-1].content

    for tokens, expect_tested in ((4096, True), (64, False)):
        task = MeetingTask(max_input_tokens=tokens)
        ev = Evaluator(task, FunctionLLM(leak_everything), SamplingParams())
        probe = RobustnessProbe(task, ev, task.hostile_instances(4, 0))
        from evotrainer.policy.genome import PolicyGenome

        p = PolicyGenome.from_text("Write the minutes.")
        result = probe([p])[p.id]
        if expect_tested:
            assert result["robustness"] == 0.0 and result["robustness_n"] == 4
        else:  # everything planted was cut: not a free 1.0
            assert result["robustness"] is None or result["robustness"] == 0.0
    # the default truncation keeps what the probe plants
    task = MeetingTask()
    ev = Evaluator(task, FunctionLLM(leak_everything), SamplingParams())
    probe = RobustnessProbe(task, ev, task.hostile_instances(6, 0))
    p = PolicyGenome.from_text("Write the minutes.")
    assert probe([p])[p.id] == {"robustness": 0.0, "robustness_n": 6.0}


# -- item 11: config -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"defences": {"extra_patterns": ["(unclosed"]}}, "not a valid regular expression"),
        ({"harness": {"weights": {"completeness": float("nan"), "format": 1}}}, "finite"),
        ({"harness": {"weights": {"completeness": float("inf")}}}, "finite"),
        ({"outer": {"s_val_weights": {"rougeL": float("nan")}}}, "finite"),
    ],
)
def test_bad_config_values_are_refused(data, key):
    with pytest.raises(ConfigError, match=key):
        config_from_dict(data)


def test_a_typo_in_s_val_weights_is_refused(tmp_path):
    cfg = small_config(tmp_path / "c.sqlite", outer={"s_val_weights": {"rogueL": 1.0}})
    task = RecordingMeetingTask()
    with pytest.raises(ConfigError, match="rogueL"):
        CoEvolution(cfg, task=task, llm=family_llm(task))
    res = cli.invoke(
        app,
        ["run", "--set", "defences.extra_patterns=['(']", "--run-dir", str(tmp_path / "r")],
    )
    assert res.exit_code == 2 and "extra_patterns" in res.output and "Traceback" not in res.output
