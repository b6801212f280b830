"""The 1,000-call distill profile (issue 47) on the fake model with a fake training, at a tiny
size: every method runs, the weights-first cells train on the references before generation 1,
the outer loop acts (trials that train a small adapter), the ablations differ only as they
should, and sft_refs_cpu trains longer than sft_refs."""

from __future__ import annotations

import json

from benchmarks import adapter_twins, bench_profile, quality
from benchmarks import common as C

from tests.support import real_data, tiny_profile
from tests.test_distill_profile import fake_training

METHODS = (
    "sft_refs",
    "sft_refs_cpu",
    "weights_prompts",
    "weights_prompts_once",
    "weights_prompts_frozen",
    "weights_prompts_refs",
    "weights_prompts_own",
)
# outer step every generation, distillations after generation 1 and every 1: the tiny budget
# still sees every step
TINY = tiny_profile(
    "distill-1000",
    260,
    "n_gepa_train=2",
    "distill_after=1",
    "distill_every=1",
    "outer_every=1",
    "distill_trial_pairs=4",
)


def test_the_profile_acts_as_issue_47_asks():
    prof = bench_profile.load("distill-1000")
    assert prof["budget"] == 1000 and prof["trial_generations"] > 0
    assert prof["genes"] == "task" and prof["s_val_weights"] == "task"  # the readable defaults
    assert set(METHODS) <= set(prof["methods"]) and prof["cut_targets"]


def test_the_answers_profile_changes_only_what_the_references_are_written_as():
    """Besides its directory and the references' form, only sft_refs_cpu's epochs, re-measured
    by their rule in the profile's own full-method cell (the profile's comment)."""
    base, answers = bench_profile.load("distill-1000"), bench_profile.load("distill-1000-answers")
    changed = {k for k in base.keys() | answers.keys() if base.get(k) != answers.get(k)}
    assert changed == {"results_name", "reference_targets", "sft_cpu_epochs"}, changed
    assert answers["reference_targets"] == "answer" and "reference_targets" not in base
    assert answers["sft_cpu_epochs"] == 13.5 and base["sft_cpu_epochs"] == 10.9


def test_every_method_of_the_1000_call_profile_runs_on_the_fake_model(tmp_path, monkeypatch):
    real_data("ami-train.jsonl")
    trained = fake_training(monkeypatch)
    cells = ",".join(f"{m}:0" for m in METHODS)
    where = [
        *("--model", C.FAKE_SPEC, "--results-dir", str(tmp_path / "res")),
        *("--work-dir", str(tmp_path / "work"), *TINY),
    ]
    quality.main([*where, "--cells", f"seeds,{cells}"])
    got = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "res" / "cells").glob("*")}
    assert {c: r["status"] for c, r in got.items() if c != "seeds"} == {
        f"{m}-seed0": "ok" for m in METHODS
    }, {c: r.get("error") for c, r in got.items()}
    assert any(s and all(x.startswith("human reference") for x in s) for s in trained)

    def details(m: str) -> dict:
        return got[f"{m}-seed0"]["rows"][m]["details"]

    full = details("weights_prompts")
    cfg = full["engine_config"]
    assert cfg["distill"]["schedule"] == "weights_first" and cfg["distill"]["mix_genes"]
    assert cfg["outer"]["enabled"] and cfg["outer"]["trials"] == "rerun"
    records = full["summary"]["distillations"]
    assert records[0]["generation"] == 0 and records[0]["pairs"]["notes"][0].startswith(
        "weights first"
    )
    assert full["outer_steps"] >= 1 and full["trial_generations"] > 0  # the outer loop acted
    assert any(r.get("trial") for r in records)  # its trials trained small adapters
    once = details("weights_prompts_once")["engine_config"]["distill"]
    assert once["max_rounds"] == 1
    frozen = details("weights_prompts_frozen")["engine_config"]
    assert not frozen["outer"]["enabled"]
    refs = details("weights_prompts_refs")["engine_config"]["harness"]["genes"]
    own = details("weights_prompts_own")["engine_config"]["harness"]["genes"]
    assert refs["distill_refs"]["initial"] == 1.0 and refs["distill_own"]["step"] == 0.0
    assert own["distill_own"]["initial"] == 1.0 and own["distill_refs"]["initial"] == 0.0
    assert details("sft_refs")["training"] is not None
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert {"sft_refs", "sft_refs_cpu", "weights_prompts"} <= set(summary["training_cost"])
    # issue 47's targets and its ablations' comparisons, judged once the test has scores
    targets = [t["target"] for t in summary["targets"]]
    assert targets[0].startswith("weights_prompts beats sft_refs by at least +0.015")
    assert any("loop share" in t for t in targets) and len(targets) == 3
    assert all(t["met"] is not None for t in summary["targets"])
    pairs = {(c["a"], c["b"]) for c in summary["comparisons"]}
    assert {
        ("weights_prompts", "sft_refs_cpu"),
        ("weights_prompts", "weights_prompts_once"),
    } <= pairs
    # the twins: each returned adapter under the best seed's prompt, on every test meeting
    assert adapter_twins.main(where) == 0
    twins = json.loads((tmp_path / "res" / "test" / "twins-summary.json").read_text())
    evolved = {
        c
        for c, rec in got.items()
        for r in rec.get("rows", {}).values()
        if r["best_policy"].get("adapter") and r["best_policy"]["lineage"]["operator"] != "seed"
    }
    assert set(twins) == evolved, (evolved, twins)  # on the fake: adapters set aside, none
    for t in twins.values():
        assert t["prompt"]["n"] == t["adapter"]["n"] > 0


