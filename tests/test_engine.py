"""The co-evolution engine with fakes: config errors, R3 gaming, rollback, determinism."""

from __future__ import annotations

import json

import pytest

from evotrainer.coevolution import CoEvolution
from evotrainer.config import (
    OuterConfig,
    RunConfig,
    config_from_dict,
    load_config,
    resolve_paths,
)
from evotrainer.errors import ConfigError
from evotrainer.harness.genes import default_bounds
from evotrainer.harness.genome import HarnessBounds, HarnessGenome, normalise
from evotrainer.loops.outer import HarnessOptimizer
from evotrainer.loops.rng import stream
from evotrainer.loops.weakness import WeaknessReport
from evotrainer.policy.archive import ArchiveEntry
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.meetings.task import HINTS
from evotrainer.types import GeneSpec
from tests.fake_meetings import HACK, RecordingMeetingTask, family_llm


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"inner": {"populaton": 5}}, "inner.populaton: unknown key"),
        ({"harness": {"weights": {"completeness": -0.1, "format": 1}}}, "harness.weights"),
        ({"harness": {"difficulty": 1.5}}, "harness.difficulty"),
        ({"inner": {"population": 4, "elites": 4}}, "elites (4) must be smaller"),
        ({"model": {"max_tokens": "many"}}, "model.max_tokens"),
        ({"bogus": 1}, "bogus: unknown key"),
    ],
)
def test_invalid_config_names_the_key(data, key):
    with pytest.raises(ConfigError) as exc:
        config_from_dict(data)
    assert key in str(exc.value)


def test_config_yaml_roundtrip_and_overrides(tmp_path):
    cfg = load_config(None, ["inner.population=7", "harness.weights.faithfulness=0.1", "seed=3"])
    assert cfg.inner.population == 7 and cfg.seed == 3
    assert cfg.harness.weights["faithfulness"] == 0.1
    path = tmp_path / "c.yaml"
    path.write_text(cfg.to_yaml())
    # relative paths in a config file mean the file's folder (resolve_paths)
    assert load_config(path) == config_from_dict(
        resolve_paths(cfg.model_dump(mode="json"), tmp_path.resolve())
    )


def test_spec_defaults():
    cfg = RunConfig()
    assert (cfg.inner.population, cfg.inner.elites, cfg.inner.tasks_per_generation) == (10, 4, 20)
    assert (cfg.inner.generations, cfg.outer.every, cfg.harness.difficulty) == (20, 5, 0.3)
    spec = {"completeness": 0.5, "format": 0.2, "action_count": 0.3}
    assert {k: cfg.harness.weights[k] for k in spec} == spec
    # on real training meetings the reference-based components join (synthetic: SPEC's three),
    # and the non-repetition component counts loops on every meeting (docs/readability.md)
    assert set(cfg.harness.weights) - set(spec) == {
        "ref_rougeL",
        "ref_action_item_f1",
        "non_repetition",
    }


def test_unknown_reward_component_is_a_config_error():
    cfg = config_from_dict(
        {"harness": {"weights": {"completness": 1.0}}, "cache": {"enabled": False}}
    )
    task = RecordingMeetingTask()
    with pytest.raises(ConfigError, match="completness"):
        CoEvolution(cfg, task=task, llm=family_llm(task))


def test_bounds_hold_for_every_variant():
    b = HarnessBounds(0.5, {"difficulty": GeneSpec("difficulty", 0.3, 0.2, 0.6)})
    h = HarnessGenome({"a": 10, "b": 0.1, "c": 0.1}, {"difficulty": 0.9}).bounded(b)
    assert h.difficulty == 0.6 and max(h.weights.values()) <= 0.5 + 1e-6
    assert abs(sum(h.weights.values()) - 1) < 1e-6
    assert normalise({"a": 1, "b": 3}) == {"a": 0.25, "b": 0.75}


def _hopt(**kw):
    cfg = OuterConfig(**kw)
    base = HarnessGenome(
        {"completeness": 0.5, "format": 0.2, "action_count": 0.3}, {"difficulty": 0.3}
    )
    space = ("action_count", "completeness", "format", "owner_accuracy")
    return HarnessOptimizer(cfg, base, default_bounds(), stream(0, "t"), space, hints=HINTS)


