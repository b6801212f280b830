"""``evotrainer apply`` (issue 51): a saved policy answers new inputs as ``Policy`` does, one
JSON line each; a missing, malformed or unsafe policy file is a clear error. The fake model
``fake:minutes`` answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evotrainer.api.policy import Policy, settings_of
from evotrainer.cli.app import app
from evotrainer.config import load_config
from evotrainer.errors import ConfigError, DataError
from evotrainer.policy.genome import PolicyGenome

FIXTURE = Path(__file__).parent / "fixtures" / "synthetic_meetings.jsonl"
cli = CliRunner()


@pytest.fixture
def saved(tmp_path) -> tuple[Policy, Path, Path]:
    cfg = load_config(None, [], {"model.spec": "fake:minutes", "task.max_input_tokens": 512})
    policy = Policy(
        PolicyGenome.from_text("Write short minutes with every owner."), settings_of(cfg)
    )
    path = policy.save(tmp_path / "policy.json")
    inputs = tmp_path / "inputs.jsonl"
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    rows[1].pop("id")  # made from its content
    rows[2] = {"transcript": "Anna: We ship Friday.\nBen: I write the notes."}
    inputs.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return policy, path, inputs


def test_apply_writes_one_answer_per_input(saved, tmp_path):
    policy, path, inputs = saved
    out = tmp_path / "answers" / "out.jsonl"
    res = cli.invoke(app, ["apply", str(path), "--data", str(inputs), "--out", str(out)])
    assert res.exit_code == 0, res.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines][0] == "synth-launch-01"
    assert all(line["id"].startswith("ex-") for line in lines[1:])
    assert all(set(line) == {"id", "answer"} and line["answer"] for line in lines)
    assert lines[2]["answer"] == policy(
        {"transcript": "Anna: We ship Friday.\nBen: I write the notes."}
    )
    assert "wrote 3 answers" in res.output
    # without --out, the lines go to stdout
    res = cli.invoke(app, ["apply", str(path), "--data", str(inputs)])
    assert res.exit_code == 0 and '"id": "synth-launch-01"' in res.output


def test_apply_errors_name_the_file(saved, tmp_path):
    _, path, inputs = saved
    cases = {
        "missing.json": "policy file not found",
        "bad.json": "not a readable policy JSON file",
        "list.json": "holds an object with 'components'",
        "evil.json": "names a module to import, which runs its code",
    }
    (tmp_path / "bad.json").write_text('{"components": ')
    (tmp_path / "list.json").write_text("[1, 2]")
    doc = json.loads(path.read_text())
    doc["settings"]["task"]["name"] = "evil.py:PLUGIN"
    (tmp_path / "evil.json").write_text(json.dumps(doc))
    for name, message in cases.items():
        res = cli.invoke(app, ["apply", str(tmp_path / name), "--data", str(inputs)])
        assert res.exit_code == 2, res.output
        assert message in " ".join(res.output.split()), res.output
    res = cli.invoke(app, ["apply", str(path), "--data", str(tmp_path / "none.jsonl")])
    assert res.exit_code == 2 and "none.jsonl" in res.output
    bad_inputs = tmp_path / "bad_inputs.jsonl"
    bad_inputs.write_text('{"transcript": []}\n{"transcript": 3}\n')
    res = cli.invoke(app, ["apply", str(path), "--data", str(bad_inputs)])
    assert res.exit_code == 2 and "bad_inputs.jsonl, line 2" in " ".join(res.output.split())


def test_a_policy_file_names_no_endpoint(saved, tmp_path):
    policy, _, _ = saved
    with_url = Policy.load(policy.save(tmp_path / "p.json"), base_url="http://10.0.0.1:8000/v1")
    assert with_url.config.model.base_url == "http://10.0.0.1:8000/v1"
    again = json.loads(with_url.save(tmp_path / "q.json").read_text())
    assert "base_url" not in again["settings"]["model"]
    doc = json.loads((tmp_path / "q.json").read_text())
    doc["settings"]["extra"] = 1
    (tmp_path / "r.json").write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match="settings hold only task, model, seed"):
        Policy.load(tmp_path / "r.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no best/policy.json"):
        Policy.load(tmp_path / "empty")
