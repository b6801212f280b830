"""A teacher model for the LLM-driven operators and named text components (issue 35, item 7).

``operator_model``: mutation, reflection, paraphrase and merge ask another model than the agent
(GEPA's ``reflection_lm``), through the same budget and response cache; unset, the agent model
does it all, as before. A policy's named components (system, examples, template and any the
user adds, e.g. a glossary) are rendered and edited one at a time (``inner.component_choice``).
"""

from __future__ import annotations

import hashlib
import random

import pytest

from evotrainer.config import config_from_dict, load_config
from evotrainer.errors import ConfigError
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.operators.base import OperatorContext
from evotrainer.operators.llm_ops import LLMParaphrase, ReflectiveMutation
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import Lineage
from tests.fake_meetings import RecordingMeetingTask, family_llm

GLOSSARY = "PM: the project manager. ID: the industrial designer. UI: the user interface designer."


def recording(llm: FunctionLLM) -> FunctionLLM:
    """``llm`` that keeps every request's messages in ``llm.seen``."""
    llm.seen = []
    fn = llm.fn

    def answer(messages, params):
        llm.seen.append(list(messages))
        return fn(messages, params)

    llm.fn = answer
    return llm


def teacher() -> FunctionLLM:
    """A teacher whose answers name it, one per prompt."""

    def answer(messages, params):
        k = int(hashlib.sha1(messages[-1].content.encode()).hexdigest(), 16) % 997
        return f"Teacher version {k}: write careful minutes with the decisions and owners."

    return recording(FunctionLLM(answer, model_id="fake:teacher"))


def _cfg(tmp_path, **extra):
    data = {
        "seed": 3,
        "cache": {"path": str(tmp_path / "c.sqlite")},
        "report": False,
        "inner": {
            "population": 4,
            "elites": 2,
            "tasks_per_generation": 2,
            "generations": 3,
            "operators": {"llm_paraphrase": 1.0, "reflective": 1.0, "llm_merge": 1.0},
        },
        "outer": {"enabled": False, "every": 5},
        "harness": {"real_data": None},
        "validation": {"data": None, "synthetic_size": 2, "confirm": 0},
    }
    for key, value in extra.items():
        section, _, sub = key.partition(".")
        if sub:
            data.setdefault(section, {})[sub] = value
        else:
            data[key] = value
    return config_from_dict(data)


# -- configuration ---------------------------------------------------------------------------


def test_operator_model_defaults_to_the_agent_model():
    cfg = load_config(None)
    assert cfg.operator_model.spec is None
    assert cfg.operator_model.as_model(cfg.model) is None


def test_operator_model_spec_shorthand_and_section():
    cfg = config_from_dict({"operator_model": "openai:big-teacher"})
    assert cfg.operator_model.spec == "openai:big-teacher"
    cfg = load_config(
        None,
        [
            "operator_model.spec=openai:teacher",
            "operator_model.base_url=http://127.0.0.1:9/v1",
            "operator_model.concurrency=2",
        ],
    )
    m = cfg.operator_model.as_model(cfg.model)
    assert (m.spec, m.base_url, m.concurrency) == ("openai:teacher", "http://127.0.0.1:9/v1", 2)
    with pytest.raises(ConfigError, match="operator_model.nope"):
        load_config(None, ["operator_model.nope=1"])


def test_component_config_is_checked():
    with pytest.raises(ConfigError, match="system"):
        config_from_dict({"inner": {"seed_components": [{"glossary": GLOSSARY}]}})
    with pytest.raises(ConfigError, match="component name"):
        config_from_dict({"inner": {"seed_components": [{"system": "x", "Bad Name": "y"}]}})
    with pytest.raises(ConfigError, match="system"):
        config_from_dict({"inner": {"add_components": {"system": "x"}}})
    cfg = config_from_dict({"inner": {"component_choice": "round_robin"}})
    assert cfg.inner.component_choice == "round_robin"


# -- the teacher in a run ------------------------------------------------------------------------


def test_teacher_makes_every_operator_call_through_the_same_budget_and_cache(tmp_path):
    from evotrainer.coevolution import CoEvolution

    task = RecordingMeetingTask()
    agent, boss = recording(family_llm(task)), teacher()
    co = CoEvolution(_cfg(tmp_path), task=task, llm=agent, operator_llm=boss)
    result = co.run(tmp_path / "run")
    assert boss.calls > 0, "the teacher was never asked"
    # the agent only ever answered meetings: every operator prompt went to the teacher
    assert all(m[-1].content in task.by_prompt for m in agent.seen)
    assert all(m[-1].content not in task.by_prompt for m in boss.seen)
    b = co.components.budget.snapshot()
    assert b["backend_calls"] == agent.calls + boss.calls  # one budget for both
    assert co.components.operator_stack.cache is co.components.stack.cache  # one response cache
    children = [p for p in co.state.policies.values() if p.lineage.operator in ("llm_paraphrase",)]
    assert any("Teacher version" in p.render() for p in children)
    assert result.summary["operator_model"] == "fake:teacher"
    # the same run again: every teacher answer comes from the cache
    boss2 = teacher()
    task2 = RecordingMeetingTask()
    co2 = CoEvolution(_cfg(tmp_path), task=task2, llm=family_llm(task2), operator_llm=boss2)
    co2.run(tmp_path / "run2")
    assert boss2.calls == 0


