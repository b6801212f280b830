"""The dialogue task in the engine (issue 48): a user model counts against the run's budget and
cache, real training goals never come from a validation dialogue, bad files are
named, and a run and an eval work end to end on the fake clerk. No data or model needed."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from evotrainer import CoEvolution, config_from_dict
from evotrainer.config import CacheConfig
from evotrainer.errors import BudgetExceeded, DataError, LLMError
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.from_config import bind_environment
from evotrainer.evaluation.runner import SerialRunner
from evotrainer.harness.training_set import load_real_pool
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.budget import Budget
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.llm.spec import build_stack
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.dialogue.clerk import reference_clerk, scripted_customer
from evotrainer.tasks.dialogue.generator import DialogueGenerator
from evotrainer.tasks.dialogue.invented_db import invented_database
from evotrainer.tasks.dialogue.llm_user import LLMUser
from evotrainer.tasks.dialogue.task import DialogueTask

DB = invented_database()
POLICY = PolicyGenome.from_text("Answer from the rows.", name="A")


# -- an LLM-played customer counts against the budget and the cache -------------------------
def _run_customers(task: DialogueTask, cache: Path, max_calls: int | None = None):
    budget = Budget(max_calls=max_calls)
    stack = build_stack(reference_clerk(), CacheConfig(enabled=True, path=str(cache)), budget)
    customer = scripted_customer()
    cfg = config_from_dict({"task": {"name": "dialogue", "user_model": "fake:customer"}})
    side = bind_environment(cfg, task, stack, client=customer)
    assert side is not None and side.budget is budget
    ev = Evaluator(task, stack.client, SamplingParams(), SerialRunner())
    inst = DialogueGenerator(DB).sample(2, 0.3, random.Random(0), {"cooperative": 1.0})
    records = ev.evaluate([POLICY], inst)
    clerk_calls = sum(r.rollout.n_turns for r in records.values())
    return budget, customer, clerk_calls, records


def test_the_user_models_calls_count_against_the_same_budget_and_cache(tmp_path):
    task = DialogueTask(DB, max_turns=6, user_model="fake:customer")
    budget, customer, clerk_calls, records = _run_customers(task, tmp_path / "c.sqlite")
    assert customer.calls >= 2
    assert budget.backend_calls == clerk_calls + customer.calls
    assert all(r.vector["success"] == 1.0 for r in records.values())  # voiced, same decisions
    turns = next(iter(records.values())).rollout.turns
    assert turns and all(not t.observation.startswith("Customer:") for t in turns)
    again, customer2, _, _ = _run_customers(
        DialogueTask(DB, 6, user_model="fake:customer"), tmp_path / "c.sqlite"
    )
    assert customer2.calls == 0 and again.backend_calls == 0  # the rerun: all from the cache
    with pytest.raises(BudgetExceeded):  # a cap the customer's calls reach stops the episode
        _run_customers(DialogueTask(DB, 6, user_model="fake:customer"), tmp_path / "d.sqlite", 3)


def test_the_engine_builds_the_named_user_model_on_the_agents_budget():
    task = DialogueTask(DB, user_model="fake:customer")
    cfg = config_from_dict({"task": {"name": "dialogue", "user_model": "fake:customer"}})
    stack = build_stack(reference_clerk(), CacheConfig(enabled=False), Budget())
    side = bind_environment(cfg, task, stack)
    assert side is not None and side.backend.model_id == "fake:customer"
    assert task.user_client is side.client and side.budget is stack.budget
    assert bind_environment(cfg, DialogueTask(DB), stack) is None  # no user model: nothing


def test_a_failed_user_model_call_falls_back_to_the_agendas_words():
    def broken(messages, params):
        raise LLMError("server down")

    inst = DialogueGenerator(DB).sample(1, 0.3, random.Random(0))[0]
    assert (
        LLMUser(FunctionLLM(broken)).say(inst.payload, [], "I need a hotel.") == "I need a hotel."
    )


# -- real goals from MultiWOZ-shaped files ------------------------------------------------
def multiwoz_file(path: Path, n: int = 3) -> Path:
    """``n`` tiny dialogues in MultiWOZ's format, on the invented database: the customer asks
    for a restaurant, the clerk names one, the customer asks for its phone and gets it."""
    data = {}
    for i in range(n):
        row = DB.rows["restaurant"][i]
        semi = {"food": row["food"], "area": row["area"], "pricerange": "", "name": ""}
        meta = {"restaurant": {"semi": semi, "book": {"booked": []}}}
        log = [
            {"text": f"I want {row['food']} food in the {row['area']} .", "dialog_act": {"Restaurant-Inform": [["Food", row["food"]]]}, "metadata": {}},
            {"text": f"Try {row['name']} .", "dialog_act": {"Restaurant-Recommend": [["Name", row["name"]]]}, "metadata": meta},
            {"text": "What is the phone number ?", "dialog_act": {"Restaurant-Request": [["Phone", "?"]]}, "metadata": {}},
            {"text": f"It is {row['phone']} .", "dialog_act": {"Restaurant-Inform": [["Phone", row["phone"]]]}, "metadata": meta},
        ]  # fmt: skip
        goal = {
            "restaurant": {"info": {"food": row["food"], "area": row["area"]}, "reqt": ["phone"]}
        }
        data[f"D{i}"] = {"goal": goal, "log": log}
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    return path


def test_items_validate_goals_train_and_no_goal_comes_from_a_validation_dialogue(tmp_path):
    path = multiwoz_file(tmp_path / "val.json.gz")
    task = DialogueTask(DB)
    items = task.load(path)
    assert [i.id for i in items] == ["D0:2", "D1:2", "D2:2"]
    assert items[0].payload.requested == ("phone",) and items[0].payload.focus
    assert task.reference_text(items[0]).startswith("It is")
    pool = load_real_pool(task, str(path), {"D1:2"}, task.input_text)
    assert sorted(i.payload.dialogue_id for i in pool.instances) == ["D0", "D2"]
    assert all(i.real for i in pool.instances)
    goals = DialogueTask(DB, validate_on="goals").load(path)
    assert {i.kind for i in goals} == {"cooperative"} and len(goals) == 3


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (b"not json", "not a MultiWOZ JSON file"),
        (json.dumps({"D9": {"goal": {}}}).encode(), "dialogue 'D9' has no goal object or no log"),
        (
            json.dumps({"D8": {"goal": {"hotel": 3}, "log": []}}).encode(),
            "dialogue 'D8': goal.hotel",
        ),
    ],
)
def test_a_bad_file_is_named_with_the_dialogue(tmp_path, content, named):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    task = DialogueTask(DB)
    with pytest.raises(DataError, match=named) as err:
        (task.load_training(path, ()) if b"D8" in content else task.load(path))
    assert str(path) in str(err.value)


# -- end to end on the fake clerk ------------------------------------------------------------
def test_a_run_and_an_eval_work_end_to_end_on_the_fake_clerk(tmp_path, capsys):
    cfg = config_from_dict(
        {
            "task": {"name": "dialogue", "max_turns": 6},
            "model": {"spec": "fake:clerk"},
            "inner": {"population": 4, "elites": 2, "tasks_per_generation": 3, "generations": 2},
            "outer": {"every": 1, "variants": 2},
            "harness": {"real_data": str(multiwoz_file(tmp_path / "train.json.gz", 6))},
            "validation": {"data": None, "synthetic_size": 8, "confirm": 2},
            "cache": {"enabled": False},
            "report": False,
        }
    )
    result = CoEvolution(cfg).run(tmp_path / "run")
    assert result.best_s_val >= 0.9  # the reference clerk answers the held-out items exactly
    from typer.testing import CliRunner

    from evotrainer.cli.app import app

    data = multiwoz_file(tmp_path / "eval.json.gz")
    out = tmp_path / "m.json"
    args = ["eval", "--data", str(data), "--task", "dialogue", "--model", "fake:clerk"]
    got = CliRunner().invoke(app, [*args, "--prompt", "seed:A", "--out", str(out)])
    assert got.exit_code == 0, got.output
    doc = json.loads(out.read_text())
    assert doc["request_recall"] == 1.0 and doc["grounded"] == 1.0


def test_a_named_database_folder_must_exist(tmp_path):
    from evotrainer.tasks.registry import build_task

    cfg = config_from_dict({"task": {"name": "dialogue", "db": str(tmp_path / "nowhere")}})
    with pytest.raises(DataError, match="nowhere"):
        build_task(cfg.task)


def test_without_the_default_database_the_invented_one_is_used_and_said(
    tmp_path, monkeypatch, caplog
):
    from evotrainer.tasks.registry import build_task

    monkeypatch.chdir(tmp_path)  # ../shared/data/dialogue/multiwoz/db is not there
    with caplog.at_level("WARNING"):
        task = build_task(config_from_dict({"task": {"name": "dialogue"}}).task)
    assert task.db.source.startswith("invented")
    assert "invented database" in caplog.text
