"""``evotrainer eval -c CONFIG`` and ``eval --run RUN_DIR`` (issue 51): evaluate under the run's
settings (its input cut, not the default's 1,536 tokens), per-meeting rows that carry their own
s_val, and a headline that says how the paired difference is computed."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from evotrainer.cli.app import app

cli = CliRunner()


def _run(tmp_path):
    data = tmp_path / "m.jsonl"
    res = cli.invoke(app, ["generate", "--out", str(data), "-n", "6", "--difficulty", "0.8"])
    assert res.exit_code == 0, res.output
    sets = {
        "inner.population": 4,
        "inner.elites": 2,
        "inner.tasks_per_generation": 2,
        "inner.generations": 1,
        "validation.confirm": 2,
        "task.max_input_tokens": 300,  # the run's cut, far below the default 1536
        "cache.path": str(tmp_path / "c.sqlite"),
    }
    args = ["run", "--model", "fake:minutes", "--run-dir", str(tmp_path / "run")]
    args += ["--data", str(data), *(a for k, v in sets.items() for a in ("--set", f"{k}={v}"))]
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    return data, tmp_path / "run"


def _eval(*args: str) -> tuple[dict, str]:
    res = cli.invoke(app, ["eval", "--prompt", "seed:A", "--prompt", "seed:C", *args])
    assert res.exit_code == 0, res.output
    out = args[args.index("--out") + 1]
    with open(out, encoding="utf-8") as fh:
        return json.load(fh), res.output


def test_eval_under_a_run_uses_the_runs_input_cut(tmp_path):
    data, run_dir = _run(tmp_path)
    doc, output = _eval("--run", str(run_dir), "--out", str(tmp_path / "run.json"))
    assert doc["truncation"] == "head_tail at 300 tokens", doc["truncation"]
    assert "truncation head_tail at 300 tokens" in output
    assert doc["data"] == str(data.resolve())  # --data left out: the run's validation data
    default, _ = _eval(
        "--data", str(data), "--model", "fake:minutes", "--out", str(tmp_path / "d.json")
    )
    assert default["truncation"] == "head_tail at 1536 tokens"  # without --run: the default cut
    config, _ = _eval(
        "-c", str(run_dir / "config.yaml"), "--data", str(data), "--out", str(tmp_path / "c.json")
    )
    assert config["truncation"] == "head_tail at 300 tokens"


def test_eval_rows_carry_s_val_and_the_difference_subtracts(tmp_path):
    data, run_dir = _run(tmp_path)
    doc, output = _eval("--run", str(run_dir), "--out", str(tmp_path / "o.json"))
    flat = " ".join(output.split())  # the console wraps at its width
    assert "mean/inst." in flat and "vs #1: the mean over the instances" in flat
    assert "vs_first" in doc["how"]
    first, second = doc["policies"]
    for p in (first, second):
        rows = p["per_meeting"]
        assert rows and all(isinstance(r["s_val"], float) for r in rows)
        mean = sum(r["s_val"] for r in rows) / len(rows)
        assert abs(mean - p["s_val_instance_mean"]) < 1e-9
    diff = second["vs_first"]["mean"]
    assert abs(diff - (second["s_val_instance_mean"] - first["s_val_instance_mean"])) < 1e-9


def test_eval_refuses_a_config_and_a_run_together(tmp_path):
    res = cli.invoke(app, ["eval", "--prompt", "seed:A", "-c", "x.yaml", "--run", str(tmp_path)])
    assert res.exit_code == 2 and "not both" in res.output
