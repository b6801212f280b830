"""Budget and time up front (issue 35, items 4 and 5): --max-calls, --max-tokens and --timeout on
run and resume; an estimate of the calls before the run starts, the time once the backend's pace
is measured, an ETA in every progress line; and a printed, logged decision when the validation
set is too small to hold meetings out for confirmation. Fakes only."""

from __future__ import annotations

import json
import logging
import re

import pytest
import yaml
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.coevolution import CoEvolution
from evotrainer.config import load_config
from evotrainer.run.estimate import (
    TRAINING,
    VALIDATION,
    Progress,
    estimate_calls,
    format_duration,
)
from tests.fake_meetings import write_corpus

cli = CliRunner()
FAST = {
    "cache.enabled": "false",
    "report": "false",
    "validation.data": "null",
    "harness.real_data": "null",
    "defences.terminal_data": "null",
}


def _sets(drop: tuple[str, ...] = (), **values) -> list[str]:
    merged = {**FAST, **{k.replace("__", "."): v for k, v in values.items()}}
    return [a for k, v in merged.items() if k not in drop for a in ("--set", f"{k}={v}")]


@pytest.mark.parametrize(
    "sets",
    [
        {},  # the defaults: 20 generations x 10 policies x 20 tasks
        {
            "inner.population": 10,
            "inner.elites": 4,
            "inner.tasks_per_generation": 4,
            "inner.generations": 6,
            "outer.every": 3,
            "outer.variants": 1,
            "validation.synthetic_size": 14,
            "validation.confirm": 6,
        },
        {
            "inner.population": 6,
            "inner.elites": 3,
            "inner.tasks_per_generation": 4,
            "inner.generations": 8,
            "outer.every": 4,
            "outer.trials": "rerun",
            "validation.synthetic_size": 20,
            "validation.confirm": 4,
        },
    ],
)
def test_the_estimate_is_close_to_the_calls_a_run_makes(sets):
    overrides = [f"{k}={v}" for k, v in {**FAST, **sets}.items()]
    cfg = load_config(None, overrides, {"model.spec": "fake:minutes"})
    co = CoEvolution(cfg)
    vs = co.components.validation_set
    est = estimate_calls(cfg, len(vs.selection), len(vs.confirmation), len(co.state.inner.seeds))
    calls = co.run(None).summary["llm_calls"]
    assert 0.6 <= est.total / calls <= 1.8, (est.to_json(), calls)


def test_the_estimate_respects_the_cap():
    cfg = load_config(None, ["budget.max_calls=50"])
    est = estimate_calls(cfg, 10, 6, 3)
    assert est.total == 50 and "budget.max_calls=50" in est.describe()
    assert "before its first generation" in est.describe()  # 200 calls for the first population
    roomy = estimate_calls(load_config(None, ["budget.max_calls=1000"]), 10, 6, 3)
    assert "stops it there" in roomy.describe()


def test_eta_from_the_backend_pace_by_kind():
    """Issue 51: only backend calls are timed, apart for training and validation calls."""
    p = Progress(expected_calls=100, kinds={TRAINING: 60, VALIDATION: 40})
    p.switch(TRAINING, 0, 0, now=0.0)
    assert p.eta_s(2, 2, 1.0) is None  # too few backend calls to know the pace
    p.switch(VALIDATION, 10, 10, now=5.0)  # 10 training calls in 5 s: 0.5 s each
    # 4 validation calls in 8 s (2 s each): 50 training calls left at 0.5 s, 36 at 2 s
    assert p.eta_s(14, 14, 13.0) == pytest.approx(50 * 0.5 + 36 * 2.0)
    assert p.seconds_per_call(14, 14, 13.0) == pytest.approx(13.0 / 14)
    warm = Progress(100, {TRAINING: 100})
    warm.switch(TRAINING, 0, 0, 0.0)
    assert warm.eta_s(0, 50, 0.5) is None  # the cache answered 50 at once: no pace yet
    assert warm.eta_s(4, 54, 8.5) == pytest.approx(46 * 8.5 / 4)  # the backend's pace
    resumed = Progress(100, {TRAINING: 100}, backend_at_start=50, answered_at_start=50)
    resumed.switch(TRAINING, 50, 50, 0.0)
    assert resumed.eta_s(60, 60, 10.0) == pytest.approx(40.0)  # this session's pace
    capped = Progress(100, {TRAINING: 100}, cap=20)
    capped.switch(TRAINING, 0, 0, 0.0)
    assert capped.eta_s(10, 10, 10.0) == pytest.approx(10.0)  # 10 calls left under the cap
    assert format_duration(3 * 3600 + 5 * 60) == "3h 05m"
    assert format_duration(750) == "12m 30s" and format_duration(None) == "?"


def test_the_estimate_says_what_a_cap_buys():
    roomy = estimate_calls(load_config(None, ["budget.max_calls=100000"]), 10, 6, 3)
    assert "buys" not in roomy.describe() and roomy.buys() == (20, 3)
    cfg = load_config(None, ["budget.max_calls=1500"])
    est = estimate_calls(cfg, 10, 6, 3)
    gens, steps = est.buys()
    assert 0 < gens < 20 and f"this cap buys about {gens} generations of 20" in est.describe()


