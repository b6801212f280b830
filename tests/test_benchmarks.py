"""The benchmark scripts run once at a tiny budget with fake LLMs (and, where cheap, one real
model call) so they cannot rot. No assertion on speed: numbers come from the benchmarks."""

from __future__ import annotations

import importlib.util
import json

import pytest
from benchmarks import bench_profile, efficiency, engine, quality, result_file, run_all
from benchmarks import common as C
from benchmarks.cells import adapters, grid
from benchmarks.cells import settings as cell_settings
from benchmarks.cells import summary as cell_summary
from benchmarks.cells import table as cell_table
from benchmarks.methods import registry

from tests.support import needs_model, tiny_profile

AGG_KEYS = ("test_rougeL", "test_action_item_f1", "test_s_val", "selection_s_val", "calls")
EXTERNAL = {"gepa": "gepa", "evoprompt_ga": "promptolution"}


def _quality_args(tmp_path, *extra: str) -> list[str]:
    return [
        "--model",
        C.FAKE_SPEC,
        "--out",
        str(tmp_path / "quality.json"),
        "--work-dir",
        str(tmp_path / "work"),
        *extra,
    ]


def test_quality_every_method_at_a_tiny_budget(tmp_path):
    doc = quality.run(quality.parse_args(_quality_args(tmp_path, "--budget", "16", "--seeds", "3")))
    on_disk = json.loads((tmp_path / "quality.json").read_text())
    assert on_disk["partial"] is False
    assert set(on_disk["methods"]) == set(registry.ROWS)
    assert on_disk["settings"]["budget"] == 16
    assert on_disk["data"]["test"]["n"] >= 1
    for row, rec in doc["methods"].items():
        agg = rec["aggregate"]
        for key in AGG_KEYS:
            assert {"mean", "std", "n"} <= set(agg[key]), (row, key)
        assert len(rec["runs"]) == 3, row
        package = EXTERNAL.get(row)
        if package and importlib.util.find_spec(package) is None:
            assert agg["n_failed"] == 3 and "error" in rec  # failure reported, not raised
            continue
        assert agg["n_ok"] == 3, (row, rec.get("error"))
        for run in rec["runs"]:
            assert run["calls"] <= 16, (row, run["calls"])  # the budget is a hard cap
            assert run["test"]["s_val"] is not None
            assert run["best_policy"]["text"]
        assert agg["test_s_val"]["mean"] is not None
    table = result_file.table(doc)
    assert table.count("\n") == len(registry.ROWS) + 1


def test_quality_engine_overrides_reach_the_engine(tmp_path):
    args = _quality_args(
        tmp_path,
        "--budget",
        "30",
        "--seeds",
        "1",
        "--methods",
        "inner_ga",
        "--engine-set",
        "inner.population=5",
        "--engine-set",
        "defences.terminal_share=0.3",
    )
    doc = quality.run(quality.parse_args(args))
    assert doc["settings"]["engine_set"] == ["inner.population=5", "defences.terminal_share=0.3"]
    run = doc["methods"]["inner_ga"]["runs"][0]
    assert run["status"] == "ok" and run["calls"] <= 30
    with pytest.raises(SystemExit, match="nope"):
        quality.run(quality.parse_args([*args[:-1], "nope.key=1"]))


def test_quality_rejects_unknown_method(tmp_path):
    with pytest.raises(SystemExit, match="unknown method"):
        quality.run(quality.parse_args(_quality_args(tmp_path, "--methods", "seeds,nope")))


def test_quality_falls_back_to_synthetic_data_and_says_so(tmp_path):
    args = _quality_args(
        tmp_path,
        "--methods",
        "seeds,random_search",
        "--budget",
        "10",
        "--train-data",
        str(tmp_path / "missing-train.jsonl"),
        "--test-data",
        str(tmp_path / "missing-test.jsonl"),
    )
    doc = quality.run(quality.parse_args(args))
    for split in ("selection", "test"):
        assert doc["data"][split]["synthetic"] is True
        assert "SYNTHETIC" in doc["data"][split]["message"]
    assert doc["methods"]["random_search"]["aggregate"]["n_ok"] == 3
    assert doc["methods"]["gepa"]["runs"] == []  # not asked for


def test_efficiency_throughput_on_the_fake(tmp_path):
    out = tmp_path / "eff.json"
    efficiency.main(
        [
            "--model",
            C.FAKE_SPEC,
            "--out",
            str(out),
            "--work-dir",
            str(tmp_path / "work"),
            "--min-seconds",
            "0.01",
            "--engine-generations",
            "1",
        ]
    )
    doc = json.loads(out.read_text())
    rows = doc["throughput"]["evaluator"]
    assert {(r["population"], r["batch"]) for r in rows} == {
        (p, b) for p in (4, 10, 20) for b in (5, 20, 50)
    }
    assert all(r["evals_per_s"] > 0 for r in rows)
    assert doc["throughput"]["engine"]["llm_calls"] > 0
    assert "demo" not in doc  # no model, no demo run


