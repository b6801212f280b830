"""The Python API in the ecosystem's shape (issue 51): ``evotrainer.optimize`` on examples held
in memory with a metric function, the ``Policy`` it returns (called, saved, loaded), progress
through ``logging``, and ``returned_is_seed`` asked of the seeds. The fake ``fake:minutes``
answers; one small run is shared by the tests that read its result."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import evotrainer
from evotrainer.api.policy import Policy
from evotrainer.coevolution import CoEvolution
from evotrainer.config import load_config
from evotrainer.errors import DataError, EvoTrainerError
from evotrainer.evaluation.confirmation import Confirmation
from evotrainer.evaluation.paired import PairedDifference
from evotrainer.tasks.meetings.seeds import seed_policies

FIXTURE = Path(__file__).parent / "fixtures" / "synthetic_meetings.jsonl"
NEW = "Tara: The client approved the design.\nUwe: We start the build on Tuesday, I book devs."


def examples() -> list[dict]:
    """The fixture's meetings as dicts without ids, as a user holds them (source: theirs)."""
    out = []
    for line in FIXTURE.read_text().splitlines():
        record = json.loads(line)
        record.pop("id")
        record.pop("source")
        out.append(record)
    return out


def owners_named(example, answer):
    owners = [a.split(":")[0] for a in example["references"].get("action_items", [])]
    missing = [o for o in owners if o.lower() not in answer.lower()]
    score = 1 - len(missing) / max(1, len(owners))
    return score, ("missing: " + ", ".join(missing)) if missing else ""


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One small run: 4 examples to train on, 4 to validate on (2 held out to confirm)."""
    tmp = tmp_path_factory.mktemp("api-run")
    data = examples()
    train = data + [{**data[0], "transcript": data[0]["transcript"][:6]}]
    val = [*data, {**data[1], "transcript": data[1]["transcript"][:8]}]
    handler = Records()
    logger = logging.getLogger("evotrainer")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        policy = evotrainer.optimize(
            trainset=train,
            valset=val,
            metric=owners_named,
            model="fake:minutes",
            max_calls=120,
            run_dir=tmp / "run",
            cache__path=str(tmp / "llm.sqlite"),
            validation__confirm=2,
            report=False,
        )
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return policy, handler.messages, tmp


def test_optimize_takes_dicts_and_returns_a_policy_you_call(run):
    policy, _, tmp = run
    assert isinstance(policy, evotrainer.Policy)
    s = policy.summary
    assert set(s) >= {"s_val", "seed_s_val", "confirmation", "calls", "returned_is_seed"}
    assert 0.0 <= s["s_val"] <= 1.0 and s["calls"] > 0 and s["confirmation"]["n"] == 2
    assert Path(s["run_dir"]) == (tmp / "run").resolve()
    answer = policy(NEW)
    assert isinstance(answer, str) and "Tara" in answer
    # a mapping of the task's fields works too, and the same input gives the same answer
    assert policy({"transcript": NEW}) == answer


def test_the_metric_is_s_val_and_its_feedback_is_kept(run):
    policy, _, _ = run
    summary = json.loads((policy.run_dir / "summary.json").read_text())
    assert summary["final_aggregates"]["metric"] == pytest.approx(summary["final_s_val"])
    rows = json.loads((policy.run_dir / "best" / "validation.json").read_text())
    assert all(isinstance(r["metric"], float) for r in rows)
    said = [r["feedback"]["metric"] for r in rows if r.get("feedback")]
    assert all(text.startswith("missing: ") for text in said)
    config = (policy.run_dir / "config.yaml").read_text()
    assert "ref_metric" in config  # the metric is a reward component on real training examples


def test_the_run_logs_its_progress_at_info(run):
    _, messages, _ = run
    text = "\n".join(messages)
    for expected in ("run started", "validating the best of it and the seeds", "seed policy"):
        assert expected in text
    assert "generation 1/" in text and "confirmation on 2 held-out examples" in text
    assert "run finished" in text


def test_policy_save_and_load_round_trip(run, tmp_path):
    policy, _, _ = run
    path = policy.save(tmp_path / "saved" / "policy.json")
    loaded = Policy.load(path)
    assert loaded == policy and loaded.genome.id == policy.genome.id
    assert loaded.text == policy.text and loaded.settings == policy.settings
    assert loaded(NEW) == policy(NEW)
    assert Policy.load(loaded.save(tmp_path / "again.json")) == loaded
    assert "base_url" not in json.loads(path.read_text())["settings"]["model"]


def test_a_runs_own_policy_file_loads(run):
    policy, _, _ = run
    for where in (policy.run_dir, policy.run_dir / "best" / "policy.json"):
        loaded = Policy.load(where)
        assert loaded.genome == policy.genome
        assert loaded.summary == policy.summary
        assert loaded.settings["task"] == policy.settings["task"]
        assert loaded.settings["model"]["spec"] == "fake:minutes"


def test_returned_is_seed_says_whether_the_returned_policy_is_a_seed(run):
    policy, _, _ = run
    summary = json.loads((policy.run_dir / "summary.json").read_text())
    seeds = {p.components["system"] for p in seed_policies()}
    is_seed = policy.genome.lineage.operator == "seed" and policy.genome.system in seeds
    assert summary["returned_is_seed"] is is_seed is policy.summary["returned_is_seed"]
    c = summary["confirmation"]
    assert c["returned_is_seed"] is is_seed
    assert c["returned_is_baseline"] is (c["returned"] == c["best_seed"])


def test_returned_is_seed_is_not_returned_is_baseline():
    """The baseline (the best starting policy validated) may be a variation of a seed the
    first generation made: returning it is not returning a seed."""
    diff = PairedDifference(0.0, 0.0, 0.0, 2)
    seeds = frozenset({"pA"})
    c = Confirmation("pv", "pv", 0.5, 0.5, diff, "better_mean", "pv", "", seed_ids=seeds)
    assert c.to_json()["returned_is_seed"] is False
    assert c.to_json()["returned_is_baseline"] is True
    c2 = Confirmation("pw", "pA", 0.5, 0.6, diff, "better_mean", "pA", "", seed_ids=seeds)
    assert c2.to_json()["returned_is_seed"] is True


def test_the_engine_refuses_dicts_by_name(tmp_path):
    cfg = load_config(None, [], {"model.spec": "fake:minutes", "validation.data": None})
    with pytest.raises(DataError, match=r"validation\[0\] is a dict, not an evotrainer.Instance"):
        CoEvolution(cfg, validation=[{"id": "m1", "transcript": []}])


def test_an_empty_or_unreadable_call_is_an_error(run):
    policy, _, _ = run
    with pytest.raises(EvoTrainerError, match="transcript is empty"):
        policy("   ")
    with pytest.raises(DataError, match="give a text or a mapping"):
        policy(42)


def test_compile_a_student_with_the_console_display(tmp_path, capsys):
    """``Optimizer.compile(student)``: the student's text is the seed; ``progress=True`` shows
    the console's display on stderr."""
    student = "Write the minutes of the meeting and name the owner of every task."
    optimizer = evotrainer.Optimizer(
        metric=lambda example, answer: float("Owner" in answer or ":" in answer),
        model="fake:minutes",
        progress=True,
        run_dir=tmp_path / "run",
        inner__generations=1,
        validation__confirm=0,
        report=False,
    )
    policy = optimizer.compile(student, trainset=examples())
    config = (tmp_path / "run" / "config.yaml").read_text()
    assert student in config  # inner.seed_prompts
    assert "EvoTrainer" in capsys.readouterr().err
    assert policy.summary["generations"] == 1 and policy.summary["confirmation"] is None
