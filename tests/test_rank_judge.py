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


def rescore(policy_id, row):
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


def _rank_run(tmp_path, budget: int | None) -> tuple[dict, list[dict]]:
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()
    cfg = config_from_dict(
        {
            "seed": 4,
            "cache": {"path": str(tmp_path / "cache.sqlite")},
            "report": False,
            "budget": {"max_calls": budget},
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
    summary = CoEvolution(cfg, task=task, llm=scripted(task)).run(tmp_path / "run").summary
    lines = (tmp_path / "run" / "events.jsonl").read_text().splitlines()
    return summary, [json.loads(x) for x in lines]


def test_an_outer_step_by_rank_costs_no_call_and_says_why(tmp_path):
    summary, events = _rank_run(tmp_path, None)
    steps = [e for e in events if e["type"] == "outer_step"]
    ranked = [e for e in steps if e.get("selection") == "rank"]
    assert ranked, "enough policies were validated for at least one rank step"
    for e in ranked:
        assert len(e["rank_scores"]) == len(e["variants"]) >= 2
        assert e["ranked_policies"] >= 5 and "validated policies best" in e["reason"]
        assert all(s is None for s in e["s_vals"])
    trial_steps = {e["outer_step"] for e in events if e["type"] == "trial_started"}
    assert not trial_steps & {e["outer_step"] for e in ranked}  # no trial run in a rank step
    from evotrainer.report.build import build_report

    html = build_report(tmp_path / "run").read_text()
    assert "Rank judgement" in html and "rho, base (later)" in html
    picture = summary["rank_picture"]  # each rank decision, judged on policies it never saw
    assert [p["outer_step"] for p in picture] == [e["outer_step"] for e in ranked]
    assert all(p["n_later"] >= 0 and {"chosen_rho", "base_rho"} <= set(p) for p in picture)


def test_a_rank_step_under_a_tight_budget_is_not_skipped_for_trials_it_does_not_run(tmp_path):
    """outer.skip_unaffordable counts a rank step as the incumbent's validation alone: the
    scarce profile's co-evolution cells (300 calls) skipped every outer step when the estimate
    counted trial runs that a rank step never makes."""
    _, events = _rank_run(tmp_path, 150)
    ranked = [e for e in events if e["type"] == "outer_step" and e.get("selection") == "rank"]
    skipped = [e for e in events if e["type"] == "outer_step_skipped"]
    assert ranked, "rank steps ran within the budget"
    n_val = 4  # the selection part: limit 8, 4 of them confirm
    assert all(e["estimate"] > e["calls_left"] for e in skipped)
    assert all(e["estimate"] == n_val for e in skipped if e["generation"] > ranked[0]["generation"])


def test_unseen_correlations_judge_a_decision_on_the_policies_validated_after_it():
    from evotrainer.evaluation.rank_judge import unseen_correlations

    validated = {f"p{i}": result(0.1 * i, rows(0.1 * i, 1 - 0.1 * i)) for i in range(12)}
    decisions = [
        {"step": 1, "validated_before": 5, "chosen": {"weights": {"a": 1.0}}},
        {"step": 2, "validated_before": 9, "chosen": {"weights": {"b": 1.0}}},
        {"step": 3, "chosen": {"weights": {"a": 1.0}}},  # not a rank decision: skipped
    ]
    got = unseen_correlations(validated, decisions, {"b": 1.0}, rescore)
    assert got[0] == {"outer_step": 1, "n_later": 7, "chosen_rho": 1.0, "base_rho": -1.0}
    assert got[1]["n_later"] == 3 and got[1]["chosen_rho"] is None  # too few came later
    assert len(got) == 2


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
    assert co.components.rank_scores.pool_unlabelled
    inst = co.components.validator.instances[0]
    row = {"instance_id": inst.id, "output": "# Minutes\n- a point\n- another", "error": None}
    fb = co.components.evaluator.components["completeness"].score(
        task.unlabelled(inst), row["output"], None
    )
    assert "salient words of the transcript" in fb.feedback
    assert co.components.rank_scores.rescore(row)["completeness"] == pytest.approx(fb.score)


def test_leaving_one_policy_out_of_the_learned_reward():
    from evotrainer.defences.learned_reward import LearnedRewardModel
    from evotrainer.tasks.meetings.features import MINUTES_FEATURES

    model = LearnedRewardModel(min_pairs=12, features=MINUTES_FEATURES)
    for g in range(5):
        for i in range(4):
            score = 0.1 * g + 0.01 * i
            model.add({"completeness": score}, "# Minutes\n- a\n- b", score, group=f"p{g}")
    model.fit()
    held = model.without("p4")
    assert held is not None and held.is_fitted and held is model.without("p4")  # memoised
    top = {"completeness": 0.43}
    assert held.predict(top, "# M\n- a") < model.predict(top, "# M\n- a")  # p4 was the top
    small = LearnedRewardModel(min_pairs=12, features=MINUTES_FEATURES)
    for i in range(13):
        small.add({"completeness": 0.5}, "x", 0.5, group="only" if i < 5 else "other")
    small.fit()
    assert small.without("only") is None  # 8 pairs left: too few to fit


def test_the_learned_reward_can_learn_from_the_selection_answers(tmp_path, monkeypatch):
    from evotrainer.defences.learned import LearnedDefences

    def no_training_rows(self, policies, step):
        raise AssertionError("learned_reward_data: selection never samples the training pool")

    monkeypatch.setattr(LearnedDefences, "training_rows", no_training_rows)
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()
    cfg = config_from_dict(
        {
            "seed": 4,
            "cache": {"path": str(tmp_path / "cache.sqlite")},
            "report": False,
            "inner": {"population": 5, "elites": 2, "tasks_per_generation": 4, "generations": 6},
            "outer": {"every": 1, "variants": 3, "trials": "rank"},
            "harness": {"real_data": str(corpus), "switchable": ["faithfulness"]},
            "defences": {"learned_reward": True, "learned_reward_data": "selection"},
            "validation": {"data": str(val), "limit": 8, "confirm": 4, "race_first": 2},
        }
    )
    co = CoEvolution(cfg, task=task, llm=scripted(task))
    co.run(tmp_path / "run")
    events = [json.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    refits = [e for e in events if e["type"] == "defence_refit"]
    assert refits and refits[-1]["learned"]["n_pairs"] > 0
    validated = {pid for pid, r in co.components.validator.memo.items() if not r.partial}
    answers = sum(len(co.components.validator.memo[pid].per_instance) for pid in validated)
    # every pair is a selection answer of a validated policy (those validated after the last
    # outer step are not in yet)
    assert 0 < len(co.components.learned.model.pairs) <= answers
    assert {g for *_, g in co.components.learned.model.pairs} <= validated