def test_run_all_passes_flags_through(tmp_path):
    run_all.main(
        [
            "--model",
            C.FAKE_SPEC,
            "--work-dir",
            str(tmp_path / "w"),
            "--efficiency-out",
            str(tmp_path / "e.json"),
            "--min-seconds",
            "0.01",
            "--out",
            str(tmp_path / "q.json"),
            "--methods",
            "seeds",
            "--seeds",
            "3",
        ]
    )
    assert json.loads((tmp_path / "e.json").read_text())["benchmark"] == "efficiency"
    q = json.loads((tmp_path / "q.json").read_text())
    assert q["methods"]["seed_best"]["aggregate"]["n_ok"] == 3


def test_plausible_minutes_parse_as_minutes():
    from evotrainer.tasks.meetings.parser import parse_minutes

    text = C.plausible_minutes(
        "Alice: we need a budget for the remote control\nBob: the budget is tight\n"
        "Carol: I will check the design of the remote"
    )
    m = parse_minutes(text)
    assert 1 <= len(m.action_items) <= 3
    assert text.startswith("# Minutes")


@needs_model
def test_layout_measurement_on_the_real_model():
    """Two policies on one short meeting, transcript-first vs policy-first: 4 short real calls."""
    task = efficiency.MeetingTask(max_input_tokens=128)
    inst = task.synthetic_validation(1, 0)
    backend = C.make_backend("local:smollm2", 1024, 1)
    counter = efficiency.PrefillCounter(backend)
    pairs = ((False, "instance-major"), (True, "instance-major"))
    out = efficiency.layout(backend, counter, inst, 2, 2, 128, arrangements=pairs)
    assert len(out["rows"]) == 2
    by = {(r["layout"], r["order"]): r for r in out["rows"]}
    first = by[("transcript-first", "instance-major")]["prefilled_tokens_per_evaluation"]
    other = by[("policy-first (system message)", "instance-major")][
        "prefilled_tokens_per_evaluation"
    ]
    assert first < other  # the shared transcript prefix is reused only when it comes first


