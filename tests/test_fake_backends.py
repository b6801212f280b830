"""The fake backends (issue 35, item 3): documented in the README and in ``--help``, and every
``fake:`` spec a document names is one the command line accepts (``fake:minutes``, which the
benchmarks use, included)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.config import ModelConfig
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.spec import build_backend
from evotrainer.tasks.meetings.task import MeetingTask

REPO = Path(__file__).resolve().parents[1]
cli = CliRunner()
FAKE = re.compile(r"fake:([a-z]+(?:-[a-z]+)*)(=[0-9.]+)?")  # fake:inventing-clerk too
EXAMPLE_VALUE = {"latency": "latency=0"}


def _documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_every_fake_spec_the_documents_name_is_accepted():
    named = {
        m.group(1) + (m.group(2) or "") for p in _documents() for m in FAKE.finditer(p.read_text())
    }
    assert "minutes" in named  # the benchmarks' docs name it
    for name in sorted(named):
        spec = f"fake:{EXAMPLE_VALUE.get(name, name)}"
        backend = build_backend(ModelConfig(spec=spec))
        assert backend.model_id.startswith("fake:"), spec


def test_the_readme_and_help_document_the_fakes():
    readme = (REPO / "README.md").read_text()
    help_text = cli.invoke(app, ["--help"], terminal_width=200).output
    run_help = cli.invoke(app, ["run", "--help"], terminal_width=200).output
    for text in (readme, help_text, run_help):
        for spec in ("fake:echo", "fake:minutes", "fake:latency"):
            assert spec in text, spec


def test_fake_minutes_writes_minutes_that_score():
    task = MeetingTask()
    meeting = task.synthetic_validation(1, 0)[0]
    messages, _ = task.render("Write the minutes.", meeting)
    llm = build_backend(ModelConfig(spec="fake:minutes"))
    answer = llm.complete(messages, SamplingParams(0.0, max_tokens=200)).text
    assert answer.startswith("# Minutes") and "## Action items" in answer
    row = task.validation_metric().score(meeting, answer, task.parse(answer))
    assert row["rougeL"] > 0
    # operator calls (anything that is not the task's prompt) get a rewritten instruction
    from evotrainer.types import Message

    other = llm.complete([Message("user", "Paraphrase: x")], SamplingParams(0.8, 50)).text
    assert other and not other.startswith("# Minutes")


def test_the_benchmarks_fake_is_the_packages():
    pytest.importorskip("benchmarks.common")
    from benchmarks import common as C

    task = MeetingTask()
    meeting = task.synthetic_validation(1, 1)[0]
    messages, _ = task.render("List decisions.", meeting)
    params = SamplingParams(0.0, max_tokens=200)
    ours = build_backend(ModelConfig(spec=C.FAKE_SPEC)).complete(messages, params).text
    assert C.fake_llm().complete(messages, params).text == ours


def test_eval_on_fake_minutes(tmp_path):
    data = tmp_path / "m.jsonl"
    assert cli.invoke(app, ["generate", "-n", "2", "--out", str(data)]).exit_code == 0
    res = cli.invoke(
        app,
        ["eval", "--data", str(data), "--prompt", "seed:A", "--model", "fake:minutes"],
        env={"COLUMNS": "80"},
    )
    assert res.exit_code == 0, res.output
