"""The meta-objective vector: how each objective is measured, the weighted meta score, Pareto
selection with its tie-break (pymoo), the archive's ranking and front, the config, and a run
that selects on the Pareto front and writes front.json and the report's front. Fakes only."""

from __future__ import annotations

import json

import pytest

from evotrainer.config import MetaConfig, config_from_dict
from evotrainer.errors import ConfigError
from evotrainer.evaluation.objectives import MetaObjective, conciseness, output_diversity
from evotrainer.harness.genome import HarnessGenome
from evotrainer.policy.archive import Archive, ArchiveEntry
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import ValidationResult
from tests.fake_meetings import RecordingMeetingTask
from tests.fake_review import DECISIONS, PLAIN, SUMMARY, styled_llm
from tests.fake_runs import small_config

pymoo = pytest.importorskip("pymoo")


def _result(s_val, robustness=None, concise=(0.5, 1.0), error_row=False):
    rows = [
        {"instance_id": f"m{i}", "rewards": {"conciseness": c}, "error": None}
        for i, c in enumerate(concise)
    ]
    if error_row:
        rows.append({"instance_id": "mx", "rewards": {"conciseness": 1.0}, "error": "HTTP 500"})
    agg = {"rougeL": s_val} | ({"robustness": robustness} if robustness is not None else {})
    return ValidationResult(s_val, agg, tuple(rows), len(rows))


def test_the_vector_measures_what_is_there():
    obj = MetaObjective(MetaConfig(concise_component="conciseness"))
    v = obj.vector(_result(0.3, robustness=0.75), diversity=0.4, human=0.6)
    assert v == pytest.approx(
        {"quality": 0.3, "robustness": 0.75, "diversity": 0.4, "conciseness": 0.75, "human": 0.6}
    )
    bare = obj.vector(_result(0.3))
    assert set(bare) == {"quality", "conciseness"}, "no probe, no population, no ratings"
    assert conciseness(_result(0.3, error_row=True), "conciseness") == pytest.approx(0.5), (
        "a failure counts 0"
    )
    assert output_diversity([["a b", "a b"], ["a b", "c d"]]) == pytest.approx(0.5)
    assert output_diversity([["only one"]]) is None


def test_the_meta_score_renormalises_over_measured_objectives():
    obj = MetaObjective(MetaConfig(objectives={"quality": 1.0, "human": 1.0, "diversity": 0.0}))
    assert obj.score({"quality": 0.4}) == pytest.approx(0.4), "no ratings: s_val as before"
    assert obj.score({"quality": 0.4, "human": 0.8}) == pytest.approx(0.6)
    assert obj.score({"quality": 0.4, "diversity": 1.0}) == pytest.approx(0.4), "weight 0"
    idx, why, front = obj.choose([{"quality": 0.4}, {"quality": 0.5}, {"quality": 0.5}])
    assert idx == 1 and "meta score" in why and front == [], "ties: the earlier variant"


def test_pareto_choice_uses_the_front_and_the_hypervolume_tie_break():
    obj = MetaObjective(
        MetaConfig(selection="pareto", objectives={"quality": 1.0, "diversity": 1.0})
    )
    vectors = [
        {"quality": 0.30, "diversity": 0.50},  # incumbent
        {"quality": 0.28, "diversity": 0.70},  # trades a little quality for much diversity
        {"quality": 0.20, "diversity": 0.40},  # dominated by the incumbent
        {"quality": 0.30, "diversity": 0.50},  # the incumbent's twin
    ]
    idx, why, front = obj.choose(vectors)
    assert front == [0, 1, 3] and 2 not in front
    # exclusive hypervolume from (-0.01, -0.01): incumbent (0.30-0.28)*(0.51) ~ 0.0102, twin 0
    # (its volume is shared), variant 1 0.29*(0.70-0.50) = 0.058
    assert idx == 1 and "hypervolume" in why
    only, why1, front1 = obj.choose(
        [{"quality": 0.3, "diversity": 0.5}, {"quality": 0.2, "diversity": 0.4}]
    )
    assert only == 0 and front1 == [0] and "only non-dominated" in why1
    # identical vectors: no contribution anywhere, the meta score ties too, the earlier wins
    twin, why2, _ = obj.choose([{"quality": 0.3, "diversity": 0.5}] * 2)
    assert twin == 0 and "tied" in why2


def test_pareto_without_pymoo_is_a_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pymoo(name, *args, **kw):
        if name.startswith("pymoo"):
            raise ImportError(name)
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_pymoo)
    with pytest.raises(ConfigError, match=r"evotrainer\[moo\]"):
        MetaObjective(MetaConfig(selection="pareto"))
    MetaObjective(MetaConfig())  # the weighted default needs no pymoo