def test_quality_table_and_estimate_modes(tmp_path, capsys):
    quality.run(quality.parse_args(_quality_args(tmp_path, "--methods", "seeds", "--budget", "8")))
    capsys.readouterr()
    assert quality.main(["--table", str(tmp_path / "quality.json")]) == 0
    assert "| seed_best |" in capsys.readouterr().out
    out = tmp_path / "quality.json"
    assert quality.main(["--rescore", str(out), "--work-dir", str(tmp_path / "w")]) == 0
    doc = json.loads(out.read_text())
    assert "rescored" in doc["test_evaluation"]
    assert doc["methods"]["seed_best"]["aggregate"]["test_s_val"]["mean"] is not None
    capsys.readouterr()
    assert quality.main(["--estimate", "--model", C.FAKE_SPEC, "--profile", "full"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert est["calls"]["budgeted"] == 5 * 3 * bench_profile.load("full")["budget"]


# -- the standard profile: cells in a results directory -------------------------------------
TINY_STANDARD = tiny_profile("standard", 40, "n_gepa_train=2")


def _standard_args(tmp_path, *extra: str) -> list[str]:
    return [
        "--model",
        C.FAKE_SPEC,
        "--results-dir",
        str(tmp_path / "res"),
        "--work-dir",
        str(tmp_path / "work"),
        "--log-every",
        "1",
        *TINY_STANDARD,
        *extra,
    ]


def _cell_files(tmp_path) -> dict[str, str]:
    return {p.stem: p.read_text() for p in sorted((tmp_path / "res" / "cells").glob("*.json"))}


def test_standard_cells_resume_and_partial_table(tmp_path, capsys):
    # a subset first: the seeds and one random-search cell
    quality.main(_standard_args(tmp_path, "--cells", "seeds,random_search:0"))
    first = _cell_files(tmp_path)
    assert set(first) == {"seeds", "random_search-seed0"}
    capsys.readouterr()
    assert quality.main(["--table", str(tmp_path / "res")]) == 0
    out = capsys.readouterr().out
    assert "PARTIAL" in out and "| random_search | ok | missing | missing |" in out
    assert "| seed_best |" in out and "| gepa |" in out  # finished rows and the missing cells
    with grid.cell_lock(tmp_path / "work", "random_search-seed1") as got:
        assert got  # as if another process were running that cell now
        quality.main(["--table", str(tmp_path / "res")])
        assert "| random_search | ok | running | missing |" in capsys.readouterr().out

    # then the rest (engine methods included): finished cells are not recomputed
    methods = "seeds,random_search,inner_ga,evotrainer,gepa"
    quality.main(_standard_args(tmp_path, "--methods", methods))
    out = capsys.readouterr().out
    assert "2 already finished" in out
    after = _cell_files(tmp_path)
    for cell, text in first.items():
        assert after[cell] == text, cell  # same file: same start time, same result
    cells = {c for c, m, _ in grid.all_cells(3) if m in methods.split(",")}
    assert set(after) == cells
    for cell, text in after.items():
        rec = json.loads(text)
        if rec["method"] == "gepa" and importlib.util.find_spec("gepa") is None:
            assert rec["status"] == "failed" and "gepa" in rec["error"]
            continue
        assert rec["status"] == "ok", (cell, rec.get("error"))
        for r in rec["rows"].values():
            assert r["calls"] <= 40, cell  # the budget is a hard cap
            assert r["best_policy"]["components"]["system"]  # every component, not only text
            assert r["best_policy"]["text"]
        if rec["method"] == "evotrainer":
            details = rec["rows"]["evotrainer"]["details"]
            assert details["engine_config"]["validation"]["confirm"] == 2
            assert details["engine_config"]["harness"]["real_data"].endswith("ami-train.jsonl")
            assert details["summary"]["validation"]["n"] == 3  # selection part only
            conf = details.get("confirmation")
            settings = json.loads((tmp_path / "res" / "settings.json").read_text())
            want = settings["compared"]["data"]["confirmation"]["ids"]
            assert conf is not None and sorted(conf["instance_ids"]) == sorted(want)

    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert set(summary["methods"]["evotrainer"]["test"]) == {"ami-dev", "icsi", "all"}
    t = summary["methods"]["evotrainer"]["test"]
    assert t["all"]["n_meetings"] == 4 and t["icsi"]["s_val"]["n_scored"] == 2
    assert t["icsi"]["action_item_f1"]["mean"] is None  # ICSI has no action items
    assert t["icsi"]["s_val"]["mean"] == pytest.approx(t["icsi"]["rougeL"]["mean"])
    assert t["all"]["diff_s_val"]["lo"] <= t["all"]["diff_s_val"]["mean"]
    assert len(t["all"]["diff_s_val_per_run"]) == 3
    assert summary["methods"]["seed_best"]["test"]["all"]["diff_s_val"]["mean"] == 0.0
    both = t["all"]["diff_s_val_seeds_meetings"]
    assert both["runs"] == [3, 1] and both["mean"] == pytest.approx(t["all"]["diff_s_val"]["mean"])
    pairs = {(c["a"], c["b"]): c for c in summary["comparisons"]}
    ablation = pairs[("evotrainer", "inner_ga")]
    assert ablation["seeds"] == [[0, 1, 2], [0, 1, 2]] and set(ablation["test"]) >= {"all"}
    ga = summary["methods"]["inner_ga"]["test"]["all"]["diff_s_val"]["mean"]
    assert ablation["test"]["all"]["meetings"]["mean"] == pytest.approx(
        t["all"]["diff_s_val"]["mean"] - ga
    )
    goals = summary["targets"]
    assert len(goals) == 3 and all(g["final"] is not None for g in goals)
    assert goals[2]["met"] == (t["all"]["diff_s_val"]["mean"] >= ga)
    capsys.readouterr()
    quality.main(["--table", str(tmp_path / "res")])
    out = capsys.readouterr().out
    assert "| evotrainer - inner_ga | 0,1,2; 0,1,2 | all |" in out
    assert "| co-evolution is at least the GA alone |" in out
    scores = json.loads((tmp_path / "res" / "test" / "scores.json").read_text())
    assert set(scores) == {"ami-dev", "icsi"}

    # a third run: nothing to run and every test pair already scored
    quality.main(_standard_args(tmp_path, "--methods", "seeds,random_search"))
    out = capsys.readouterr().out
    assert "0 to run" in out and "0 pairs to score" in out
    assert _cell_files(tmp_path) == after

    # the test scores lost: --test-only scores again, every answer from the persistent cache
    (tmp_path / "res" / "test" / "scores.json").unlink()
    quality.main(_standard_args(tmp_path, "--test-only"))
    out = capsys.readouterr().out
    assert "test evaluation done: 0 backend calls" in out
    assert json.loads((tmp_path / "res" / "test" / "scores.json").read_text()) == scores


def test_standard_retries_failed_cells_and_filters(tmp_path, capsys):
    cells = grid.all_cells(3)
    assert [c for c, _, _ in grid.select_cells(cells, None, "gepa:1,seeds")] == [
        "seeds",
        "gepa-seed1",
    ]
    assert len(grid.select_cells(cells, "inner_ga,evotrainer", None)) == 6
    with pytest.raises(SystemExit, match="matches no cell"):
        grid.select_cells(cells, None, "evotrainer:7")
    with pytest.raises(SystemExit, match="unknown method"):
        grid.select_cells(cells, "nope", None)
    # a failed cell is written (the table shows it) and tried again on the next run
    args = _standard_args(tmp_path, "--cells", "seeds", "--skip-test")
    res = tmp_path / "res" / "cells" / "seeds.json"
    res.parent.mkdir(parents=True)
    C.write_json(res, {"cell": "seeds", "method": "seeds", "seed": None, "status": "failed"})
    quality.main(args)
    assert json.loads(res.read_text())["status"] == "ok"
    assert "No test scores yet" in capsys.readouterr().out


def test_standard_refuses_other_settings(tmp_path):
    quality.main(_standard_args(tmp_path, "--cells", "seeds", "--skip-test"))
    with pytest.raises(SystemExit, match=r"refusing to mix results(.|\n)*settings.budget: 40"):
        quality.main(_standard_args(tmp_path, "--cells", "seeds", "--budget", "50"))
    with pytest.raises(SystemExit, match="model"):
        args = _standard_args(tmp_path, "--cells", "seeds")
        quality.main([*args[2:], "--model", "openai:other", "--base-url", "http://x"])
    # the same settings are accepted (and the invocation is recorded)
    quality.main(_standard_args(tmp_path, "--cells", "seeds", "--skip-test"))
    settings = json.loads((tmp_path / "res" / "settings.json").read_text())
    assert len(settings["invocations"]) == 2
    assert settings["engine"]["config"]["inner"]["population"] == 4
    # engine settings may change while no engine cell has finished ...
    elites = ("--engine-set", "inner.elites=1")
    quality.main(_standard_args(tmp_path, "--cells", "inner_ga:0", "--skip-test", *elites))
    settings = json.loads((tmp_path / "res" / "settings.json").read_text())
    assert settings["engine"]["config"]["inner"]["elites"] == 1
    # ... but not once one has
    with pytest.raises(SystemExit, match=r"inner_ga-seed0(.|\n)*inner.elites: 1 recorded, 2 now"):
        quality.main(_standard_args(tmp_path, "--cells", "evotrainer:0", "--skip-test"))


def test_a_method_appended_to_a_profile_is_no_difference_but_any_other_change_is():
    """A method added at the end of a profile's list runs its own new cells and changes none
    that finished; a removed, reordered or replaced method is a different comparison."""

    def comp(*methods):
        return {"settings": {"methods": list(methods), "budget": 300}}

    assert cell_settings.methods_added(comp("a", "b"), comp("a", "b", "c")) == ["c"]
    assert cell_settings.methods_added(comp("a", "b"), comp("a", "b")) == []
    assert cell_settings.methods_added(comp("a", "b"), comp("b", "a", "c")) == []
    assert cell_settings.methods_added(comp("a", "b"), comp("a")) == []
    assert cell_settings.methods_added({"settings": {}}, comp("a")) == []
    # the new method's engine config is absent from the recording: only it changed
    new = 'per_method.alternation_per_scale: "<absent>" recorded, {"model": {} now'
    assert cell_settings.changed_methods([new]) == {"alternation_per_scale"}
    assert cell_settings.changed_methods(
        ["per_method.evotrainer.inner.elites: 1 recorded, 2 now"]
    ) == {"evotrainer"}


def test_a_setting_one_method_reads_may_change_until_a_cell_of_it_finished(tmp_path):
    """sft_refs_cpu's epochs are set from the full method's measured training CPU, after
    other cells ran: taken on (and recorded) while no sft_refs_cpu cell has finished; once
    one has, the change is left to the refusal, as every compared setting's."""

    def comp(epochs):
        return {"settings": {"budget": 1000, "sft_cpu_epochs": epochs}}

    doc, inv = {"compared": comp(6)}, {}
    C.write_json(tmp_path / "cells" / "sft_refs-seed0.json", {"method": "sft_refs", "status": "ok"})
    cell_settings._method_keys(doc, tmp_path, comp(6.6), inv)  # noqa: SLF001
    assert doc["compared"] == comp(6.6) and inv["settings_changed"] == {"sft_cpu_epochs": [6, 6.6]}
    cpu = {"method": "sft_refs_cpu", "status": "ok"}
    C.write_json(tmp_path / "cells" / "sft_refs_cpu-seed0.json", cpu)
    cell_settings._method_keys(doc, tmp_path, comp(8), inv)  # noqa: SLF001
    assert doc["compared"] == comp(6.6)
    assert cell_settings.diff(doc["compared"], comp(8)) == [
        "settings.sft_cpu_epochs: 6.6 recorded, 8 now"
    ]


def test_an_engine_option_added_since_at_its_default_is_no_difference():
    """Engine cells recorded before an option existed still match when the option now stands
    at its default (the old behaviour); any other value, or a changed field, is refused."""
    defaults = {"config": cell_settings.engine_defaults()}
    recorded = {"config": {"task": {"name": "meetings"}}, "profile": {"budget": 300}}
    now = {"config": {"task": {"name": "meetings", "empty_reference_items": "skip"}}}
    now["profile"] = {"budget": 300}
    assert cell_settings.diff(recorded, now, defaults=defaults) == []
    now["config"]["task"]["empty_reference_items"] = "abstain"
    assert cell_settings.diff(recorded, now, defaults=defaults) == [
        'config.task.empty_reference_items: "<absent>" recorded, "abstain" now'
    ]
    assert cell_settings.diff(
        {"profile": {"budget": 300}}, {"profile": {"budget": 40}}, "", defaults
    )
    gone = {"config": {"task": {}}, "profile": {"budget": 300}}  # a recorded field dropped
    assert cell_settings.diff(recorded, gone, defaults=defaults) == [
        'config.task.name: "meetings" recorded, "<absent>" now'
    ]


def test_standard_says_which_engine_option_is_missing(tmp_path, monkeypatch):
    class OldValidationConfig:  # an engine without validation.confirm
        model_fields = {"data": None, "limit": None}

    monkeypatch.setattr(engine, "ValidationConfig", OldValidationConfig)
    with pytest.raises(SystemExit, match="validation.confirm"):
        quality.main(_standard_args(tmp_path, "--cells", "evotrainer:0"))
    assert not (tmp_path / "res" / "cells").exists()  # refused before any cell ran


def test_standard_table_needs_a_results_directory(tmp_path):
    with pytest.raises(SystemExit, match="not a results directory"):
        cell_table.table_from_dir(tmp_path)


def test_standard_estimate_counts_every_test_meeting(capsys):
    assert quality.main(["--estimate", "--model", C.FAKE_SPEC, "--profile", "standard"]) == 0
    est = json.loads(capsys.readouterr().out)
    prof = bench_profile.load("standard")
    assert est["calls"]["budgeted"] == 5 * 3 * prof["budget"]
    n_test = sum(est["test_meetings"].values())
    assert est["calls"]["test_at_most"] == n_test * (3 + 5 * 3)


def test_a_run_recorded_before_the_empty_reference_rule_reads_as_abstain():
    """The first standard run predates ``empty_reference_items``: it matches a rerun under
    "abstain" (its behaviour) and is refused under "skip" (every cell would measure another
    metric)."""
    recorded = {"settings": {"budget": 300}}
    same = {"settings": {"budget": 300, "empty_reference_items": "abstain"}}
    assert cell_settings.diff(recorded, same, defaults=cell_settings.COMPARED_DEFAULTS) == []
    other = {"settings": {"budget": 300, "empty_reference_items": "skip"}}
    assert cell_settings.diff(recorded, other, defaults=cell_settings.COMPARED_DEFAULTS) == [
        'settings.empty_reference_items: "<absent>" recorded, "skip" now'
    ]


def test_every_method_scores_with_the_profiles_empty_reference_rule():
    """Seeds, random search and the engine (the task), GEPA and EvoPromptGA (the Scorer)
    follow the profile's ``empty_reference_items`` (the engine gets it as task config)."""
    from benchmarks.baselines import Scored, Scorer, feedback_text

    from tests.test_metrics import ami_like

    prof = dict(bench_profile.load("standard"))
    assert prof["empty_reference_items"] == "skip"
    none = ami_like(())  # an AMI meeting whose reference lists no action item
    answer = "## Summary\nThe team met.\n## Action items\n- Tom: invent work\n"
    scorer = Scorer(bench_profile.meeting_task(prof), None, None, C.S_VAL_WEIGHTS)  # type: ignore[arg-type]
    s, row = scorer.score_output(none, answer)
    assert row["action_item_f1"] is None and s == pytest.approx(row["rougeL"])
    assert "not scored" in feedback_text(none, Scored(answer, s, row))
    quick = Scorer(
        bench_profile.meeting_task(bench_profile.load("quick")), None, None, C.S_VAL_WEIGHTS
    )  # type: ignore[arg-type]
    assert quick.score_output(none, answer)[1]["action_item_f1"] == 0.0  # abstain


def test_items_written_where_the_reference_lists_none_are_counted_beside_s_val():
    def rec(n_items, ref):
        return {"s_val": 0.1, "n_action_items": n_items, "reference_items": ref}

    scores = {
        "ami-dev": {
            "m1": {"pA": rec(2, 0), "pB": rec(0, 0)},
            "m2": {"pA": rec(1, 3), "pB": rec(4, 3)},
            "m3": {"pA": rec(1, 0), "pB": rec(0, 0)},
        },
        "icsi": {"i1": {"pA": rec(5, None), "pB": rec(0, None)}},
    }
    meetings = [("ami-dev", m) for m in ("m1", "m2", "m3")] + [("icsi", "i1")]
    got = cell_summary.items_where_reference_lists_none(scores, meetings, ["pA", "pB"])
    assert got == {
        "meetings": 2,
        "per_run": [{"items": 3, "meetings_with_items": 2}, {"items": 0, "meetings_with_items": 0}],
    }
    assert cell_summary.items_where_reference_lists_none(scores, meetings[3:], ["pA"]) is None
    assert cell_table._items(got) == "3 (2), 0 (0)"


# -- paired bootstrap ---------------------------------------------------------------------
def test_paired_bootstrap_contains_the_true_difference():
    import numpy as np
    from benchmarks import stats

    rng = np.random.default_rng(7)
    true = 0.03
    base = rng.uniform(0.1, 0.3, size=80)  # meetings differ a lot in difficulty ...
    method = base + true + rng.normal(0, 0.05, size=80)  # ... the paired differences less
    ci = stats.paired_difference([list(method)], list(base))
    assert ci["n"] == 80 and ci["resamples"] == 10_000
    assert ci["lo"] < true < ci["hi"]
    assert ci["lo"] < ci["mean"] < ci["hi"]
    assert ci["hi"] - ci["lo"] < 0.05  # about 4 standard errors (0.05 / sqrt(80) each)
    assert stats.paired_difference([list(method)], list(base)) == ci  # fixed seed
    # three seeds: per meeting the method's mean over its runs, then minus the baseline
    runs = [list(base + 0.01), list(base + 0.02), list(base + 0.06)]
    three = stats.paired_difference(runs, list(base))
    assert three["mean"] == pytest.approx(0.03)
    # meetings without a score are left out
    part = stats.paired_difference([[0.5, None, 0.7]], [0.4, 0.3, None])
    assert part["n"] == 1 and part["mean"] == pytest.approx(0.1)


def test_paired_bootstrap_degenerate_and_empty():
    from benchmarks import stats

    same = stats.paired_bootstrap([0.02] * 20)
    assert same["mean"] == same["lo"] == same["hi"] == 0.02
    zero = stats.paired_difference([[0.1, 0.2], [0.1, 0.2]], [0.1, 0.2])
    assert zero["mean"] == zero["lo"] == zero["hi"] == 0.0
    assert stats.significant(zero) == ""
    empty = stats.paired_bootstrap([])
    assert empty["mean"] is None and empty["n"] == 0
    assert stats.fmt_ci(empty) == "n/a"
    assert stats.fmt_ci({"mean": 0.02, "lo": 0.01, "hi": 0.03}) == "+0.020 [+0.010, +0.030]*"


def test_resampling_seeds_widens_the_interval_when_runs_disagree():
    import numpy as np
    from benchmarks import stats

    rng = np.random.default_rng(11)
    base = rng.uniform(0.1, 0.3, size=80)
    # a method that returns a +0.04 policy in two seeds and the baseline itself in the third
    runs = [list(base + 0.04 + rng.normal(0, 0.03, 80)) for _ in range(2)] + [list(base)]
    meetings = stats.paired_difference(runs, list(base))
    both = stats.seeds_and_meetings_difference(runs, [list(base)])
    assert both["mean"] == pytest.approx(meetings["mean"])  # the same point estimate
    assert both["runs"] == [3, 1] and both["n"] == 80
    assert both["lo"] < meetings["lo"] and both["hi"] > meetings["hi"]
    assert both["lo"] < 0.005  # a third of the resamples' seeds are the baseline itself
    # runs that agree: about the meeting-only interval
    agree = [list(base + 0.04 + rng.normal(0, 0.03, 80)) for _ in range(3)]
    m2 = stats.paired_difference(agree, list(base))
    b2 = stats.seeds_and_meetings_difference(agree, [list(base)])
    assert b2["hi"] - b2["lo"] < 2 * (m2["hi"] - m2["lo"])
    # method against method: each side's seeds drawn on their own, so two sides with the same
    # three runs differ in a resample (mean 0, an interval around it); one run each: exactly 0
    same = stats.seeds_and_meetings_difference(agree, agree)
    assert same["mean"] == 0.0 and same["lo"] < 0 < same["hi"]
    zero = stats.seeds_and_meetings_difference([list(base)], [list(base)])
    assert zero["mean"] == zero["lo"] == zero["hi"] == 0.0
    # missing scores are left out per meeting; nothing to compare gives None
    part = stats.seeds_and_meetings_difference([[0.5, None, 0.7]], [[0.4, 0.3, None]])
    assert part["n"] == 1 and part["mean"] == pytest.approx(0.1)
    assert stats.seeds_and_meetings_difference([], [[0.1]])["mean"] is None


def test_a_killed_engine_cell_resumes_from_its_checkpoint_and_spends_its_budget_alike(
    tmp_path, monkeypatch
):
    """A cell killed mid-run goes on from its last checkpoint on the next invocation (losing at
    most the generation in progress, whose cached answers are forgotten and paid again), and
    returns what an uninterrupted cell returns, with the same number of calls."""
    clean_dir, killed_dir = tmp_path / "clean", tmp_path / "killed"
    clean_dir.mkdir()
    killed_dir.mkdir()
    quality.main(_standard_args(clean_dir, "--cells", "evotrainer:0", "--skip-test"))
    clean = json.loads((clean_dir / "res" / "cells" / "evotrainer-seed0.json").read_text())

    class Kill(BaseException):  # like a SIGINT: not caught as a failed cell
        pass

    real = C.fake_llm
    calls = [0]

    def dying_llm():
        llm = real()
        answer = llm.fn

        def fn(messages, params):
            calls[0] += 1
            if calls[0] == 30:
                raise Kill
            return answer(messages, params)

        llm.fn = fn
        return llm

    monkeypatch.setattr(C, "fake_llm", dying_llm)
    with pytest.raises(Kill):
        quality.main(_standard_args(killed_dir, "--cells", "evotrainer:0", "--skip-test"))
    monkeypatch.setattr(C, "fake_llm", real)
    run_dir = killed_dir / "work" / "runs" / "evotrainer-seed0"
    assert list((run_dir / "checkpoints").glob("ckpt-*.json"))  # killed after a checkpoint
    assert not (killed_dir / "res" / "cells" / "evotrainer-seed0.json").exists()
    quality.main(_standard_args(killed_dir, "--cells", "evotrainer:0", "--skip-test"))
    rec = json.loads((killed_dir / "res" / "cells" / "evotrainer-seed0.json").read_text())
    got, want = rec["rows"]["evotrainer"], clean["rows"]["evotrainer"]
    resumed = got["details"]["resumed"]
    assert resumed["generation"] >= 1 and resumed["forgotten"] >= 1
    assert "resumed" not in want["details"]
    assert got["best_policy"] == want["best_policy"]
    assert got["calls"] == want["calls"] and got["selection_s_val"] == want["selection_s_val"]
    events = (run_dir / "events.jsonl").read_text()
    assert '"run_resumed"' in events


def test_a_switched_off_distillation_section_is_no_engine_difference():
    recorded = {"per_method": {"fixed": {"distill": {"enabled": False, "max_seq_len": 1024}}}}
    now = {"per_method": {"fixed": {"distill": {"enabled": False, "max_seq_len": 1536}}}}
    assert (
        cell_settings.diff(
            cell_settings.inert_sections(recorded), cell_settings.inert_sections(now)
        )
        == []
    )
    on = {"per_method": {"fixed": {"distill": {"enabled": True, "max_seq_len": 1536}}}}
    off = {"per_method": {"fixed": {"distill": {"enabled": True, "max_seq_len": 1024}}}}
    assert cell_settings.diff(
        cell_settings.inert_sections(off), cell_settings.inert_sections(on)
    ) == ["per_method.fixed.distill.max_seq_len: 1024 recorded, 1536 now"]


def test_a_cells_adapter_is_kept_in_the_results_directory(tmp_path):
    """The work directory is git-ignored: a finished cell's adapter is copied beside its JSON,
    so a later session's test evaluation finds it there; a missing file is recorded."""
    work, results = tmp_path / "work", tmp_path / "results"
    made = work / "runs" / "alternation-seed1" / "adapters" / "g3" / "abc.gguf"
    made.parent.mkdir(parents=True)
    made.write_bytes(b"GGUF adapter")
    rec = {
        "rows": {
            "alternation": {"best_policy": {"id": "p1", "adapter": "abc"}},
            "weights_only": {"best_policy": {"id": "p2", "adapter": "gone"}},
            "evotrainer": {"best_policy": {"id": "p3"}},
        }
    }
    adapters.keep_adapters(rec, work, results)
    kept = results / "adapters" / "abc.gguf"
    assert kept.read_bytes() == b"GGUF adapter"
    assert rec["missing_adapters"] == ["gone"]
    made.unlink()  # a fresh checkout: only the results directory is left
    assert adapters.find_adapter("abc", results, work) == kept
    assert adapters.find_adapter("gone", results, work) is None


def test_a_cell_whose_adapter_is_gone_runs_again_unless_its_test_is_complete(tmp_path):
    results, work = tmp_path / "results", tmp_path / "work"
    (results / "test").mkdir(parents=True)
    ids = {"ami-dev": ["a1", "a2"], "icsi": ["i1"]}
    settings = {"compared": {"data": {"test": {k: {"ids": v} for k, v in ids.items()}}}}
    (results / "settings.json").write_text(json.dumps(settings))
    cell = {"status": "ok", "rows": {"sft_refs": {"best_policy": {"id": "p1", "adapter": "abc"}}}}
    plain = {"status": "ok", "rows": {"evotrainer": {"best_policy": {"id": "p2"}}}}
    cells = {"sft_refs-seed1": cell, "evotrainer-seed1": plain}
    lost = adapters.lost_adapter_cells(cells, results, work)
    assert list(lost) == ["sft_refs-seed1"] and "abc" in lost["sft_refs-seed1"]
    scores = {"ami-dev": {"a1": {"p1": {}}, "a2": {"p1": {}}}, "icsi": {"i1": {}}}
    (results / "test" / "scores.json").write_text(json.dumps(scores))
    assert list(adapters.lost_adapter_cells(cells, results, work)) == ["sft_refs-seed1"]
    scores["icsi"]["i1"]["p1"] = {}  # scored on every test meeting: the file is not needed
    (results / "test" / "scores.json").write_text(json.dumps(scores))
    assert adapters.lost_adapter_cells(cells, results, work) == {}


def test_the_readable_profile_gives_every_method_the_same_genes_and_reads_the_answers(
    tmp_path, capsys
):
    """Issue 46's profile: every method's policies decode and cut with the meeting task's seed
    genes, select on the task's s_val, and the tables show what the answers are."""
    from evotrainer.config import config_from_dict
    from evotrainer.policy.genome import PolicyGenome
    from evotrainer.policy.seeds import seed_genes

    decoding, cut = seed_genes(config_from_dict({}).inner)
    assert cut.enabled and not decoding.is_default  # the task's genes are not the neutral ones
    args = [
        "--model",
        C.FAKE_SPEC,
        "--results-dir",
        str(tmp_path / "res"),
        "--work-dir",
        str(tmp_path / "work"),
        *tiny_profile("readable", 40, "n_gepa_train=2"),
        "--methods",
        "seeds,random_search,evotrainer",
        "--seeds",
        "1",
    ]
    quality.main(args)
    for path in sorted((tmp_path / "res" / "cells").glob("*.json")):
        rec = json.loads(path.read_text())
        assert rec["status"] == "ok", (path.stem, rec.get("error"))
        for r in rec["rows"].values():
            p = PolicyGenome.from_json(r["best_policy"])
            assert p.decoding == decoding and p.postprocess == cut, path.stem
        if rec["method"] == "evotrainer":
            engine = rec["rows"]["evotrainer"]["details"]["engine_config"]
            assert engine["outer"]["s_val_weights"] == config_from_dict({}).outer.s_val_weights
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    answers = summary["methods"]["evotrainer"]["test"]["all"]["answers"]
    assert answers["n"] == 4 and 0 <= answers["loop_share"] <= 1
    assert answers["rougeL_dedup"] is not None
    capsys.readouterr()
    quality.main(["--table", str(tmp_path / "res")])
    out = capsys.readouterr().out
    assert "| method | distinct-4 | loop share | words | ROUGE-L | ROUGE-L dedup |" in out

    # the stored answers scored again with this tree's metric, into a copy (no model call)
    from benchmarks import answers as answers_cli

    path = tmp_path / "res" / "test" / "scores.json"
    stored = json.loads(path.read_text())
    row = next(iter(next(iter(stored["ami-dev"].values())).values()))
    truth = row["s_val"]
    row["s_val"] = 0.999  # as if scored under another rule
    path.write_text(json.dumps(stored))
    answers_cli.main([str(tmp_path / "res"), "--rescore-into", str(tmp_path / "again")])
    again = json.loads((tmp_path / "again" / "test" / "scores.json").read_text())
    first = next(iter(next(iter(again["ami-dev"].values())).values()))
    assert first["s_val"] == pytest.approx(truth) and json.loads(path.read_text()) == stored
    assert "| evotrainer |" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="exists"):
        answers_cli.main([str(tmp_path / "res"), "--rescore-into", str(tmp_path / "again")])
    # --drop-blanks: the post-processor's last step applied to every stored answer first
    row["output"] += "\n- <action item 1>:\nSummary: [insert key statement here]"
    path.write_text(json.dumps(stored))
    answers_cli.main(
        [str(tmp_path / "res"), "--rescore-into", str(tmp_path / "blanks"), "--drop-blanks"]
    )
    blanks = json.loads((tmp_path / "blanks" / "test" / "scores.json").read_text())
    first = next(iter(next(iter(blanks["ami-dev"].values())).values()))
    assert "insert" not in first["output"] and first["s_val"] == pytest.approx(truth)
    with pytest.raises(SystemExit):
        answers_cli.main([str(tmp_path / "res"), "--drop-blanks"])
    # --component: a reward component over each method's answers and over the references
    capsys.readouterr()
    answers_cli.main([str(tmp_path / "again"), "--component", "faithfulness"])
    out = capsys.readouterr().out.split("Reward component `faithfulness`")[1]
    rows = {line.split(" | ")[0][2:]: line for line in out.splitlines() if line.startswith("| ")}
    assert "(2)" in rows["reference"], out  # the references of the meetings answered
    assert "(2)" in rows["evotrainer"], out  # each set's 2 test meetings, one seed
    with pytest.raises(SystemExit, match="no such component"):
        answers_cli.main([str(tmp_path / "again"), "--component", "eloquence"])
