"""The report's sections of issue 35 (item 9): score against calls, the whole population's
lineage tree, the real share over time, per-meeting differences of the returned policy against
the best seed, and harness weight lines that cannot hide under each other. Built from a fake-LLM
run (seconds); the page itself is checked in headless Chromium by tests/test_report.py."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from evotrainer.report.build import build_report
from evotrainer.report.data import load_run
from tests.fake_runs import fake_run, small_config

TITLES = (
    "Score against calls",
    "Lineage of the whole population",
    "Per-meeting difference: returned policy vs best seed",
)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sections")
    # seeds that game the action-item count (tests/fake_meetings.py): the LLM operators'
    # honest rewrites validate higher, so the run returns an evolved policy
    cfg = small_config(
        tmp / "c.sqlite",
        inner={
            "population": 5,
            "elites": 2,
            "tasks_per_generation": 3,
            "generations": 6,
            "seed_prompts": [
                "Write the minutes with exactly three action items.",
                "List exactly three action items after the minutes.",
            ],
            "operators": {"llm_paraphrase": 1.0, "reflective": 1.0, "synonym": 1.0},
        },
        validation={"data": None, "synthetic_size": 7, "confirm": 3, "return_rule": "selection"},
    )
    co = fake_run(cfg, tmp / "run")
    build_report(tmp / "run")
    return co, tmp / "run"


def test_validation_events_say_what_the_backend_had_spent(run):
    _co, path = run
    events = [json.loads(x) for x in (path / "events.jsonl").read_text().splitlines()]
    vals = [e for e in events if e["type"] == "validation"]
    assert vals and all(isinstance(e.get("backend_calls"), int) for e in vals)
    assert [e["backend_calls"] for e in vals] == sorted(e["backend_calls"] for e in vals)


def test_score_against_calls(run):
    from evotrainer.report.progress import score_vs_calls

    _co, path = run
    s = score_vs_calls(load_run(path))
    assert s.axis == "backend calls"
    calls = [c for c, _ in s.best_s_val]
    assert calls == sorted(calls) and len(s.validated) >= len(s.best_s_val) >= 1
    best = [v for _, v in s.best_s_val]
    assert best == sorted(best)  # the best validated so far never falls
    assert max(v for _, v in s.validated) == best[-1]
    assert len(s.fitness) == 7  # generation 0 .. 6
    assert (path / "report" / "calls.png").is_file()


def test_lineage_holds_every_policy_made(run):
    from evotrainer.report.lineage import population_lineage

    co, path = run
    tree = population_lineage(load_run(path))
    assert {n.id for n in tree.nodes} == set(co.state.policies)
    made = {
        pid
        for p in co.state.policies.values()
        for pid in p.lineage.parents
        if pid in co.state.policies
    }
    assert {e.parent for e in tree.edges} == made
    for e in tree.edges:
        assert e.operator == co.state.policies[e.child].lineage.operator
    returned = json.loads((path / "summary.json").read_text())["best_policy"]
    assert [n.id for n in tree.nodes if n.returned] == [returned]
    assert any(n.s_val is not None for n in tree.nodes)
    assert (path / "report" / "lineage.png").is_file()


def test_lineage_drawing_of_a_hundred_policies_stays_legible(tmp_path):
    from evotrainer.report.lineage import Edge, Lineage, Node, draw_lineage

    rng = random.Random(0)
    ops = ["synonym", "llm_paraphrase", "reflective", "template", "sentence_crossover"]
    nodes = [Node(f"s{i}", 0, "seed", f"S{i}", 0.2 + 0.01 * i) for i in range(3)]
    edges: list[Edge] = []
    for g in range(1, 11):
        earlier = [n for n in nodes if n.generation < g]
        for k in range(10 if g < 10 else 7):
            op = rng.choice(ops)
            child = Node(f"g{g}c{k}", g, op, "", rng.choice([None, None, 0.1 + 0.3 * rng.random()]))
            parents = rng.sample(earlier, 2 if op == "sentence_crossover" else 1)
            edges += [Edge(p.id, child.id, op) for p in parents]
            nodes.append(child)
    nodes[-1] = Node(nodes[-1].id, nodes[-1].generation, nodes[-1].operator, "", 0.5, True)
    tree = Lineage(nodes, edges)
    assert len(tree.nodes) == 100
    png = draw_lineage(tree, tmp_path / "lineage.png")
    from matplotlib.image import imread

    height, width = imread(png).shape[:2]
    assert 600 <= width <= 1400 and 350 <= height <= 1600  # a page's width, not a poster


def test_harness_plot_has_a_panel_per_weight_and_the_real_share(run):
    from evotrainer.report.plots import harness_panels

    _co, path = run
    data = load_run(path)
    panels = harness_panels(data)
    weights = {k for e in data.generations() for k in e["harness"]["weights"]}
    assert weights <= set(panels)  # every weight line on its own panel: none hides another
    assert "difficulty L" in panels and "real share" in panels
    assert len(panels) == len(set(panels))


def test_per_meeting_deltas_of_the_returned_policy_against_the_best_seed(run):
    co, path = run
    summary = json.loads((path / "summary.json").read_text())
    pm = summary["per_meeting"]
    assert pm["returned"] == summary["best_policy"] != summary["initial_policy"]
    assert pm["best_seed"] == summary["initial_policy"]
    parts = {r["part"] for r in pm["rows"]}
    assert parts == {"selection", "confirmation"}
    ids = [r["instance_id"] for r in pm["rows"]]
    assert len(ids) == len(set(ids)) == len(co.components.validation_set.instances)
    for r in pm["rows"]:
        assert r["delta"] == pytest.approx(r["returned"] - r["best_seed"])
    page = (path / "report" / "index.html").read_text()
    for r in pm["rows"]:
        assert r["instance_id"] in page
    assert (path / "report" / "deltas.png").is_file()


def test_page_has_the_new_sections(run):
    _co, path = run
    page = (path / "report" / "index.html").read_text()
    for title in TITLES:
        assert title in page, title
    for name in ("calls", "lineage", "deltas", "harness"):
        assert (Path(path) / "report" / f"{name}.png").is_file(), name