def test_config_refuses_unknown_objectives_and_bad_weights():
    with pytest.raises(ConfigError, match="unknown objective"):
        config_from_dict({"meta": {"objectives": {"qualty": 1.0}}})
    zero = dict.fromkeys(("quality", "robustness", "diversity", "conciseness", "human"), 0.0)
    with pytest.raises(ConfigError, match="meta.objectives"):
        config_from_dict({"meta": {"objectives": zero}})
    with pytest.raises(ConfigError, match="meta.objectives"):
        config_from_dict({"meta": {"objectives": {"human": -1.0}}})
    # objectives you do not name keep their default weight (--set meta.objectives.human=2)
    cfg = config_from_dict({"meta": {"objectives": {"human": 2.0}}})
    assert cfg.meta.objectives["human"] == 2.0 and cfg.meta.objectives["quality"] == 1.0
    with pytest.raises(ConfigError, match="meta.selection"):
        config_from_dict({"meta": {"selection": "lexicographic"}})


def test_the_archive_ranks_by_meta_score_and_keeps_objectives_through_json():
    h = HarnessGenome({"completeness": 1.0}, {"difficulty": 0.3})
    a = ArchiveEntry(PolicyGenome.from_text("Write minutes."), h, 0.5, 1, 0, {"quality": 0.5})
    b = ArchiveEntry(
        PolicyGenome.from_text("Write short minutes."), h, 0.4, 2, 1, {"quality": 0.4, "human": 0.9}
    )
    archive = Archive([a, b])
    assert archive.best() is a, "without a ranking: s_val"
    obj = MetaObjective(MetaConfig(objectives={"quality": 1.0, "human": 1.0}))
    archive.rank = lambda e: obj.score(e.objectives)
    assert archive.best() is b and archive.score(b) == pytest.approx(0.65)
    again = Archive.from_json(json.loads(json.dumps(archive.to_json())))
    assert again.entries[1].objectives == {"quality": 0.4, "human": 0.9}
    old = {k: v for k, v in a.to_json().items() if k != "objectives"}
    assert ArchiveEntry.from_json(old).objectives == {}, "archives written before still load"


def test_a_pareto_run_writes_its_front_and_the_report_draws_it(tmp_path):
    from evotrainer.coevolution import CoEvolution
    from evotrainer.report.build import build_report

    cfg = small_config(
        tmp_path / "cache.sqlite",
        seed=2,
        validation={"data": None, "synthetic_size": 6, "confirm": 2},
        inner={
            "population": 5,
            "elites": 2,
            "tasks_per_generation": 3,
            "generations": 6,
            "seed_prompts": [SUMMARY, DECISIONS, PLAIN],
        },
        outer={"every": 2, "variants": 3},
        meta={"selection": "pareto", "objectives": {"diversity": 0.1, "conciseness": 0.1}},
    )
    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=styled_llm(task))
    result = co.run(tmp_path / "run")
    events = [json.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    steps = [e for e in events if e["type"] == "outer_step"]
    assert steps and all(e["selection"] == "pareto" and e["front"] for e in steps)
    assert all(
        "Pareto front over quality, diversity, conciseness" in e["reason"]
        or "incumbent" in e["reason"]
        for e in steps
    )
    for e in steps:
        chosen = [v["id"] for v in e["variants"]].index(e["chosen"]["id"])
        assert chosen in e["front"], "the chosen variant is on the front"
        assert {"quality", "diversity", "conciseness"} <= set(e["objectives"][chosen])
    front = json.loads((tmp_path / "run" / "front.json").read_text())
    assert front["axes"] == ["quality", "diversity", "conciseness"]
    members = {f["policy"]["id"] for f in front["front"]}
    vectors = [e["objectives"] for e in front["entries"]]
    for f in front["front"]:  # nobody in the archive dominates a front member
        v = f["objectives"]
        assert not any(
            all(w[k] >= v[k] for k in front["axes"]) and any(w[k] > v[k] for k in front["axes"])
            for w in vectors
        )
    summary = result.summary
    assert summary["meta"]["selection"] == "pareto" and summary["meta"]["objectives"]
    best_meta = max(front["entries"], key=lambda e: e["meta_score"])
    assert best_meta["policy_id"] in members, "the highest meta score is on the front"
    page = build_report(tmp_path / "run").read_text()
    assert "Meta-objective: the front" in page and "front.png" not in page
    assert (tmp_path / "run" / "report" / "front.png").is_file()
    assert "Human review" in page and "No ratings yet" in page
