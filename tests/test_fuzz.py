"""Fuzzing the command line with Hypothesis (issue 15): randomised malformed configs and JSONL
files go through ``evotrainer run`` and ``evotrainer eval``; every one must end in a clear
one-line error and a non-zero exit, never a traceback.

No model is loaded: the model is an OpenAI-compatible endpoint where nothing listens, so a
config or data file that happens to be valid ends at the error-rate guard (every answer fails).
``make fuzz`` runs many more examples (HYPOTHESIS_PROFILE=fuzz)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evotrainer.cli import app
from evotrainer.config import RunConfig
from tests.fake_server import dead_url

settings.register_profile(
    "default",
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

cli = CliRunner()
DEAD = dead_url()
FIXTURE = Path(__file__).parent / "fixtures" / "synthetic_meetings.jsonl"
NO_MODEL = [
    "--model",
    "openai:fuzz",
    "--base-url",
    DEAD,
    "--set",
    "model.max_retries=0",
    "--set",
    "model.timeout_s=0.5",
    "--set",
    "cache.enabled=false",
    "--set",
    "budget.max_error_rate=0.5",
    "--set",
    "budget.error_window=4",
    "--set",
    "report=false",
]

SECTIONS = {
    name: list(f.annotation.model_fields)
    for name, f in RunConfig.model_fields.items()
    if isinstance(f.annotation, type) and hasattr(f.annotation, "model_fields")
}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["(unclosed", "[/b]", "rogueL", "-1", "1e309", ".nan", "~", "{}", "a: b"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=8,
)


@st.composite
def configs(draw) -> dict:
    """Mostly real section/key names with wrong or odd values, sometimes unknown keys."""
    data: dict = {}
    for _ in range(draw(st.integers(1, 4))):
        section = draw(st.sampled_from([*SECTIONS, "seed", "report", "bogus"]))
        if section in SECTIONS:
            key = draw(st.sampled_from([*SECTIONS[section], "typo_key"]))
            data.setdefault(section, {})[key] = draw(values)
        else:
            data[section] = draw(values)
    return data


def _ok(res) -> None:
    """A clear message and a non-zero exit; never a traceback or an unexpected exception."""
    assert res.exit_code != 0, res.output
    assert isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    assert "error" in res.output.lower(), res.output


def _yaml(data: dict) -> str:
    return yaml.safe_dump(data, allow_unicode=True)  # NaN and inf become .nan / .inf


@given(data=configs())
def test_run_with_a_random_config_fails_cleanly(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("fuzz")
    cfg = tmp / "c.yaml"
    cfg.write_text(_yaml(data), encoding="utf-8")
    args = ["run", "-c", str(cfg), "--run-dir", str(tmp / "run"), *NO_MODEL]
    _ok(cli.invoke(app, [*args, "--set", "validation.data=null"]))


@given(raw=st.binary(max_size=300))
def test_run_with_random_config_bytes_fails_cleanly(tmp_path_factory, raw):
    tmp = tmp_path_factory.mktemp("fuzz")
    cfg = tmp / "c.yaml"
    cfg.write_bytes(raw)
    args = ["run", "-c", str(cfg), "--run-dir", str(tmp / "run"), *NO_MODEL]
    _ok(cli.invoke(app, [*args, "--set", "validation.data=null"]))


GOOD = [json.loads(x) for x in FIXTURE.read_text().splitlines()]


@st.composite
def meeting_lines(draw) -> bytes:
    """A JSONL file: real meetings with fields dropped or replaced, random JSON, random bytes."""
    lines = []
    for i in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["mutated", "json", "bytes", "good"]))
        if kind == "bytes":
            lines.append(draw(st.binary(max_size=80)).replace(b"\n", b" "))
            continue
        if kind == "json":
            lines.append(json.dumps(draw(values)).encode())
            continue
        rec = dict(GOOD[i % len(GOOD)], id=f"m{i}")
        if kind == "mutated":
            key = draw(st.sampled_from(["id", "transcript", "references", "meta", "source"]))
            if draw(st.booleans()):
                rec.pop(key, None)
            else:
                rec[key] = draw(values)
        lines.append(json.dumps(rec).encode())
    return b"\n".join(lines) + (b"\n" if lines else b"")


@given(content=meeting_lines())
def test_eval_with_random_meetings_fails_cleanly(tmp_path_factory, content):
    tmp = tmp_path_factory.mktemp("fuzz")
    data = tmp / "m.jsonl"
    data.write_bytes(content)
    _ok(cli.invoke(app, ["eval", "--data", str(data), "--prompt", "seed:A", *NO_MODEL]))


@given(content=meeting_lines())
def test_run_with_random_validation_meetings_fails_cleanly(tmp_path_factory, content):
    tmp = tmp_path_factory.mktemp("fuzz")
    data = tmp / "m.jsonl"
    data.write_bytes(content)
    args = ["run", "--run-dir", str(tmp / "run"), "--val-data", str(data), *NO_MODEL]
    _ok(cli.invoke(app, [*args, "--set", "inner.population=3", "--set", "inner.elites=1"]))