def test_issue_47s_targets_ask_the_margin_of_the_seeds_resampled_interval():
    from benchmarks.cells import comparisons

    def doc(mean, lo, loops=(0.0, 0.02)):
        ci = {"mean": mean, "lo": lo, "hi": mean + 0.01}
        rows = {
            m: {"runs": [{}] * 3, "test": {"all": {"answers": {"loop_share": x}}}}
            for m, x in zip(("weights_prompts", "sft_refs"), loops, strict=True)
        }
        rows["weights_prompts"]["test"]["all"]["diff_s_val"] = ci
        pair = {"a": "weights_prompts", "b": "sft_refs"}
        pair["test"] = {"all": {"meetings": ci, "seeds_and_meetings": ci}}
        return {"methods": rows, "comparisons": [pair]}

    def met(d):
        return [t["met"] for t in comparisons.targets(d, 3)]

    assert met(doc(0.02, 0.005)) == [True, True, True]
    assert met(doc(0.013, 0.009)) == [False, True, True]  # above 0, short of the margin
    assert met(doc(0.02, -0.001)) == [False, True, False]
    assert met(doc(0.02, 0.005, loops=(0.03, 0.02)))[1] is False  # loopier than sft_refs
    assert met(doc(0.02, 0.005, loops=(0.06, 0.08)))[1] is False  # above 5%


def test_a_twin_is_the_best_seeds_prompt_on_the_returned_adapter():
    from evotrainer.tasks.meetings.task import MeetingTask
    from evotrainer.types import Lineage

    seeds = MeetingTask().seed_policies()
    best, other = seeds[2], seeds[0]
    evolved = other.with_adapter("ab" * 32, Lineage(parents=(other.id,), operator="distill"))
    same = best.with_adapter("cd" * 32, Lineage(parents=(best.id,), operator="distill"))

    def cell(p):
        return {"status": "ok", "rows": {"m": {"best_policy": p.to_json()}}}

    cells = {"a": cell(evolved), "b": cell(same), "c": cell(other), "d": {"status": "failed"}}
    got = adapter_twins.twins(cells, best)
    assert list(got) == [evolved.id]  # the seed's own prompt and the adapter-free are no twins
    c, p, twin = got[evolved.id]
    assert c == "a" and p.id == evolved.id
    assert twin.adapter == evolved.adapter and twin.render() == best.render()
    assert twin.decoding == best.decoding and twin.id != best.id