def test_rollback_triggers_on_falling_s_val():
    hopt = _hopt(rollback_patience=2)
    good = PolicyGenome.from_text("Write minutes with owners for every action item.")
    hopt.archive.add(ArchiveEntry(good, hopt.current, 0.50, 0, 0))
    assert hopt.observe(0.50) is None
    # the harness drifts, s_val falls twice in a row
    hopt.current = HarnessGenome(
        {"action_count": 0.9, "format": 0.1}, {"difficulty": 0.5}, operator="gaussian"
    )
    assert hopt.observe(0.40) is None
    entry = hopt.observe(0.30)
    assert entry is not None and entry.policy.id == good.id
    assert hopt.current.operator == "rollback"
    assert hopt.current.weights == normalise(entry.harness.weights)
    assert hopt.velocity == {}


def test_rollback_on_oscillation():
    hopt = _hopt(rollback_patience=5)
    p = PolicyGenome.from_text("Write minutes with a title and bullet points please.")
    hopt.archive.add(ArchiveEntry(p, hopt.current, 0.6, 0, 0))
    results = [hopt.observe(s) for s in (0.30, 0.40, 0.30, 0.40, 0.30)]
    assert results[:-1] == [None] * 4 and results[-1] is not None


def test_steered_variant_moves_weight_off_a_gamed_component():
    hopt = _hopt()
    report = WeaknessReport(
        s_val=0.05,
        s_val_by_length={"long": 0.05},
        train_reward=0.7,
        train_components={"action_count": 1.0, "completeness": 0.1, "format": 1.0},
        validation={"rougeL": 0.1, "action_item_f1": 0.0},
        hints=HINTS,
    )
    variants = hopt.ask(report)
    steer = [v for v in variants if v.operator == "steer"][0]
    assert steer.weights["action_count"] < hopt.current.weights["action_count"]
    assert steer.weights.get("owner_accuracy", 0) > 0
    assert variants[0].id == hopt.current.id  # the incumbent is trialled too


def _gaming_config(tmp_path, **over):
    data = {
        "seed": 1,
        "cache": {"path": str(tmp_path / "cache.sqlite")},
        "inner": {
            "population": 6,
            "elites": 3,
            "tasks_per_generation": 4,
            "generations": 24,
            "seed_prompts": [
                f"Write the minutes and list {HACK} action items.",
                f"Summarise briefly, then give {HACK} follow-ups as Owner: task.",
                f"Use bullet points and add {HACK} action items at the end.",
                "Write minutes with the topics, the decisions and the key action item.",
            ],
        },
        "outer": {"every": 3, "variants": 3, "rollback_patience": 3},
        "harness": {
            "difficulty": 0.3,
            "weights": {"completeness": 0.1, "format": 0.1, "action_count": 0.8},
            "real_data": None,
        },
        # the outer loop alone must undo the gaming here; validating every seed at the start
        # would let the honest seed S3 win without it (tested on its own below)
        "validation": {"data": None, "synthetic_size": 6, "validate_seeds": False},
        "report": False,
    }
    for k, v in over.items():
        data[k] = {**data.get(k, {}), **v} if isinstance(v, dict) else v
    return config_from_dict(data)


def test_outer_loop_lowers_a_gamed_weight_and_raises_s_val(tmp_path):
    cfg = _gaming_config(tmp_path)
    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=family_llm(task))
    result = co.run(tmp_path / "run")
    s = result.summary
    doc = json.loads((tmp_path / "run" / "best" / "policy.json").read_text())
    assert doc["id"] == result.best.id and doc["ancestors"][0]["id"] == result.best.id
    assert doc["ancestors"][-1]["lineage"]["operator"] in ("seed", "seed_variation")
    assert co.state.policies[s["initial_policy"]].render().count(HACK) == 1, "the hack won at first"
    assert s["harness"]["weights"].get("action_count", 0.0) < 0.8  # lowered, or switched off
    assert s["final_s_val"] > s["initial_s_val"] + 0.05
    assert HACK not in result.best.render()


