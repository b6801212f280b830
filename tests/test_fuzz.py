"""Fuzzing the command line with Hypothesis (issue 15): randomised malformed configs and JSONL
files go through ``evotrainer run`` and ``evotrainer eval``; every one must end in a clear
one-line error and a non-zero exit, never a traceback. A run directory is untrusted input too
(issue 33): damaged and crafted checkpoints and journals through ``resume`` and ``report``,
``--init-from`` archives through ``run``, event logs through ``report``.

No model is loaded: the model is an OpenAI-compatible endpoint where nothing listens, so a
config or data file that happens to be valid ends at the error-rate guard (every answer fails).
``make fuzz`` runs many more examples (HYPOTHESIS_PROFILE=fuzz)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.config import RunConfig
from tests.fake_runs import Killed, fake_resume, fake_run, kill_at, small_config
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
FUZZ = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"

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


# -- run directories (issue 33): checkpoints, --init-from archives, events files ---------------
# A run directory is untrusted input: whatever a checkpoint, an archive or an event log holds,
# resume, report and run --init-from end in a result or a clear message, never a traceback.
DEEP = "[" * 50_000 + "]" * 50_000
odd_numbers = st.sampled_from([float("inf"), float("-inf"), float("nan"), 10**400, -1, 0, 1e308])
fuzz_values = st.one_of(values, odd_numbers)


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory) -> Path:
    """A run killed after its first outer step: checkpoints and journals to damage."""
    base = tmp_path_factory.mktemp("killed")
    cfg = small_config(base / "c.sqlite", inner={"generations": 4})
    with pytest.raises(Killed):
        fake_run(cfg, base / "run", [kill_at("outer_step", 1)])
    return base / "run"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("finished")
    fake_run(small_config(base / "c.sqlite", inner={"generations": 2}), base / "run")
    return base / "run"


def _copy(run: Path, tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("fuzz") / "run"
    shutil.copytree(run, dest)
    return dest


def _replace_at(doc, path: list, value) -> None:
    """Set ``doc`` at ``path`` (keys into dicts, indices into lists) to ``value``."""
    node = doc
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


@st.composite
def places(draw, doc) -> list:
    """A path into ``doc`` (a walk of 1..4 steps through its dicts and lists)."""
    path, node = [], doc
    for _ in range(draw(st.integers(1, 4))):
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node, key=str)))
        elif isinstance(node, list) and node:
            key = draw(st.integers(0, len(node) - 1))
        else:
            break
        path.append(key)
        node = node[key]
    return path


def _newest(run: Path) -> Path:
    return sorted((run / "checkpoints").glob("ckpt-*.json"))[-1]


WRONG_TYPE = "<a value of another type than the one there>"


@st.composite
def checkpoint_damage(draw):
    """What to do to a checkpoint: change a value (checksum recomputed, as an attacker can),
    write random bytes or deep nesting, truncate it, or append random lines to a journal (its
    reference fixed in the checkpoint)."""
    kind = draw(st.sampled_from(["value", "value", "bytes", "deep", "truncate", "journal"]))
    if kind == "value":  # a random value, or one of another type than the one there
        return kind, draw(st.data()), draw(st.one_of(fuzz_values, st.just(WRONG_TYPE)))
    if kind == "bytes":
        return kind, draw(st.binary(max_size=200)), None
    if kind == "truncate":
        return kind, draw(st.floats(0, 1)), None
    if kind == "journal":
        name = draw(st.sampled_from(["policies", "validation_memo", "inner.fitness"]))
        lines = draw(
            st.lists(
                st.one_of(
                    st.builds(
                        lambda k, v: json.dumps({"k": k, "v": v}), st.text(max_size=5), values
                    ),
                    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
                    st.just(DEEP),
                ),
                min_size=1,
                max_size=3,
            )
        )
        return kind, name, lines
    return kind, None, None


def _damage(run: Path, damage) -> None:
    import hashlib

    from evotrainer.run.checkpoint import _digest

    kind, a, b = damage
    ck = _newest(run)
    if kind == "bytes":
        ck.write_bytes(a)
    elif kind == "deep":
        ck.write_text('{"sha256": "x", "state": ' + DEEP + "}")
    elif kind == "truncate":
        text = ck.read_bytes()
        ck.write_bytes(text[: int(len(text) * a)])
    elif kind == "value":
        doc = json.loads(ck.read_text())
        where = a.draw(places(doc["state"]))
        if where:
            _replace_at(
                doc["state"], where, _wrong(_at(doc["state"], where)) if b == WRONG_TYPE else b
            )
            doc["sha256"] = _digest(doc["state"])
            ck.write_text(json.dumps(doc))
    else:
        doc = json.loads(ck.read_text())
        ref = doc["state"]
        for part in a.split("."):
            ref = ref[part]
        journal = run / "checkpoints" / f"{a}.jsonl"
        data = journal.read_bytes()[: ref["bytes"]] + "".join(x + "\n" for x in b).encode(
            "utf-8", "surrogatepass"
        )
        journal.write_bytes(data)
        ref["bytes"], ref["sha256"] = len(data), hashlib.sha256(data).hexdigest()
        doc["sha256"] = _digest(doc["state"])
        ck.write_text(json.dumps(doc))


# each example resumes a run (~3 s): 10 in make test, the fuzz profile's 400 in make fuzz
@settings(max_examples=400 if FUZZ else 10)
@given(damage=checkpoint_damage())
def test_resume_and_report_on_a_random_checkpoint_end_cleanly(killed_run, tmp_path_factory, damage):
    from evotrainer.errors import EvoTrainerError

    run = _copy(killed_run, tmp_path_factory)
    _damage(run, damage)
    res = cli.invoke(app, ["report", str(run)])
    assert res.exit_code == 0 or isinstance(res.exception, SystemExit), repr(res.exception)
    try:
        fake_resume(run)
    except EvoTrainerError:
        return
    assert (run / "summary.json").is_file()


@st.composite
def archives(draw, entry: dict) -> str:
    """front.json: the real best entry with values replaced or keys dropped, random JSON,
    random bytes or deep nesting."""
    kind = draw(st.sampled_from(["entry", "entry", "entry", "json", "bytes", "deep"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200)).decode("latin-1")
    if kind == "deep":
        return DEEP
    if kind == "json":
        return json.dumps({"front": draw(st.lists(fuzz_values, max_size=3))})
    e = json.loads(json.dumps(entry))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(places(e))
        if not where:
            continue
        if draw(st.booleans()):
            _replace_at(e, where, draw(fuzz_values))
        else:
            node = e
            for step in where[:-1]:
                node = node[step]
            node.pop(where[-1])
    return json.dumps({"front": [e]})


@given(data=st.data())
def test_run_from_a_random_init_from_archive_fails_cleanly(finished_run, tmp_path_factory, data):
    src = _copy(finished_run, tmp_path_factory)
    entry = json.loads((src / "front.json").read_text())["front"][0]
    (src / "front.json").write_text(data.draw(archives(entry)), encoding="utf-8")
    new = src.parent / "new"
    res = cli.invoke(app, ["run", "--run-dir", str(new), "--init-from", str(src), *NO_MODEL])
    _ok(res)
    if "--init-from" in res.output:  # refused: before anything was made
        assert not new.exists()


@st.composite
def event_lines(draw, real: list[dict]) -> bytes:
    """An events.jsonl: real events with fields replaced or dropped, random JSON, random bytes
    (invalid UTF-8 too), deep nesting, torn lines."""
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["real", "mutated", "mutated", "json", "bytes", "deep"]))
        if kind == "bytes":
            lines.append(draw(st.binary(max_size=60)).replace(b"\n", b" "))
        elif kind == "deep":
            lines.append(DEEP.encode())
        elif kind == "json":
            lines.append(json.dumps(draw(fuzz_values)).encode())
        else:
            e = json.loads(json.dumps(draw(st.sampled_from(real))))
            if kind == "mutated":
                where = draw(places(e))
                if where:
                    _replace_at(e, where, draw(fuzz_values))
            lines.append(json.dumps(e).encode())
    return b"\n".join(lines) + (b"\n" if lines and draw(st.booleans()) else b"")


@settings(max_examples=400 if FUZZ else 10)
@given(data=st.data())
def test_report_on_a_random_events_file_never_crashes(finished_run, tmp_path_factory, data):
    from evotrainer.run.events import read_events

    run = _copy(finished_run, tmp_path_factory)
    real = read_events(run / "events.jsonl")
    (run / "events.jsonl").write_bytes(data.draw(event_lines(real)))
    assert all(isinstance(e, dict) for e in read_events(run / "events.jsonl"))
    res = cli.invoke(app, ["report", str(run)])
    assert res.exit_code == 0, f"{res.output}\n{res.exception!r}"


# -- server replies (issue 50): whatever an OpenAI-compatible server answers -------------------
# A reply is untrusted input too: a real completion with values replaced or keys dropped, random
# JSON, random bytes, with odd HTTP statuses. eval, run and doctor end in a result or a clear
# message, never a traceback.
STATUSES = st.sampled_from([200] * 6 + [201, 204, 400, 401, 404, 408, 422, 429, 500, 503])


@st.composite
def server_replies(draw) -> tuple[int, bytes]:
    from tests.fake_server import GOOD_REPLY

    kind = draw(st.sampled_from(["mutated", "mutated", "mutated", "json", "bytes"]))
    if kind == "bytes":
        body = draw(st.binary(max_size=120))
    elif kind == "json":
        body = json.dumps(draw(fuzz_values)).encode()
    else:
        reply = json.loads(json.dumps(GOOD_REPLY))
        for _ in range(draw(st.integers(1, 3))):
            where = draw(places(reply))
            if not where:
                continue
            if draw(st.booleans()):
                _replace_at(reply, where, draw(fuzz_values))
            else:
                node = reply
                for step in where[:-1]:
                    node = node[step]
                node.pop(where[-1])
        body = json.dumps(reply).encode()
    return draw(STATUSES), body


@pytest.fixture(scope="module")
def reply_server():
    from tests.fake_server import ReplyServer

    server = ReplyServer()
    yield server
    server.close()


def _clean(res) -> None:
    """A result (exit 0) or a clear message and a non-zero exit; never a traceback."""
    assert res.exit_code == 0 or isinstance(res.exception, SystemExit), repr(res.exception)
    assert "Traceback" not in res.output, res.output
    if res.exit_code != 0:
        assert "error" in res.output.lower() or "unhealthy" in res.output.lower(), res.output


def _served(url: str) -> list[str]:
    return [*NO_MODEL[:2], "--base-url", url, *NO_MODEL[4:]]


@given(reply=server_replies())
def test_eval_and_doctor_on_a_random_server_reply_end_cleanly(reply_server, reply):
    reply_server.reply = reply
    args = ["eval", "--data", str(FIXTURE), "--prompt", "seed:A", "--limit", "2"]
    _clean(cli.invoke(app, [*args, *_served(reply_server.url)]))
    doctor = ["doctor", "--model", "openai:fuzz", "--base-url", reply_server.url, "--timeout", "5"]
    _clean(cli.invoke(app, doctor))


@settings(max_examples=60 if FUZZ else 8)
@given(reply=server_replies())
def test_run_on_a_random_server_reply_ends_cleanly(reply_server, tmp_path_factory, reply):
    reply_server.reply = reply
    tmp = tmp_path_factory.mktemp("fuzz")
    args = ["run", "--run-dir", str(tmp / "run"), *_served(reply_server.url)]
    small = [
        "--set",
        "inner.population=3",
        "--set",
        "inner.elites=1",
        "--set",
        "inner.generations=1",
    ]
    small += ["--set", "inner.tasks_per_generation=2", "--set", "validation.data=null"]
    _clean(cli.invoke(app, [*args, *small, "--set", "outer.enabled=false"]))


def test_a_reply_whose_choices_is_an_object_is_a_clear_error(reply_server):
    """The probe's reply: ``{"choices": {"x": null}, ...}`` ended in ``KeyError: 0`` at
    ``openai_http._read``, a traceback and exit 1."""
    from tests.fake_server import GOOD_REPLY

    reply_server.reply = (200, json.dumps({**GOOD_REPLY, "choices": {"x": None}}).encode())
    args = ["eval", "--data", str(FIXTURE), "--prompt", "seed:A", "--limit", "2"]
    res = cli.invoke(app, [*args, *_served(reply_server.url)])
    _ok(res)
    assert "unparseable answer" in res.output


# -- issue 50, cause 9: the example Hypothesis found, kept as an explicit test -----------------
class _Draws:
    """Stands for ``st.data()`` in a damage: draws the given place."""

    def __init__(self, place: list) -> None:
        self.place = place

    def draw(self, strategy):
        return self.place


def test_a_list_where_the_initial_policy_id_belongs_is_refused(killed_run, tmp_path_factory):
    """The damage ``('value', ..., [None, None, None, None])`` at ``['initial', 0]`` ended in
    ``TypeError: unhashable type: 'list'`` at evaluation/meta_judge.py (rows_of), a traceback.
    Resume and report end cleanly, the resume's message naming the field."""
    from evotrainer.errors import CheckpointError

    run = _copy(killed_run, tmp_path_factory)
    _damage(run, ("value", _Draws(["initial", 0]), [None, None, None, None]))
    res = cli.invoke(app, ["report", str(run)])
    assert res.exit_code == 0 or isinstance(res.exception, SystemExit), repr(res.exception)
    with pytest.raises(CheckpointError, match=r"initial"):
        fake_resume(run)


