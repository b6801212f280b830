"""Bad inputs from the second round of fault probes (issue 33, the minor items): each is refused
with a message that names the problem and where it is, or handled, never a traceback, a hang or
a misleading message. Fake backends only."""

from __future__ import annotations

import errno
import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.config import config_from_dict, load_config
from evotrainer.errors import ConfigError, DataError, ModelSpecError
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.cache import request_key
from evotrainer.llm.fakes import fake_backend
from evotrainer.loops.cma_es import CMAES
from evotrainer.tasks.meetings.loader import load_meetings
from evotrainer.types import Message

cli = CliRunner()
FIXTURE = Path(__file__).parent / "fixtures" / "synthetic_meetings.jsonl"
SMALL_RUN = {
    "inner.generations": "1",
    "inner.population": "3",
    "inner.elites": "1",
    "inner.tasks_per_generation": "2",
    "outer.every": "1",
    "validation.synthetic_size": "3",
    "report": "false",
    "defences.terminal_data": "null",
}


def _sets(values: dict[str, str]) -> list[str]:
    return [arg for k, v in values.items() for arg in ("--set", f"{k}={v}")]


def _refused(res, code: int = 2) -> str:
    """The output of a command that failed cleanly: exit code 2, a message, no traceback."""
    assert res.exit_code == code, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output
    return res.output.replace("\n", " ")


def _meetings(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    records = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    path = tmp_path / "meetings.jsonl"
    path.write_text("".join(json.dumps(edit(r)) + "\n" for r in records))
    return path


# -- CMA-ES population ---------------------------------------------------------------------------
def test_a_huge_cma_es_population_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="outer.variants"):
        config_from_dict({"outer": {"optimizer": "cma", "variants": 10**13}})
    with pytest.raises(ValueError, match="popsize"):
        CMAES([0.5, 0.5], 0.1, 10**13, seed=0)
    state = CMAES([0.5, 0.5], 0.1, 4, seed=0).state_dict()
    with pytest.raises(ValueError, match="popsize"):  # a checkpoint's: CheckpointError
        CMAES.from_state({**state, "popsize": 1e13})
    args = ["run", "--model", "fake:echo", "--run-dir", str(tmp_path / "run")]
    res = cli.invoke(app, [*args, "--set", "outer.variants=10000000000000"])
    assert "outer.variants" in _refused(res)


# -- meeting files -------------------------------------------------------------------------------
def test_a_5000_digit_id_is_a_data_error_naming_the_line(tmp_path):
    good = FIXTURE.read_text().splitlines()[0]
    record = json.loads(good)
    huge = json.dumps({**record, "id": "HUGE"}).replace('"HUGE"', "7" * 5000)
    data = tmp_path / "m.jsonl"
    data.write_text(good + "\n" + huge + "\n")
    with pytest.raises(DataError, match=r"m\.jsonl, line 2: .*digits"):
        load_meetings(data)
    res = cli.invoke(
        app, ["eval", "--data", str(data), "--prompt", "seed:A", "--model", "fake:echo"]
    )
    assert "line 2" in _refused(res)


def _with_lone_surrogates(record: dict) -> dict:
    for turn in record["transcript"][:1] + record["transcript"][-1:]:
        turn["text"] += " caf\ud800 and \udfff"
    return record


def test_lone_surrogates_in_a_transcript_are_read_as_replacement_characters(tmp_path):
    data = _meetings(tmp_path, _with_lone_surrogates)
    assert "\\ud800" in data.read_text()
    meeting = load_meetings(data)[0]
    text = " ".join(t.text for t in meeting.transcript)
    assert "caf\ufffd and \ufffd" in text
    text.encode("utf-8")  # valid text from here on


def test_the_cache_key_and_the_cache_take_any_string():
    params = SamplingParams()
    odd = request_key("m", [Message("user", "caf\ud800")], params)
    assert odd != request_key("m", [Message("user", "caf\ufffd")], params)
    assert request_key("m", [Message("user", "café")], params) == request_key(
        "m", [Message("user", "café")], params
    )


