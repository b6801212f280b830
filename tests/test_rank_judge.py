"""The rank judgement of harness variants (``outer.trials: rank``, issue 32): a variant's score
is how its reward ranks the policies validated so far; no trial run, no LLM call. Fakes only."""

from __future__ import annotations

import json

import pytest

from evotrainer.coevolution import CoEvolution
from evotrainer.config import config_from_dict
from evotrainer.evaluation.rank_judge import MIN_POLICIES, evidence, judge
from evotrainer.tasks.base import Unlabels
from evotrainer.types import ValidationResult
from tests.fake_meetings import RecordingMeetingTask, write_corpus
from tests.test_selection import GOOD, scripted


def result(s_val: float, rows: list[dict], partial: bool = False) -> ValidationResult:
    return ValidationResult(s_val, {}, tuple(rows), len(rows), partial=partial)


def rows(a: float, b: float) -> list[dict]:
    """Two answers whose component scores are ``a`` and ``b`` (the rescore reads them)."""
    return [{"instance_id": "m1", "scores": {"a": a, "b": b}}] * 2


def rescore(row):
    return row["scores"]


def test_the_variant_whose_reward_orders_policies_as_s_val_does_wins():
    # component a rises with s_val, b falls with it
    validated = {f"p{i}": result(0.1 * i, rows(0.1 * i, 1 - 0.1 * i)) for i in range(6)}
    found = evidence(validated, rescore)
    assert found is not None and len(found.policies) == 6
    scores = judge(found, [{"a": 1.0}, {"b": 1.0}, {"a": 0.5, "b": 0.5}])
    assert scores[0] == pytest.approx(1.0) and scores[1] == pytest.approx(-1.0)
    assert scores[2] == 0.0  # a constant reward ranks nothing


def test_too_few_or_partial_results_give_no_judgement():
    few = {f"p{i}": result(0.1 * i, rows(0.1 * i, 0.0)) for i in range(MIN_POLICIES - 1)}
    assert evidence(few, rescore) is None
    raced = dict(few)
    raced["late"] = result(0.9, rows(0.9, 0.0), partial=True)  # raced out: not a full result
    assert evidence(raced, rescore) is None
    flat = {f"p{i}": result(0.2, rows(0.1 * i, 0.0)) for i in range(6)}
    assert evidence(flat, rescore) is None  # no spread in s_val: nothing to rank against


def test_the_meeting_task_gives_an_unlabelled_view(tmp_path):
    task = RecordingMeetingTask()
    assert isinstance(task, Unlabels)
    inst = task.load(write_corpus(tmp_path / "c.jsonl", 1, seed=3))[0]
    bare = task.unlabelled(inst)
    assert task.reference_text(inst) and not task.reference_text(bare)
    assert bare.payload.transcript == inst.payload.transcript and bare.id == inst.id


def test_an_outer_step_by_rank_costs_no_call_and_says_why(tmp_path):
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()
    cfg = config_from_dict(
        {
            "seed": 4,
            "cache": {"path": str(tmp_path / "cache.sqlite")},
            "report": False,
            "inner": {
                "population": 5,
                "elites": 2,
                "tasks_per_generation": 4,
                "generations": 8,
                "seed_prompts": [GOOD, "Summarise the meeting and its decisions.", "One word."],
                "operators": {"template": 3.0, "keyword": 1.0, "synonym": 1.0},
            },
            "outer": {"every": 1, "variants": 4, "trials": "rank"},
            "harness": {"real_data": str(corpus), "real_share": 0.5},
            "validation": {"data": str(val), "limit": 8, "confirm": 4, "race_first": 2},
        }
    )
    CoEvolution(cfg, task=task, llm=scripted(task)).run(tmp_path / "run")
    events = [json.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    steps = [e for e in events if e["type"] == "outer_step"]
    ranked = [e for e in steps if e.get("selection") == "rank"]
    assert ranked, "enough policies were validated for at least one rank step"
    for e in ranked:
        assert len(e["rank_scores"]) == len(e["variants"]) >= 2
        assert e["ranked_policies"] >= 5 and "validated policies best" in e["reason"]
        assert all(s is None for s in e["s_vals"])
    trial_steps = {e["outer_step"] for e in events if e["type"] == "trial_started"}
    assert not trial_steps & {e["outer_step"] for e in ranked}  # no trial run in a rank step


def test_with_an_unlabelled_pool_answers_are_rescored_without_references(tmp_path):
    from benchmarks.scarce import unlabelled as strip

    task = RecordingMeetingTask()
    labelled = task.load(write_corpus(tmp_path / "train.jsonl", 6, seed=5))
    pool = tmp_path / "pool.jsonl"
    with pool.open("w") as fh:
        for inst in labelled:
            bare = task.unlabelled(inst).payload
            assert strip(inst.payload).summary == bare.summary == ()
            fh.write(json.dumps(bare.to_json()) + "\n")
    val = write_corpus(tmp_path / "val.jsonl", 6, seed=6)
    cfg = config_from_dict(
        {
            "report": False,
            "harness": {"real_data": str(pool)},
            "validation": {"data": str(val), "confirm": 0},
            "outer": {"trials": "rank"},
        }
    )
    co = CoEvolution(cfg, task=task, llm=scripted(task))
    assert co._pool_unlabelled
    inst = co.validator.instances[0]
    row = {"instance_id": inst.id, "output": "# Minutes\n- a point\n- another", "error": None}
    fb = co.evaluator.components["completeness"].score(task.unlabelled(inst), row["output"], None)
    assert "salient words of the transcript" in fb.feedback
    assert co._rescore(row)["completeness"] == pytest.approx(fb.score)