def test_without_operator_model_the_agent_model_edits_as_before(tmp_path):
    from evotrainer.coevolution import CoEvolution

    task = RecordingMeetingTask()
    co = CoEvolution(_cfg(tmp_path), task=task, llm=family_llm(task))
    assert (
        co.state.inner.llm is co.components.stack.client
    )  # today's wiring: the agent's own client
    assert co.components.operator_stack is co.components.stack


def test_operator_model_spec_builds_its_own_backend(tmp_path):
    from evotrainer.coevolution import CoEvolution

    task = RecordingMeetingTask()
    co = CoEvolution(
        _cfg(tmp_path, operator_model={"spec": "fake:echo"}), task=task, llm=family_llm(task)
    )
    assert co.components.operator_stack.backend.model_id == "fake:echo"
    assert co.state.inner.llm is co.components.operator_stack.client
    assert co.components.operator_stack.budget is co.components.budget


# -- named components ------------------------------------------------------------------------


def test_an_extra_component_is_rendered_with_its_name():
    p = PolicyGenome({"system": "Write minutes.", "glossary": GLOSSARY})
    text = p.render()
    assert text.startswith("Write minutes.")
    assert "Glossary:\n" + GLOSSARY in text
    own = PolicyGenome({"system": "Write minutes.", "glossary": "Glossary: PM = manager."})
    assert own.render().count("Glossary:") == 1  # a text that names itself keeps its header
    two = PolicyGenome({"system": "S.", "style_guide": "Short lines.", "template": "# T"})
    assert two.render().index("# T") < two.render().index("Style guide:\nShort lines.")


def _ctx(choice: str, generation: int, llm) -> OperatorContext:
    return OperatorContext(
        rng=random.Random(0),
        generation=generation,
        llm=llm,
        feedback={},
        component_choice=choice,
    )


def test_round_robin_edits_each_component_in_turn():
    parent = PolicyGenome(
        {"system": "Write minutes of the meeting.", "glossary": GLOSSARY},
        lineage=Lineage(),
    )
    edited = []
    for g in range(1, 7):
        child = LLMParaphrase().apply([parent], _ctx("round_robin", g, teacher()))
        assert child is not None
        changed = [k for k in parent.components if child.components[k] != parent.components[k]]
        assert len(changed) == 1  # one component at a time
        edited.append(changed[0])
    assert edited[:2] in (["system", "glossary"], ["glossary", "system"])
    assert edited == edited[:2] * 3  # in turn, generation after generation


def test_reflection_rewrites_the_component_whose_turn_it_is():
    parent = PolicyGenome({"system": "Write minutes of the meeting.", "glossary": GLOSSARY})
    boss = teacher()
    seen = set()
    for g in range(1, 5):
        ctx = _ctx("round_robin", g, boss)
        ctx.feedback = {parent.id: "The owners of action items were missing."}
        child = ReflectiveMutation().apply([parent], ctx)
        assert child is not None
        seen |= {k for k in parent.components if child.components[k] != parent.components[k]}
    assert seen == {"system", "glossary"}
    assert any("glossary" in m[-1].content for m in boss.seen)  # the prompt names the part


def test_weighted_choice_also_reaches_an_extra_component():
    parent = PolicyGenome({"system": "Write minutes of the meeting.", "glossary": GLOSSARY})
    op = LLMParaphrase()
    ctx = _ctx("weighted", 1, None)
    picks = {op.pick_component(parent, ctx) for _ in range(200)}
    assert picks == {"system", "glossary"}
    # reflection keeps to the instruction in this mode (and draws nothing: same stream as before)
    ctx = _ctx("weighted", 1, None)
    state = ctx.rng.getstate()
    assert ReflectiveMutation().pick_component(parent, ctx) == "system"
    assert ctx.rng.getstate() == state


def test_seed_components_in_a_run_are_rendered_to_the_agent_and_edited(tmp_path):
    from evotrainer.coevolution import CoEvolution

    task = RecordingMeetingTask()
    agent = recording(family_llm(task))
    cfg = _cfg(
        tmp_path,
        **{
            "inner": {
                "population": 4,
                "elites": 2,
                "tasks_per_generation": 2,
                "generations": 3,
                "operators": {"llm_paraphrase": 1.0, "reflective": 1.0},
                "component_choice": "round_robin",
                "seed_components": [
                    {"system": "Write the minutes of the meeting.", "glossary": GLOSSARY}
                ],
                "add_components": {"notes": "Keep each line short."},
            }
        },
    )
    co = CoEvolution(cfg, task=task, llm=agent, operator_llm=teacher())
    co.run(tmp_path / "run")
    seeds = [p for p in co.state.policies.values() if p.lineage.operator == "seed"]
    assert seeds and all(p.components.get("notes") == "Keep each line short." for p in seeds)
    assert any(p.components.get("glossary") == GLOSSARY for p in seeds)
    # the agent's prompts held the glossary under its header
    assert any("Glossary:\n" + GLOSSARY in m[-1].content for m in agent.seen)
    made = [p for p in co.state.policies.values() if p.lineage.operator != "seed"]
    assert any(p.components.get("glossary") not in (None, GLOSSARY) for p in made), (
        "no child edited the glossary"
    )