def test_the_first_run_the_readme_suggests_evolves():
    """Issue 51: init's config under the README's first command buys at least 2 generations
    and an outer step (on 6 selection and 4 confirmation meetings, as --data's 10 give it),
    in about 10 minutes at make demo's pace on the embedded model."""
    from evotrainer import example_config
    from tests.support import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = re.search(r"^evotrainer run -c evotrainer.yaml --data my.jsonl(.*?)#", readme, re.M)
    assert first, "the README's first run command"
    cap = re.search(r"--max-calls (\d+)", first.group(1))
    sets = [f"budget.max_calls={cap.group(1)}"] if cap else []
    cfg = load_config(example_config("starter"), sets)
    est = estimate_calls(cfg, 6, 4, 3)
    gens, steps = est.buys()
    assert gens >= 2 and steps >= 1, est.describe()
    assert f"{gens} generations of {cfg.inner.generations} and {steps} outer step" in est.describe()
    assert est.embedded_seconds() <= 10 * 60


def test_run_flags_cap_calls_and_tokens_and_print_the_estimate_and_an_eta(tmp_path):
    args = ["run", "--model", "fake:minutes", "--run-dir", str(tmp_path / "run")]
    args += ["--max-calls", "70", "--max-tokens", "900000"]
    args += _sets(
        inner__population=4,
        inner__elites=2,
        inner__tasks_per_generation=3,
        inner__generations=20,
        validation__synthetic_size=6,
        validation__confirm=2,
    )
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stopped"] == "budget" and summary["llm_calls"] <= 70
    recorded = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert recorded["budget"]["max_calls"] == 70 and recorded["budget"]["max_tokens"] == 900000
    out = res.output
    estimate = re.search(r"estimate: about (\d+) LLM calls", out)
    assert estimate and int(estimate.group(1)) <= 70, out
    gen_lines = [line for line in out.splitlines() if line.startswith("gen ")]
    assert gen_lines and all("ETA" in line for line in gen_lines), gen_lines
    assert out.index("estimate: about") < out.index(gen_lines[0])
    assert re.search(r"pace: [\d.]+ s per backend call", out)


def test_timeout_stops_between_generations_and_still_returns_a_validated_policy(tmp_path):
    args = ["run", "--model", "fake:latency=0.01", "--run-dir", str(tmp_path / "run")]
    args += ["--timeout", "1"]
    args += _sets(
        inner__population=4,
        inner__elites=2,
        inner__tasks_per_generation=3,
        inner__generations=500,
        validation__synthetic_size=6,
        validation__confirm=2,
    )
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["stopped"] == "timeout" and 0 < summary["generations"] < 500
    assert summary["best_policy"] and summary["last_best_s_val"] is not None
    assert summary["confirmation"] is not None
    assert "time limit" in res.output


def test_resume_takes_new_caps(tmp_path):
    rd = tmp_path / "run"
    args = ["run", "--model", "fake:minutes", "--run-dir", str(rd), "--max-calls", "40"]
    args += _sets(
        inner__population=4,
        inner__elites=2,
        inner__tasks_per_generation=3,
        inner__generations=8,
        validation__synthetic_size=6,
        validation__confirm=2,
        budget__reserve_final="false",
    )
    # a run stopped by its cap before it finished: killed in effect (no summary), resumable
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    (rd / "summary.json").unlink()
    res = cli.invoke(
        app,
        ["resume", str(rd), "--max-calls", "400", "--max-tokens", "10000000", "--timeout", "600"],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((rd / "summary.json").read_text())
    assert summary["stopped"] == "completed" and summary["generations"] == 8
    recorded = yaml.safe_load((rd / "config.yaml").read_text())
    assert recorded["budget"]["max_calls"] == 400


def test_a_one_meeting_validation_says_why_it_cannot_confirm(tmp_path, caplog):
    data = write_corpus(tmp_path / "one.jsonl", 1, seed=5)
    args = ["run", "--model", "fake:minutes", "--run-dir", str(tmp_path / "run"), "--json"]
    args += ["--val-data", str(data)]
    args += _sets(
        ("validation.data",),
        inner__population=3,
        inner__elites=1,
        inner__tasks_per_generation=2,
        inner__generations=1,
    )
    with caplog.at_level(logging.WARNING, logger="evotrainer"):
        res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["confirmation"] is None
    note = summary["validation"]["confirmation_note"]
    assert "not confirmed" in note and "at least 8" in note and "validation.confirm" in note
    events = [json.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    assert any(e["type"] == "warning" and "not confirmed" in e["message"] for e in events)
    assert any("not confirmed" in r.getMessage() for r in caplog.records)


def test_the_console_prints_the_decision(tmp_path):
    data = write_corpus(tmp_path / "five.jsonl", 5, seed=6)
    args = ["run", "--model", "fake:minutes", "--run-dir", str(tmp_path / "run")]
    args += ["--val-data", str(data)]
    args += _sets(
        ("validation.data",),
        inner__population=3,
        inner__elites=1,
        inner__tasks_per_generation=2,
        inner__generations=1,
    )
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    # 5 meetings: 2 for selection, 3 of the 6 confirmation meetings asked for
    assert "3 of the 6" in res.output and "at least 8" in res.output
    assert "confirmation on 3 held-out meetings" in res.output.replace("\n", " ")


def test_no_note_when_validation_is_large_enough(tmp_path):
    cfg = load_config(
        None,
        [f"{k}={v}" for k, v in FAST.items()] + ["validation.synthetic_size=10"],
        {"model.spec": "fake:echo"},
    )
    co = CoEvolution(cfg)
    assert co.components.validation_set.confirmation_note is None
    assert len(co.components.validation_set.confirmation) == 6