def test_seed_best_on_validation_is_returned_when_the_proxy_prefers_a_hack(tmp_path):
    # GA alone, fixed gamed harness, a small call budget: the proxy ranks the hack seeds first,
    # but every seed is validated at the start, so the honest seed S3 (best on validation) is
    # archived, is the initial s_val, and nothing worse is returned.
    cfg = _gaming_config(
        tmp_path,
        inner={"generations": 6},
        outer={"enabled": False},
        validation={"validate_seeds": True},
        budget={"max_calls": 120},
    )
    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=family_llm(task))
    result = co.run(tmp_path / "run")
    s = result.summary
    gen0 = [json.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    seeds = [e for e in gen0 if e["type"] == "validation" and e["role"] == "seed"]
    proxy_best = next(e for e in gen0 if e["type"] == "validation" and e["role"] == "initial")
    assert HACK in co.state.policies[proxy_best["policy_id"]].render(), "the proxy prefers a hack"
    validated = {e["policy_id"] for e in seeds} | {proxy_best["policy_id"]}
    assert {
        p.id for p in co.state.policies.values() if p.name in ("S0", "S1", "S2", "S3")
    } <= validated
    assert co.state.policies[s["initial_policy"]].name == "S3"
    assert s["initial_s_val"] > proxy_best["s_val"]
    assert s["final_s_val"] >= s["initial_s_val"]
    assert HACK not in result.best.render()


def test_budget_cap_still_validates_the_final_best(tmp_path):
    cfg = _gaming_config(tmp_path, inner={"generations": 50}, budget={"max_calls": 150})
    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=family_llm(task))
    s = co.run(tmp_path / "run").summary
    n_val = len(co.components.validation_set.instances)
    assert s["stopped"] == "budget"
    assert s["last_best_s_val"] is not None, "the held-back calls validated the final best"
    assert co.components.budget.backend_calls <= 150
    events = [json.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    finals = [e for e in events if e["type"] == "validation" and e["role"] == "final"]
    assert len(finals) == 1 and n_val == 6
    # without the reserve the cap leaves nothing for it
    cfg2 = _gaming_config(
        tmp_path / "b", inner={"generations": 50}, budget={"max_calls": 150, "reserve_final": False}
    )
    co2 = CoEvolution(cfg2, task=RecordingMeetingTask(), llm=family_llm(task))
    s2 = co2.run(tmp_path / "run2").summary
    assert s2["stopped"] == "budget" and co2.components.budget.backend_calls == 150


def test_same_seed_and_cache_give_an_identical_run(tmp_path):
    def run(dirname):
        cfg = _gaming_config(tmp_path, inner={"generations": 7})
        task = RecordingMeetingTask()
        co = CoEvolution(cfg, task=task, llm=family_llm(task))
        return co.run(tmp_path / dirname).summary, co

    first, _ = run("a")
    second, co2 = run("b")
    assert co2.components.budget.backend_calls == 0, "the warm cache answers everything"
    volatile = {"wall_s", "cpu_s", "runtime"}
    assert {k: v for k, v in first.items() if k not in volatile} == {
        k: v for k, v in second.items() if k not in volatile
    }
    ev_a = [json.loads(x) for x in (tmp_path / "a" / "events.jsonl").read_text().splitlines()]
    ev_b = [json.loads(x) for x in (tmp_path / "b" / "events.jsonl").read_text().splitlines()]
    pick = [(e["type"], e.get("best_policy"), e.get("s_val")) for e in ev_a]
    assert pick == [(e["type"], e.get("best_policy"), e.get("s_val")) for e in ev_b]


def test_docs_config_reference_is_current():
    from pathlib import Path

    from evotrainer.config import reference_markdown

    doc = Path(__file__).resolve().parents[1] / "docs" / "config.md"
    assert doc.read_text() == reference_markdown(), (
        "run: evotrainer config --markdown > docs/config.md"
    )


def test_monitor_suspects_feed_the_steering():
    hopt = _hopt()
    report = WeaknessReport(
        s_val=0.2,
        s_val_by_length={"long": 0.2},
        train_reward=0.5,
        train_components={"action_count": 1.0, "completeness": 0.0, "format": 1.0},
        validation={"rougeL": 0.05, "action_item_f1": 0.33},  # F1 not "low": abstention
        suspects=("action_count",),
        hints=HINTS,
    )
    assert report.gamed(hopt.current.weights) == ["action_count"]
    steer = [v for v in hopt.ask(report) if v.operator == "steer"]
    assert steer and all(v.weights["action_count"] < 0.3 for v in steer)