# -- resume: the teacher's endpoint must be named, like the agent's ---------------------------


def test_resume_takes_the_teachers_base_url_only_when_named(tmp_path, monkeypatch):
    from evotrainer.run.resume_settings import settings_for_resume

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    cfg = config_from_dict(
        {"operator_model": {"spec": "openai:teacher", "base_url": "http://attacker:1/v1"}}
    )
    where = tmp_path / "run" / "config.yaml"
    with pytest.raises(ConfigError, match="--operator-base-url http://attacker:1/v1"):
        settings_for_resume(cfg, where)
    named = settings_for_resume(cfg, where, operator_base_url="http://mine:2/v1")
    assert named.operator_model.base_url == "http://mine:2/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://attacker:1/v1/")
    assert settings_for_resume(cfg, where).operator_model.base_url == "http://attacker:1/v1"
    # no teacher of its own: nothing to check
    plain = config_from_dict({"operator_model": {"base_url": "http://x:3/v1"}})
    assert settings_for_resume(plain, where).operator_model.base_url is None


def test_the_teachers_key_comes_from_the_variable_it_names(tmp_path, monkeypatch):
    from evotrainer.coevolution import CoEvolution
    from evotrainer.errors import ModelSpecError

    task = RecordingMeetingTask()
    teacher_cfg = {
        "spec": "openai:teacher",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "TEACHER_KEY",
    }
    monkeypatch.delenv("TEACHER_KEY", raising=False)
    with pytest.raises(ModelSpecError, match=r"\$TEACHER_KEY is not set"):
        CoEvolution(_cfg(tmp_path, operator_model=teacher_cfg), task=task, llm=family_llm(task))
    monkeypatch.setenv("TEACHER_KEY", "sk-teacher")
    co = CoEvolution(_cfg(tmp_path, operator_model=teacher_cfg), task=task, llm=family_llm(task))
    assert co.components.operator_stack.backend.api_key == "sk-teacher"  # nothing was sent
    assert co.components.operator_stack.backend.model_id.startswith(
        "openai:teacher@http://127.0.0.1:9"
    )


def test_a_local_teacher_file_in_a_config_file_means_the_files_folder(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "exp.yaml").write_text("operator_model:\n  spec: local:models/teacher.gguf\n")
    assert load_config(proj / "exp.yaml").operator_model.spec == "local:" + str(
        proj / "models" / "teacher.gguf"
    )


def test_a_run_with_a_teacher_resumes_only_with_its_endpoint_named(tmp_path, monkeypatch):
    from evotrainer.coevolution import CoEvolution
    from tests.fake_runs import Killed, kill_at

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    url = "http://127.0.0.1:9/v1"
    cfg = _cfg(tmp_path, operator_model={"spec": "openai:teacher", "base_url": url})
    task = RecordingMeetingTask()
    co = CoEvolution(
        cfg,
        task=task,
        llm=family_llm(task),
        operator_llm=teacher(),
        observers=[kill_at("generation", generation=2)],
    )
    with pytest.raises(Killed):
        co.run(tmp_path / "run")
    with pytest.raises(ConfigError, match="--operator-base-url"):
        CoEvolution.resume(tmp_path / "run", task=task, llm=family_llm(task))
    boss = teacher()
    again, path = CoEvolution.resume(
        tmp_path / "run",
        task=task,
        llm=family_llm(task),
        operator_base_url=url,
        operator_llm=boss,
    )
    again.run(path)
    assert again.state.inner.generation == 3 and again.components.cfg.operator_model.base_url == url


def test_the_resume_command_names_the_operator_base_url_option(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from evotrainer.cli.app import app
    from tests.fake_runs import Killed, fake_run, kill_at, small_config

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    cfg = small_config(
        tmp_path / "c.sqlite",
        operator_model={"spec": "openai:teacher", "base_url": "http://127.0.0.1:9/v1"},
        inner={"operators": {"synonym": 1.0}},  # no operator call: the fake run needs none
    )
    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "run", observers=[kill_at("generation", generation=1)])
    res = CliRunner().invoke(app, ["resume", str(tmp_path / "run")])
    assert res.exit_code == 2
    assert "--operator-base-url http://127.0.0.1:9/v1" in " ".join(res.output.split())