def test_eval_and_run_on_a_transcript_with_lone_surrogates(tmp_path):
    data = _meetings(tmp_path, _with_lone_surrogates)
    cache = ["--set", f"cache.path={tmp_path / 'c.sqlite'}"]
    res = cli.invoke(
        app,
        ["eval", "--data", str(data), "--prompt", "seed:A", "--model", "fake:echo", *cache],
    )
    assert res.exit_code == 0, res.output
    args = ["run", "--model", "fake:echo", "--val-data", str(data), "--run-dir"]
    res = cli.invoke(app, [*args, str(tmp_path / "run"), *cache, *_sets(SMALL_RUN)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "run" / "summary.json").is_file()


# -- generate --out ------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["a directory", "a full disk", "under a file"])
def test_generate_out_that_cannot_be_written_is_named(tmp_path, target):
    (tmp_path / "f.txt").write_text("x")
    out = {
        "a directory": tmp_path,
        "a full disk": Path("/dev/full"),
        "under a file": tmp_path / "f.txt" / "sub" / "m.jsonl",
    }[target]
    if not out.parent.exists() and target == "a full disk":
        pytest.skip("no /dev/full here")
    res = cli.invoke(app, ["generate", "-n", "2", "--out", str(out)])
    said = _refused(res)
    assert f"--out {out}" in said
    expected = {
        "a directory": "is a directory",
        "a full disk": "No space left",
        "under a file": "Not a directory",
    }
    assert expected[target] in said


def test_generate_out_creates_a_missing_parent_folder(tmp_path):
    out = tmp_path / "new" / "folder" / "m.jsonl"
    res = cli.invoke(app, ["generate", "-n", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert len(load_meetings(out)) == 2


# -- model specs and URLs ------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["-1", "nan", "inf", "-inf", "abc", ""])
def test_a_bad_fake_latency_is_a_model_spec_error(value):
    with pytest.raises(ModelSpecError, match="fake:latency"):
        fake_backend(f"latency={value}")
    res = cli.invoke(app, ["doctor", "--model", f"fake:latency={value}"])
    assert "fake:latency" in _refused(res)


def test_a_good_fake_latency_still_works():
    assert fake_backend("latency=0").latency_s == 0
    assert fake_backend("latency=0.01").latency_s == 0.01


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",
        "http://[::1]:99999/v1",
        "localhost:8000/v1",
        "ftp://example.org/v1",
        "http://",
    ],
)
def test_a_malformed_base_url_is_a_clear_error(url):
    res = cli.invoke(app, ["doctor", "--model", "openai:m", "--base-url", url, "--timeout", "1"])
    said = _refused(res)
    assert "model.base_url" in said and url in said


def test_a_well_formed_base_url_is_accepted():
    from evotrainer.llm.openai_http import OpenAICompatibleLLM

    for url in ("http://127.0.0.1:8000/v1", "https://api.example.org/v1", "http://[::1]:8000/v1"):
        assert OpenAICompatibleLLM("m", base_url=url).base_url == url


# -- file-system errors without a file name -----------------------------------------------------
def test_a_full_disk_without_a_file_name_names_the_run_directory(tmp_path, monkeypatch):
    from evotrainer.run import checkpoint

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")  # as a write() on an open file

    monkeypatch.setattr(checkpoint, "atomic_write", full)
    run_dir = tmp_path / "run"
    res = cli.invoke(
        app,
        ["run", "--model", "fake:echo", "--run-dir", str(run_dir), *_sets(SMALL_RUN)],
    )
    said = _refused(res)
    assert "No space left on device" in said and str(run_dir) in said
    assert "cannot read or write a file:" not in said


# -- YAML ----------------------------------------------------------------------------------------
def _bomb(levels: int = 9) -> str:
    lines = ['  l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]")
    return "model:\n  extra_body:\n  " + "\n  ".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    cfg = tmp_path / "bomb.yaml"
    cfg.write_text(_bomb())
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match=r"bomb\.yaml.*alias"):
        load_config(cfg)
    flow = "{a: &a [x, x, x, x, x, x, x, x], b: &b [*a, *a, *a, *a, *a, *a, *a, *a], "
    flow += "c: &c [*b, *b, *b, *b, *b, *b, *b, *b], d: &d [*c, *c, *c, *c, *c, *c, *c, *c], "
    flow += "e: &e [*d, *d, *d, *d, *d, *d, *d, *d], f: [*e, *e, *e, *e, *e, *e, *e, *e]}"
    with pytest.raises(ConfigError, match=r"--set model\.extra_body.*alias"):
        load_config(None, [f"model.extra_body={flow}"])
    assert time.perf_counter() - t0 < 5
    args = ["run", "-c", str(cfg), "--model", "fake:echo", "--run-dir", str(tmp_path / "run")]
    res = cli.invoke(app, args)
    assert "alias" in _refused(res) and time.perf_counter() - t0 < 10


def test_a_self_referencing_yaml_alias_is_refused(tmp_path):
    cfg = tmp_path / "loop.yaml"
    cfg.write_text("model:\n  extra_body: &x {a: *x}\n")
    with pytest.raises(ConfigError, match=r"loop\.yaml.*refers to itself"):
        load_config(cfg)


def test_ordinary_yaml_anchors_still_work(tmp_path):
    cfg = tmp_path / "anchors.yaml"
    cfg.write_text(
        "model:\n  extra_body: &extra {repeat_penalty: 1.0, top_k: 40}\n"
        "inner:\n  seed_prompts: &seeds [Write the minutes., List the decisions.]\n"
    )
    loaded = load_config(cfg)
    assert loaded.model.extra_body == {"repeat_penalty": 1.0, "top_k": 40}
    assert loaded.inner.seed_prompts == ["Write the minutes.", "List the decisions."]


def test_a_duplicate_yaml_key_is_refused_with_its_line(tmp_path):
    """Issue 50, cause 6: the last of two keys won, silently."""
    cfg = tmp_path / "dup.yaml"
    cfg.write_text("seed: 1\ninner:\n  population: 6\n  elites: 2\n  population: 60\n")
    with pytest.raises(ConfigError, match=r"dup\.yaml.*'population' twice.*line 5"):
        load_config(cfg)
    cfg.write_text("seed: 1\ninner: {population: 6}\nseed: 2\n")
    with pytest.raises(ConfigError, match=r"dup\.yaml.*'seed' twice.*line 3"):
        load_config(cfg)
    with pytest.raises(ConfigError, match=r"--set model\.extra_body.*'a' twice"):
        load_config(None, ["model.extra_body={a: 1, a: 2}"])
    res = cli.invoke(app, ["run", "-c", str(cfg), "--model", "fake:echo"])
    assert "'seed' twice" in _refused(res)


# -- eval --prompt: a file, a seed or policy text ------------------------------------------------
def _eval(tmp_path: Path, *prompts: str):  # type: ignore[no-untyped-def]
    args = ["eval", "--data", str(FIXTURE), "--model", "fake:echo", "--limit", "1"]
    args += ["--set", f"cache.path={tmp_path / 'c.sqlite'}"]
    return cli.invoke(app, args + [a for p in prompts for a in ("--prompt", p)])


@pytest.mark.parametrize("name", ["my prompt.txt", "prompts/best one.md", "missing.txt", "p"])
def test_a_missing_prompt_file_is_refused_even_with_a_space_in_its_name(tmp_path, name):
    said = _refused(_eval(tmp_path, str(tmp_path / name)))
    assert "no such file" in said and name in said


def test_policy_text_longer_than_a_file_name_is_policy_text(tmp_path):
    long_line = "Write the minutes: " + "list each decision and who owns each action, " * 20
    assert len(long_line) > 255  # longer than a file name may be (ENAMETOOLONG)
    lines = "Write the minutes.\nList the decisions.\nEnd with the action items."
    res = _eval(tmp_path, long_line, lines, "x" * 5000)
    assert res.exit_code == 0, res.output


def test_the_prompt_rule(tmp_path):
    from evotrainer.cli.eval import policy_text as _policy_text

    seeds = {"A": "seed text"}
    (tmp_path / "my policy.txt").write_text("Write short minutes.")
    assert _policy_text(str(tmp_path / "my policy.txt"), seeds) == "Write short minutes."
    assert _policy_text("seed:A", seeds) == "seed text"
    assert _policy_text("Write the minutes.", seeds) == "Write the minutes."
    assert _policy_text("Summarise the meeting in markdown", seeds).endswith("markdown")
    for missing in ("notes.md", "my notes.prompt", str(tmp_path / "gone.txt")):
        with pytest.raises(DataError, match="no such file"):
            _policy_text(missing, seeds)
    with pytest.raises(DataError, match="not a file"):
        _policy_text(str(tmp_path), seeds)
    with pytest.raises(DataError, match="empty"):
        _policy_text("   ", seeds)
