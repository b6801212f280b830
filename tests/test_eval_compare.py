"""``evotrainer eval`` that compares (issue 35, item 6): with several prompts, each one's paired
difference to the first with a 95% bootstrap interval; s_val always shown; the output fits an
80-column pipe without cut headers; "(* = input truncated)" only when an input was cut. Fakes
only."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.evaluation.paired import paired_difference
from evotrainer.tasks.base import combine_s_val
from evotrainer.tasks.meetings.plugin import DEFAULTS

cli = CliRunner()
PROMPTS = [
    "seed:A",
    "seed:B",
    "Write the minutes: a title, the topics, every decision and the action items as Owner: task.",
]


@pytest.fixture()
def data(tmp_path):
    path = tmp_path / "m.jsonl"
    res = cli.invoke(app, ["generate", "-n", "6", "--difficulty", "0.2", "--out", str(path)])
    assert res.exit_code == 0, res.output
    return path


def _eval(data, prompts, *extra, tmp_path):
    args = ["eval", "--data", str(data), "--model", "fake:minutes"]
    args += ["--set", f"cache.path={tmp_path / 'cache.sqlite'}"]
    for p in prompts:
        args += ["--prompt", p]
    res = cli.invoke(app, [*args, *extra], env={"COLUMNS": "80"}, terminal_width=80)
    assert res.exit_code == 0, res.output
    return res.output


def _fits(output: str) -> None:
    for line in output.splitlines():
        assert len(line) <= 80, line
    assert "…" not in output and "..." not in output, output  # nothing cut


def test_several_prompts_give_paired_differences_with_intervals(data, tmp_path):
    out_file = tmp_path / "metrics.json"
    output = _eval(data, PROMPTS, "--out", str(out_file), tmp_path=tmp_path)
    _fits(output)
    assert "s_val" in output and "95% CI" in output and "vs #1" in output
    doc = json.loads(out_file.read_text())
    weights = DEFAULTS["outer"]["s_val_weights"]
    rows = [
        {r["instance_id"]: combine_s_val(r, weights) for r in p["per_meeting"]}
        for p in doc["policies"]
    ]
    assert doc["policies"][0]["vs_first"] is None
    for k in (1, 2):
        want = paired_difference(rows[k], rows[0])
        got = doc["policies"][k]["vs_first"]
        assert got["mean"] == pytest.approx(want.mean) and got["n"] == 6
        assert got["ci95"] == pytest.approx([want.lo, want.hi])
        assert f"{want.mean:+.3f}" in output
        assert f"[{want.lo:+.3f}, {want.hi:+.3f}]" in output
    for name in ("rouge1", "action_item_precision", "decision_recall", "n_action_items"):
        assert name in output  # every metric's mean, headers whole
    assert "(* = input truncated)" not in output


def test_one_prompt_shows_s_val_and_every_metric(data, tmp_path):
    output = _eval(data, ["seed:C"], tmp_path=tmp_path)
    _fits(output)
    header = next(line for line in output.splitlines() if line.startswith("│ instance"))
    assert "s_val" in header
    for name in ("rougeL", "action_item_f1", "action_item_precision", "n_action_items"):
        assert name in output
    assert "(* = input truncated)" not in output


def test_truncation_is_marked_only_when_it_happened(data, tmp_path):
    output = _eval(
        data,
        ["seed:C"],
        "--set",
        "task.max_input_tokens=64",
        "--set",
        "task.truncation=head_tail",
        tmp_path=tmp_path,
    )
    _fits(output)
    assert "(* = input truncated)" in output and " *" in output
    several = _eval(
        data,
        ["seed:A", "seed:B"],
        "--set",
        "task.max_input_tokens=64",
        "--set",
        "task.truncation=head_tail",
        tmp_path=tmp_path,
    )
    assert "inputs truncated: 6 of 6" in several


def test_one_meeting_gives_no_interval(tmp_path):
    """A paired difference over one meeting has no interval to show (the bootstrap of one value
    is that value): the eval table and the report's confirmation say so instead of a zero-width
    "95% CI"."""
    from types import SimpleNamespace

    from evotrainer.report.html import _confirmation

    path = tmp_path / "one.jsonl"
    res = cli.invoke(app, ["generate", "-n", "1", "--difficulty", "0.2", "--out", str(path)])
    assert res.exit_code == 0, res.output
    output = _eval(path, PROMPTS[:2], tmp_path=tmp_path)
    _fits(output)
    assert "none (n 1)" in output

    diff = {"mean": 0.05, "ci95": [0.05, 0.05], "n": 1}
    conf = {"difference": diff, "winner": "a", "best_seed": "b", "returned": "a", "rule": "r"}
    run = SimpleNamespace(
        summary={"confirmation": conf}, words={"instances": "meetings"}, last=lambda _: None
    )
    assert "no interval from a single one" in _confirmation(run)
    conf["difference"] = {**diff, "ci95": [0.01, 0.09], "n": 6}
    assert "95% bootstrap interval [" in _confirmation(run)