def _fields(node, path: tuple = ()):
    """Every place in a checkpoint's state: each key of its objects (of a map keyed by ids,
    the first two entries) and the first item of each list."""
    import re

    if path:
        yield path
    if isinstance(node, dict):
        keys = list(node)
        ids = [k for k in keys if re.fullmatch(r"[a-z]?[0-9a-f]{8,}|\d+|[a-z]+-[0-9a-f]{6,}", k)]
        for key in [k for k in keys if k not in ids] + ids[:2]:
            yield from _fields(node[key], (*path, key))
    elif isinstance(node, list) and node:
        yield from _fields(node[0], (*path, 0))


def _wrong(value):
    """A value of another type than ``value``: a list for a text (the fuzz's example), a text
    for a number, an object for a list ..."""
    if isinstance(value, bool | str | dict):
        return [None, None, None, None]
    if isinstance(value, int | float):
        return "x"
    if isinstance(value, list):
        return {"x": None}
    return [None]


def test_a_wrong_type_in_any_field_of_a_checkpoint_is_refused_naming_it(
    killed_run, tmp_path_factory
):
    """Issue 50, cause 9: wrong types in every field of a checkpoint (its journals written into
    it, so that their fields are reached too), one at a time: the check a resume makes first
    of all names the field. One field per part of the state then goes through a real resume:
    refused with a CheckpointError naming the file and the field."""
    from evotrainer.coevolution import CoEvolution
    from evotrainer.engine.checkpoint_schema import check_checkpoint
    from evotrainer.errors import CheckpointError
    from evotrainer.run import checkpoint
    from tests.fake_meetings import RecordingMeetingTask, family_llm

    state, _, _ = checkpoint.load_latest(killed_run)
    full = json.loads(json.dumps(state))
    check_checkpoint(full)  # the intact state passes
    places = list(_fields(full))
    assert len(places) > 200  # every part of the state: inner, outer, memo, monitor ...
    resumed: dict = {}
    for place in places:
        damaged = json.loads(json.dumps(full))
        _replace_at(damaged, list(place), _wrong(_at(full, place)))
        named = "state" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in place)
        with pytest.raises(TypeError) as err:
            check_checkpoint(damaged)
        assert named in str(err.value), (place, str(err.value))
        resumed.setdefault(place[0], (place, damaged, named))  # the first field of each part
    run = _copy(killed_run, tmp_path_factory)
    ckdir = run / "checkpoints"
    for extra in [*ckdir.glob("*.jsonl"), *checkpoint.checkpoint_files(ckdir)[:-1]]:
        extra.unlink()
    newest = checkpoint.checkpoint_files(ckdir)[-1]
    for _place, damaged, named in [*resumed.values(), resumed["initial"]]:
        newest.write_text(json.dumps({"sha256": _digest(damaged), "state": damaged}))
        checkpoint._JOURNALS.clear()
        task = RecordingMeetingTask()
        with pytest.raises(CheckpointError) as err:
            CoEvolution.resume(run, task=task, llm=family_llm(task))
        assert named in str(err.value) and newest.name in str(err.value), str(err.value)


def _at(doc, place):
    for step in place:
        doc = doc[step]
    return doc


def _digest(state) -> str:
    from evotrainer.run.checkpoint import _digest as digest

    return digest(state)
