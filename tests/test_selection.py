"""Selection you can trust: real training instances in the batch mix, reference-based reward
components, racing, the selection/confirmation split, paired comparisons with an interval, and
the return rule. Fakes only (a scripted LLM and a stand-in corpus written by the test)."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import numpy as np
import pytest

from evotrainer.coevolution import CoEvolution
from evotrainer.config import config_from_dict
from evotrainer.defences.constitution import Constitution
from evotrainer.errors import DataError
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.fitness import FitnessJudge
from evotrainer.evaluation.paired import (
    paired_difference,
    runs_and_instances_difference,
    runs_difference,
)
from evotrainer.evaluation.validation import Validator
from evotrainer.harness.genome import HarnessGenome
from evotrainer.harness.reference import reference_components
from evotrainer.harness.reward import weighted_reward
from evotrainer.harness.training_set import BatchSource, load_real_pool, share_weights
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.policy.genome import PolicyGenome
from evotrainer.run.validation_set import split_confirmation
from evotrainer.tasks.meetings.task import MeetingTask
from tests.fake_meetings import RecordingMeetingTask, honest_minutes, write_corpus
from tests.fake_runs import Killed, comparable_summary

GOOD = "Write the minutes topic by topic with the decisions."
BAD = "Write one word."


def scripted(task: RecordingMeetingTask, bad_on: frozenset[str] = frozenset()) -> FunctionLLM:
    """Honest minutes, except a policy with a template gets full minutes and "Write one word"
    gets one word; ``bad_on``: instance ids where templates give junk."""

    def answer(messages, params):
        content = messages[-1].content
        meeting = task.by_prompt.get(content)
        if meeting is None:
            return "Write the minutes with the decisions and owners."
        if "one word" in content:
            return "Minutes."
        if "Use this output format" in content:
            if meeting.id in bad_on:
                return "Minutes."
            return honest_minutes(meeting) + "\n" + "\n".join(meeting.summary)
        lines = honest_minutes(meeting).splitlines()
        return "\n".join(lines[: max(3, len(lines) // 2)])

    return FunctionLLM(answer, model_id="fake:scripted")


def test_paired_difference_interval():
    rng = np.random.default_rng(1)
    a = {str(i): float(x) for i, x in enumerate(rng.normal(0.3, 0.1, 200))}
    b = {k: v - 0.05 + float(rng.normal(0, 0.02)) for k, v in a.items()}
    d = paired_difference(a, b)
    assert d.n == 200 and d.lo < 0.05 < d.hi and d.above_zero
    same = paired_difference({"x": 0.2, "y": 0.3}, {"x": 0.1, "y": 0.2})
    assert same.mean == pytest.approx(0.1) and same.lo == pytest.approx(0.1) == same.hi
    assert paired_difference({"x": 1.0}, {"y": 1.0}).n == 0  # nothing shared
    one = paired_difference({"x": 0.3}, {"x": 0.1})  # one meeting: no interval, never "above"
    assert one.n == 1 and not one.above_zero
    assert str(one) == "+0.200 (no interval from 1 instance) over 1"


def test_several_runs_of_one_side_are_averaged_per_instance_or_resampled_too():
    """A benchmark's method has several runs (seeds): ``runs_difference`` averages them per
    instance (the same mean and interval as the paired difference of the averages);
    ``runs_and_instances_difference`` has that mean and a wider interval when the runs
    disagree (which result a run ends with is random too)."""
    rng = np.random.default_rng(3)
    base = rng.uniform(0.1, 0.3, 60)
    runs = [list(base + 0.04 + rng.normal(0, 0.02, 60)) for _ in range(2)] + [list(base)]
    avg = np.mean(runs, axis=0)
    d = runs_difference(runs, list(base), seed=5)
    same = paired_difference(
        {
            f"{i:03d}": round(float(x - y), 12) + 0.0
            for i, (x, y) in enumerate(zip(avg, base, strict=True))
        },
        {f"{i:03d}": 0.0 for i in range(60)},
        seed=5,
    )
    assert (d.mean, d.lo, d.hi, d.n) == pytest.approx((same.mean, same.lo, same.hi, same.n))
    both = runs_and_instances_difference(runs, [list(base)], seed=5)
    assert both.mean == pytest.approx(d.mean) and both.lo < d.lo and both.hi > d.hi
    assert runs_difference([[0.5, None, 0.7]], [0.4, 0.3, None]).n == 1  # no score: left out
    zero = runs_and_instances_difference([list(base)], [list(base)])
    assert zero.mean == zero.lo == zero.hi == 0.0
    assert runs_and_instances_difference([], [[0.1]]).n == 0


def test_confirmation_split_interleaves_and_refuses_too_little_selection():
    insts = MeetingTask().synthetic_validation(10, 0)
    sel, conf = split_confirmation(insts, 4)
    assert len(sel) == 6 and len(conf) == 4
    assert not {i.id for i in sel} & {i.id for i in conf}
    positions = [insts.index(i) for i in conf]
    assert positions[0] > 0 and positions[-1] < 9  # interleaved, not one end of the list
    with pytest.raises(Exception, match="validation.confirm"):
        split_confirmation(insts, 9)


def test_batches_mix_real_and_synthetic_and_never_hold_validation(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.jsonl", 12, seed=1)
    task = MeetingTask()
    held = {f"corpus-1-{i}" for i in (0, 5)}
    pool = load_real_pool(task, str(corpus), held, lambda i: i.payload.transcript_text())
    assert len(pool.instances) == 10 and pool.held_out == 2 and "held out" in pool.message
    src = BatchSource(task.generator(), pool.instances)
    for share, want in ((0.0, 0), (0.5, 3), (1.0, 6)):
        h = HarnessGenome({"completeness": 1.0}, {"difficulty": 0.3, "real_share": share})
        batch = src.sample(6, h, random.Random(3))
        assert sum(i.real for i in batch) == want and len(batch) == 6
        assert not {i.id for i in batch} & held
    # L is the length preference on real instances: long ones at L=1, short ones at L=0
    lengths = {i.id: len(i.payload.transcript_text()) for i in pool.instances}

    def mean_len(L):
        picks = [src.real_sample(2, L, random.Random(s)) for s in range(30)]
        return sum(lengths[i.id] for p in picks for i in p) / 60

    assert mean_len(1.0) > mean_len(0.0)
    with pytest.raises(DataError, match="not found"):  # a file one names must exist
        load_real_pool(task, str(tmp_path / "nope.jsonl"), set(), str)


def test_reference_components_apply_to_real_instances_only(tmp_path):
    task = MeetingTask()
    real = task.load(write_corpus(tmp_path / "c.jsonl", 1, seed=2))[0]
    synthetic = task.synthetic_validation(1, 0)[0]
    comps = reference_components(task.validation_metric(), ["rougeL", "decision_recall"])
    out = honest_minutes(real.payload)
    on_real = comps["ref_rougeL"].score(real, out, task.parse(out))
    on_syn = comps["ref_rougeL"].score(synthetic, out, task.parse(out))
    assert on_real.applicable and on_real.score > 0.1
    assert not on_syn.applicable
    with pytest.raises(Exception, match="harness.reference_components"):
        reference_components(task.validation_metric(), ["rogueL"])
    # the weighted reward renormalises over what applies: a synthetic rollout ignores ref_*
    assert weighted_reward({"a": 0.5}, {"a": 1.0, "ref_rougeL": 3.0}) == 0.5


def _judge(task, llm, race_first):
    ev = Evaluator(task, llm, SamplingParams(max_tokens=64), components=task.reward_components())
    return ev, FitnessJudge(task, ev, Constitution(), 3, race_first=race_first)


def test_racing_stops_a_hopeless_child_early_and_keeps_a_promising_one():
    task = RecordingMeetingTask()
    llm = scripted(task)
    batch = task.generator().sample(6, 0.2, random.Random(0))
    h = HarnessGenome({"completeness": 0.6, "format": 0.4}, {"difficulty": 0.2})
    ev, judge = _judge(task, llm, race_first=2)
    elites = [PolicyGenome({"system": GOOD}), PolicyGenome({"system": GOOD + " Be brief."})]
    judge(elites, batch, h, 0)
    bad = PolicyGenome({"system": BAD})
    good = PolicyGenome({"system": GOOD, "template": "Summary:\n- <point>\nDecisions:\n- <d>"})
    fits = judge([bad, good], batch, h, 0, incumbents=elites, survivors=2)
    assert fits[bad.id].n == 2, "the hopeless child met only the first instances"
    assert fits[good.id].n == 6, "the promising child met the whole batch"
    assert fits[bad.id].fitness < min(judge([e], batch, h, 0)[e.id].fitness for e in elites)
    assert judge.race.raced_out == 1 and judge.race.race_saved == 4
    assert sum(1 for k in ev.store if k[0] == bad.id) == 2
    # racing off: everyone meets everything
    _, plain = _judge(task, llm, race_first=0)
    assert plain([bad], batch, h, 0, incumbents=elites, survivors=2)[bad.id].n == 6


def test_two_instances_under_one_id_are_refused():
    """The evaluator's store is keyed by (policy id, instance id): a second, different instance
    under a known id would make the score depend on which one came first."""
    task = RecordingMeetingTask()
    ev, _ = _judge(task, scripted(task), race_first=0)
    a, b = task.generator().sample(2, 0.2, random.Random(0))
    p = PolicyGenome({"system": GOOD})
    ev.evaluate([p], [a])
    ev.evaluate([p], [replace(a, payload=a.payload)])  # the same content again: fine
    with pytest.raises(ValueError, match=f"share the id '{a.id}'"):
        ev.evaluate([p], [replace(b, id=a.id)])


def test_validator_race_gives_partial_estimates():
    task = RecordingMeetingTask()
    llm = scripted(task)
    insts = task.synthetic_validation(6, 1)
    ev = Evaluator(task, llm, SamplingParams(max_tokens=64))
    v = Validator(task, ev, insts, {"rougeL": 0.5, "action_item_f1": 0.5}, "test")
    ref = PolicyGenome({"system": GOOD})
    v.validate([ref])
    bad = PolicyGenome({"system": BAD})
    better = PolicyGenome({"system": GOOD, "template": "Summary:\n- <p>\nDecisions:\n- <d>"})
    res = v.race([bad, better], ref, first=2, margin=0.0)
    assert res[bad.id].partial and res[bad.id].n == 2 and bad.id not in v.memo
    assert not res[better.id].partial and res[better.id].n == 6
    assert res[bad.id].s_val < v.memo[ref.id].s_val
    assert res[bad.id].s_val >= 0.0  # the paired estimate is floored at 0


def test_a_raced_out_estimate_is_never_negative():
    """The reference scores high on the first instances and low on the rest; a policy that
    scores 0 on the first ones would be estimated below 0 without the floor."""
    task = RecordingMeetingTask()
    insts = task.synthetic_validation(4, 1)
    ev = Evaluator(task, scripted(task), SamplingParams(max_tokens=64))
    v = Validator(task, ev, insts, {"rougeL": 0.5, "action_item_f1": 0.5}, "test")
    ref = PolicyGenome({"system": GOOD})
    v.validate([ref])
    r = v.memo[ref.id]
    rows = [dict(row) for row in r.per_instance]
    for i, row in enumerate(rows):  # high on the first two instances, 0 on the last two
        row["rougeL"] = row["action_item_f1"] = 1.0 if i < 2 else 0.0
    v.memo[ref.id] = type(r)(
        s_val=0.5,
        aggregates=r.aggregates,
        per_instance=tuple(rows),
        n=r.n,
        truncation=r.truncation,
    )
    bad = PolicyGenome({"system": BAD})
    res = v.race([bad], ref, first=2, margin=0.0)
    assert res[bad.id].partial and res[bad.id].s_val == 0.0


def _run_config(tmp_path, corpus, val, **over):
    data = {
        "seed": 4,
        "cache": {"path": str(tmp_path / "cache.sqlite")},
        "report": False,
        "inner": {
            "population": 5,
            "elites": 2,
            "tasks_per_generation": 4,
            "generations": 6,
            "seed_prompts": [GOOD, "Summarise the meeting and its decisions.", BAD],
            "operators": {"template": 3.0, "keyword": 1.0, "synonym": 1.0},
        },
        "outer": {"every": 3, "variants": 1},
        "harness": {"real_data": str(corpus), "real_share": 0.5},
        "validation": {"data": str(val), "limit": 8, "confirm": 4, "race_first": 2},
    }
    for k, v in over.items():
        data[k] = {**data.get(k, {}), **v}
    return config_from_dict(data)


def test_run_returns_an_evolved_policy_confirmed_on_held_out_meetings(tmp_path):
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()
    co = CoEvolution(_run_config(tmp_path, corpus, val), task=task, llm=scripted(task))
    result = co.run(tmp_path / "run")
    s = result.summary
    c = s["confirmation"]
    assert c["n"] == 4 and s["validation"]["n"] == 4
    assert set(c["instance_ids"]).isdisjoint(i.id for i in co.components.validator.instances)
    assert "template" in result.best.components, "the template operator found the better policy"
    assert c["returned"] == result.best.id == c["winner"] != c["best_seed"]
    assert c["difference"]["mean"] > 0 and c["reason"].startswith("confirmed")
    # no validation instance (selection or confirmation) ever reached a training signal
    held = {i.id for i in co.components.validation_set.instances}
    assert co.state.train_ids and not co.state.train_ids & held
    assert any(i.startswith("corpus-5-") for i in co.state.train_ids), (
        "real instances were trained on"
    )
    refs = {task.reference_example(i) for i in co.components.validation_set.instances}
    assert not refs & set(co.components.reference_examples)
    events = [json.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    kinds = {e["type"] for e in events}
    assert {"trial_started", "trial_finished", "validation_started", "confirmation"} <= kinds
    assert s["training"]["real_pool"] == 10


def test_run_returns_the_best_seed_when_confirmation_disagrees(tmp_path):
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()
    cfg = _run_config(tmp_path, corpus, val)
    probe = CoEvolution(cfg, task=task, llm=scripted(task))
    confirmation_ids = frozenset(i.id for i in probe.components.validation_set.confirmation)
    # templates help on the selection meetings but give junk on the confirmation ones
    co = CoEvolution(cfg, task=task, llm=scripted(task, bad_on=confirmation_ids))
    result = co.run(tmp_path / "run")
    c = result.summary["confirmation"]
    assert c["winner"] != c["best_seed"] and "template" in co.state.policies[c["winner"]].components
    assert c["returned"] == c["best_seed"] == result.best.id
    assert c["difference"]["mean"] < 0 and c["reason"].startswith("not confirmed")
    assert result.summary["best_policy"] == c["best_seed"]


def test_steering_raises_the_real_share_and_the_reference_weight_when_the_proxy_misleads():
    from evotrainer.config import OuterConfig
    from evotrainer.harness.genes import default_bounds
    from evotrainer.loops.outer import HarnessOptimizer
    from evotrainer.loops.rng import stream
    from evotrainer.loops.weakness import WeaknessReport

    base = HarnessGenome(
        {"completeness": 0.5, "ref_rougeL": 0.5}, {"difficulty": 0.3, "real_share": 0.4}
    )
    space = ("completeness", "ref_rougeL")

    steers: list[HarnessGenome] = []

    def steered(real_pool, best_s_val):
        hopt = HarnessOptimizer(
            OuterConfig(real_share_step=0.2),
            base,
            default_bounds(real_pool=True),
            stream(0, "t"),
            space,
            real_pool=real_pool,
        )
        report = WeaknessReport(
            s_val=0.15,
            s_val_by_length={},
            train_reward=0.6,
            train_components={"completeness": 0.6, "ref_rougeL": 0.2},
            validation={"rougeL": 0.2},
            best_s_val=best_s_val,
        )
        # a steered variant equal to the incumbent is deduplicated away: then it is the incumbent
        variants = hopt.ask(report)
        steers[:] = [v for v in variants if v.operator == "steer"]
        return steers[0] if steers else variants[0]

    misled = steered(True, best_s_val=0.25)  # the proxy's best validates 0.10 below the best
    assert misled.real_share == pytest.approx(0.6) and "real share up" in misled.note
    # ... and a line search towards the reference components: half of the other components'
    # weight (reference_shift), then all of it, where only real instances can score
    assert misled.weights == pytest.approx({"completeness": 0.25, "ref_rougeL": 0.75})
    assert "reference ones" in misled.note
    assert len(steers) == 2 and steers[1].weights == {"ref_rougeL": 1.0}
    assert steers[1].real_share == 1.0 and "only they score" in steers[1].note
    assert "real share up to" not in steers[1].note  # one note per gene
    agreed = steered(True, best_s_val=0.16)  # within DISAGREE
    assert agreed.real_share == pytest.approx(0.4) and agreed.weights == base.weights
    no_pool = steered(False, best_s_val=0.25)
    assert no_pool.real_share == pytest.approx(0.4) and no_pool.weights == base.weights


def test_the_outer_step_cost_counts_every_steered_variant():
    """A gamed component while the proxy misleads: the line search towards the references and
    two kept shares of the gamed weight make up to four steered variants, more than
    ``outer.variants``; the outer step's cost estimate (``skip_unaffordable``) counts them."""
    from evotrainer.config import OuterConfig
    from evotrainer.harness.genes import default_bounds
    from evotrainer.loops.outer import HarnessOptimizer
    from evotrainer.loops.rng import stream
    from evotrainer.loops.weakness import WeaknessReport

    base = HarnessGenome(
        {"completeness": 0.5, "format": 0.2, "ref_rougeL": 0.3}, {"difficulty": 0.3}
    )
    space = ("completeness", "format", "ref_rougeL")
    report = WeaknessReport(
        s_val=0.15,
        s_val_by_length={},
        train_reward=0.6,
        train_components={"completeness": 1.0, "format": 1.0, "ref_rougeL": 0.2},
        validation={"rougeL": 0.2},
        best_s_val=0.25,
        suspects=("completeness",),
    )

    def hopt(real_pool: bool) -> HarnessOptimizer:
        cfg = OuterConfig(variants=1)
        return HarnessOptimizer(
            cfg, base, default_bounds(real_pool), stream(0, "t"), space, real_pool=real_pool
        )

    h = hopt(True)
    variants = h.ask(report)
    assert variants[0].id == base.id  # the incumbent
    # half and all of the other weight to the references, each keeping half and a tenth of
    # the gamed weight (with all of it moved, both keep the same: one variant)
    assert len([v for v in variants if v.operator == "steer"]) == 3
    assert h.cfg.variants < len(variants) - 1 <= h.max_variants() == 4
    h = hopt(False)  # no real instances: no line search, two kept shares
    assert len(h.ask(report)) - 1 <= h.max_variants() == 2


def test_a_reinjected_policy_survives_selection_like_an_elite():
    from evotrainer.config import InnerConfig
    from evotrainer.evaluation.evaluator import PolicyFitness
    from evotrainer.loops.inner import PolicyOptimizer

    seeds = [PolicyGenome.from_text(f"Write minutes, variant number {i}.") for i in range(4)]
    opt = PolicyOptimizer(InnerConfig(population=4, elites=2), seeds, random.Random(0))

    def fit(p, f):
        return PolicyFitness(p.id, f, {}, 1, 0)

    opt.ask()
    opt.tell({p.id: fit(p, 0.5 + i / 10) for i, p in enumerate(seeds)})
    archived = PolicyGenome.from_text("The archive's best policy, which validates well.")
    opt.inject(archived, fit(archived, 0.1), protect=True)  # low training fitness
    opt.shrink_to_elites()
    assert archived in opt.population and len(opt.population) == 3  # 2 elites + protected
    children = opt.ask()
    opt.tell({c.id: fit(c, 0.95) for c in children})
    assert archived in opt.population, "selection did not drop the protected policy"
    assert opt.state_dict()["protected"] == archived.id


def test_the_anchor_parents_its_share_of_children():
    """inner.anchor_share: a first parent is the protected (best validated) policy with that
    probability, whatever its training fitness; a second parent never is by that rule."""
    from evotrainer.config import InnerConfig
    from evotrainer.evaluation.evaluator import PolicyFitness
    from evotrainer.loops.inner import PolicyOptimizer

    seeds = [PolicyGenome.from_text(f"Write minutes, variant number {i}.") for i in range(4)]
    anchor = PolicyGenome.from_text("The archive's best policy, which validates well.")

    def parents(share: float, first: bool) -> list[str]:
        opt = PolicyOptimizer(
            InnerConfig(population=4, elites=2, anchor_share=share), seeds, random.Random(0)
        )
        opt.ask()
        opt.tell({p.id: PolicyFitness(p.id, 0.5 + i / 10, {}, 1, 0) for i, p in enumerate(seeds)})
        opt.inject(anchor, PolicyFitness(anchor.id, 0.0, {}, 1, 0), protect=True)
        return [opt._tournament(first=first).id for _ in range(400)]

    share = parents(0.5, True).count(anchor.id) / 400
    assert 0.4 < share < 0.6  # never by tournament: its training fitness is the lowest
    assert parents(1.0, True) == [anchor.id] * 400
    assert anchor.id not in parents(0.0, True) and anchor.id not in parents(1.0, False)


def _events_of(run_dir) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("each", [0, 2])
def test_children_are_validated_after_every_generation_and_the_best_anchors(tmp_path, each):
    """validation.each_generation: after every generation the N fittest unvalidated members
    race on the selection part; full validations enter the archive; the best validated policy
    (here a seed, then a template child) is the protected anchor of the population."""
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()
    cfg = _run_config(tmp_path, corpus, val, validation={"each_generation": each})
    co = CoEvolution(cfg, task=task, llm=scripted(task))
    result = co.run(tmp_path / "run")
    events = _events_of(tmp_path / "run")
    per_gen: dict[int, list[dict]] = {}
    for e in events:
        if e["type"] == "validation" and e["role"] == "generation":
            per_gen.setdefault(e["generation"], []).append(e)
    if each == 0:
        assert not per_gen
    else:
        assert per_gen and all(len(v) <= each for v in per_gen.values())
        assert set(per_gen) <= set(range(1, cfg.inner.generations + 1))
        validated = {e["policy_id"] for v in per_gen.values() for e in v}
        assert len(validated) == sum(len(v) for v in per_gen.values()), "validated twice"
        full = {e["policy_id"] for v in per_gen.values() for e in v if not e["partial"]}
        archived = {a.policy.id for a in co.state.hopt.archive.entries}
        assert full and full <= archived and not (validated - full) & archived
    anchors = [e for e in events if e["type"] == "reinject" and e.get("reason") == "anchor"]
    assert anchors, "the best validated policy never became the anchor"
    best = co.state.hopt.archive.best()
    assert co.state.inner.protected == best.policy.id
    assert best.policy.id in {p.id for p in co.state.inner.population}
    assert "template" in result.best.components


def test_a_raced_out_child_is_not_validated_again(tmp_path):
    """Templates give junk on the first selection meetings: template children, the fittest in
    training, race out there; each is raced once, and later generations validate others."""
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()
    cfg = _run_config(tmp_path, corpus, val, validation={"each_generation": 2})
    head = frozenset(i.id for i in CoEvolution(cfg, task=task).components.validator.instances[:2])
    co = CoEvolution(cfg, task=task, llm=scripted(task, bad_on=head))
    co.run(tmp_path / "run")
    vals = [
        e
        for e in _events_of(tmp_path / "run")
        if e["type"] == "validation" and e["role"] == "generation"
    ]
    raced = [e["policy_id"] for e in vals if e["partial"]]
    assert raced, "no child raced out: the scenario did not happen"
    assert len(raced) == len(set(raced)) and set(raced) <= co.components.validator.raced_out
    assert len({e["policy_id"] for e in vals}) == len(vals), "a policy was validated twice"


def test_children_are_ranked_for_validation_by_a_paired_estimate(tmp_path):
    """A child of a validated ancestor in the population is estimated at that ancestor's s_val
    plus its training gain over it (paired, same batch); it ranks before members with no such
    ancestor, whatever their training fitness."""
    from dataclasses import replace

    from evotrainer.evaluation.evaluator import PolicyFitness
    from evotrainer.types import ValidationResult

    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()
    co = CoEvolution(_run_config(tmp_path, corpus, val), task=task, llm=scripted(task))
    anchor = PolicyGenome.from_text("The best validated policy.")
    other = PolicyGenome.from_text("A proxy favourite with no validated ancestor.")

    def child(parent: PolicyGenome, text: str) -> PolicyGenome:
        c = PolicyGenome.from_text(text)
        return replace(c, lineage=replace(c.lineage, parents=(parent.id,), operator="keyword"))

    good = child(anchor, "The best validated policy. Be concise.")
    worse = child(anchor, "The best validated policy. Be verbose.")
    grandchild = child(good, "The best validated policy. Be concise. Name owners.")
    fits = [(anchor, 0.2), (other, 0.9), (good, 0.3), (worse, 0.1), (grandchild, 0.25)]
    for p, f in fits:
        co.state.policies[p.id] = p
        co.state.inner.fitness[p.id] = PolicyFitness(p.id, f, {}, 4, 0)
    co.state.inner.population = [p for p, _ in fits]
    co.components.validator.memo[anchor.id] = ValidationResult(0.5, {}, (), 8, "")
    from evotrainer.engine.validate import promise

    def promise_of(p: PolicyGenome) -> tuple[int, float]:
        return promise(co.components, co.state, p)

    ranked = sorted([other, good, worse, grandchild], key=promise_of, reverse=True)
    assert ranked == [good, grandchild, worse, other]
    assert promise_of(good) == (1, pytest.approx(0.6))  # 0.5 + (0.3 - 0.2)
    assert promise_of(grandchild) == (1, pytest.approx(0.55))  # through its parent
    assert promise_of(other) == (0, 0.9)


def test_the_anchors_structural_neighbours_are_its_first_children():
    """inner.neighbours: when a policy becomes the anchor, its one-step structural neighbours
    (each library template swapped in, each seed phrase added) are the anchor's share of the
    next children, one by one, never twice; they survive a checkpoint (a harness trial's copy
    of the optimiser has none: the queue is the main line's)."""
    from evotrainer.config import InnerConfig
    from evotrainer.evaluation.evaluator import PolicyFitness
    from evotrainer.loops.inner import OperatorResources, PolicyOptimizer
    from evotrainer.tasks.meetings.structure import TEMPLATES
    from evotrainer.tasks.meetings.style import VOCABULARY

    seeds = [PolicyGenome.from_text(f"Write minutes, variant number {i}.") for i in range(6)]
    anchor = PolicyGenome.from_text("Write the minutes of the meeting.")

    def optimizer(neighbours: bool) -> PolicyOptimizer:
        cfg = InnerConfig(population=6, elites=2, anchor_share=0.5, neighbours=neighbours)
        opt = PolicyOptimizer(cfg, seeds, random.Random(0))
        opt.resources = OperatorResources(templates=TEMPLATES, vocabulary=VOCABULARY)
        opt.ask()
        opt.tell({p.id: PolicyFitness(p.id, 0.5 + i / 10, {}, 1, 0) for i, p in enumerate(seeds)})
        opt.inject(anchor, PolicyFitness(anchor.id, 0.0, {}, 1, 0), protect=True)
        opt.explore_neighbours(anchor)
        return opt

    opt = optimizer(True)
    n_moves = len(opt.moves)
    assert n_moves == len(TEMPLATES) + len(VOCABULARY.seed_phrases)
    assert [k for k, _ in opt.moves[:4]] == ["template", "keyword", "template", "keyword"]
    twin = opt.clone(random.Random(1))
    assert not twin.moves, "a trial's copy makes children by the operators only"
    restored = PolicyOptimizer(opt.cfg, seeds, random.Random(2))
    restored.load_state_dict(json.loads(json.dumps(opt.state_dict())))
    assert restored.moves == opt.moves
    made: list[PolicyGenome] = []
    while opt.moves:
        left = len(opt.moves)
        children = opt.ask()  # 4 children: 2 neighbours, 2 from the operators
        first = [c for c in children if c.lineage.note.startswith("neighbour:")]
        assert children[: len(first)] == first and len(first) == min(2, left)
        assert len(children) == 4
        made += first
        opt.tell({c.id: PolicyFitness(c.id, 0.1, {}, 1, 0) for c in children})
    assert len({c.id for c in made}) == len(made) >= n_moves - 2  # one an operator made first
    assert all(c.lineage.parents == (anchor.id,) for c in made)
    for t in TEMPLATES:  # every template neighbour was tried (made here, or seen before)
        assert PolicyGenome({**anchor.components, "template": t}).id in opt.seen
    added = [c.system for c in made if c.lineage.operator == "keyword"]
    assert all(s.startswith(anchor.system) and s != anchor.system for s in added)
    assert not optimizer(False).moves
    later = opt.ask()  # the queue is spent: every child comes from the operators again
    assert not any(c.lineage.note.startswith("neighbour:") for c in later)


def test_an_outer_step_the_budget_cannot_pay_for_is_skipped(tmp_path):
    """outer.skip_unaffordable: with too few calls left for an outer step's trials and their
    validation, the step is skipped (the best policy is still validated) and the inner loop
    goes on; without the rule the step starts and the budget runs out inside it."""
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()

    def run(skip: bool, name: str) -> tuple[list[dict], dict]:
        cfg = _run_config(
            tmp_path,
            corpus,
            val,
            budget={"max_calls": 140},
            outer={"skip_unaffordable": skip, "trials": "rerun"},  # the costlier trials
            cache={"path": str(tmp_path / f"{name}.sqlite")},
        )
        result = CoEvolution(cfg, task=task, llm=scripted(task)).run(tmp_path / name)
        return _events_of(tmp_path / name), result.summary

    events, summary = run(True, "skip")
    kinds = [e["type"] for e in events]
    skipped = [e for e in events if e["type"] == "outer_step_skipped"]
    assert skipped and "trial_started" not in kinds
    assert all(e["estimate"] > e["calls_left"] for e in skipped)
    # each one a validation of the best, never counted as an outer step taken (issue 51)
    assert summary["outer_steps"] == 0 and summary["outer_steps_skipped"] == len(skipped)
    assert summary["generations"] > 3, "the inner loop went on after the skipped step"
    events, _ = run(False, "noskip")
    assert "trial_started" in {e["type"] for e in events}
    assert "outer_step_skipped" not in {e["type"] for e in events}


def test_rerank_trials_share_one_trial_run(tmp_path):
    """outer.trials: rerank: an outer step runs one trial generation under the current harness
    and each variant ranks that population by its own weights, so its variants cost almost
    nothing beyond that generation; rerun runs a trial per variant."""
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()

    def run(mode: str) -> tuple[dict, list[dict]]:
        cfg = _run_config(
            tmp_path,
            corpus,
            val,
            outer={"variants": 2, "trials": mode},
            cache={"path": str(tmp_path / f"{mode}.sqlite")},
        )
        result = CoEvolution(cfg, task=task, llm=scripted(task)).run(tmp_path / mode)
        return result.summary, _events_of(tmp_path / mode)

    def trial_gaps(events: list[dict]) -> list[int]:
        """Calls between a step's first and last finished trial."""
        by_step: dict[int, list[int]] = {}
        for e in events:
            if e["type"] == "trial_finished":
                by_step.setdefault(e["outer_step"], []).append(e["budget"]["llm_calls"])
        return [max(c) - min(c) for c in by_step.values()]

    s, events = run("rerank")
    steps = [e for e in events if e["type"] == "outer_step"]
    assert steps and s["trial_generations"] == len(steps)  # one trial run per step
    assert all(len(e["trial_best"]) == 3 for e in steps)  # incumbent + 2 variants ranked
    assert {e["mode"] for e in events if e["type"] == "trial_started"} == {"rerank"}
    s2, events2 = run("rerun")
    assert s2["trial_generations"] == 3 * len([e for e in events2 if e["type"] == "outer_step"])
    per_run = 2 * 4  # elites re-scored on the trial batch, at the least
    assert max(trial_gaps(events)) < per_run <= min(trial_gaps(events2))


FULL = "Write the full minutes of the meeting."


def real_only(task: RecordingMeetingTask) -> FunctionLLM:
    """FULL writes whole minutes of a real meeting and junk on a synthetic one; every other
    policy writes whole minutes of a synthetic meeting and half of them on a real one. Half of
    a batch synthetic (real share 0.5), the training reward prefers the others; the real data,
    and the validation set, prefer FULL."""

    def answer(messages, params):
        meeting = task.by_prompt.get(messages[-1].content)
        if meeting is None:
            return "Write the minutes with the decisions and owners."
        synthetic = meeting.id.startswith("syn-")
        if "one word" in messages[-1].content:
            return "Minutes."
        if FULL in messages[-1].content:
            return "Minutes." if synthetic else honest_minutes(meeting)
        lines = honest_minutes(meeting).splitlines()
        return "\n".join(lines if synthetic else lines[: max(3, len(lines) // 2)])

    return FunctionLLM(answer, model_id="fake:real-only")


def _share_config(tmp_path, corpus, val):
    return _run_config(
        tmp_path,
        corpus,
        val,
        inner={
            "generations": 4,
            "seed_prompts": [GOOD, FULL, BAD],
            "operators": {"keyword": 1.0, "synonym": 1.0},
        },
        outer={"every": 1, "variants": 1, "real_share_step": 0.5},
    )


def test_share_weights_stand_for_a_batch_drawn_at_another_real_share(tmp_path):
    task = RecordingMeetingTask()
    llm = real_only(task)
    real = task.load(write_corpus(tmp_path / "c.jsonl", 2, seed=2))
    batch = [*real, *task.generator().sample(2, 0.2, random.Random(1))]
    ev, judge = _judge(task, llm, race_first=0)
    h = HarnessGenome({"completeness": 1.0}, {"difficulty": 0.2, "real_share": 0.5})
    policies = [PolicyGenome({"system": GOOD}), PolicyGenome({"system": FULL})]
    judge(policies, batch, h, 0)
    assert share_weights(batch, 0.5, 0.5) is None  # the batch's own share: the plain mean
    assert share_weights(real, 0.5, 1.0) is None  # one kind only: nothing to re-weight
    for share in (0.0, 0.3, 1.0):
        w = share_weights(batch, 0.5, share)
        for p in policies:
            r = {i.id: weighted_reward(ev.store[(p.id, i.id)].vector, h.weights) for i in batch}
            want = share * (r[real[0].id] + r[real[1].id]) / 2
            want += (1 - share) * sum(r[i.id] for i in batch[2:]) / 2
            got = ev.fitness(p.id, batch, h.weights, instance_weights=w).fitness
            assert got == pytest.approx(want)


def test_rerank_trials_a_variants_real_share_by_reweighting_the_batch(tmp_path):
    """The steered variants (the proxy misleads: real share 0.5 -> 1.0, half and then all of
    the weight on the reference components) rank the shared trial population with the batch's
    real instances weighted to their share: they pick FULL, which the incumbent's ranking does
    not, FULL validates higher and the harness changes. Before, the real-share gene was not
    trialled."""
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    task = RecordingMeetingTask()
    co = CoEvolution(_share_config(tmp_path, corpus, val), task=task, llm=real_only(task))
    result = co.run(tmp_path / "run")
    first = next(e for e in _events_of(tmp_path / "run") if e["type"] == "outer_step")
    incumbent, *steered = first["variants"]
    assert incumbent["real_share"] == 0.5 and steered
    ref = lambda w: w.get("ref_rougeL", 0) + w.get("ref_action_item_f1", 0)  # noqa: E731
    for v in steered:
        assert v["real_share"] == 1.0 and "reference ones" in v["note"]
        assert ref(v["weights"]) > ref(incumbent["weights"])
    a, *b = first["trial_best"]
    assert FULL not in co.state.policies[a].render()
    assert all(FULL in co.state.policies[x].render() for x in b)
    assert min(first["s_vals"][1:]) > first["s_vals"][0] and first["changed"]
    assert result.summary["harness"]["real_share"] == 1.0


def test_a_resume_after_a_winner_with_another_real_share_keeps_the_trials_batch(tmp_path):
    """After that step the main line goes on with the trial's batch, drawn at the old real
    share; a resumed run must redraw that batch (the harness that drew it is checkpointed),
    not one drawn by the new harness."""
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    cfg = _share_config(tmp_path, corpus, val)
    task = RecordingMeetingTask()
    CoEvolution(cfg, task=task, llm=real_only(task)).run(tmp_path / "clean")
    after: list[str] = []  # the events since the outer step that changed the harness

    def kill_after_the_step(event):  # in the generation after that step's checkpoint
        if event.type == "outer_step" and event.data["changed"] and not after:
            after.append("changed")
        elif after:
            after.append(event.type)
            if event.type == "generation" and "checkpoint" in after:
                raise Killed("killed after the harness changed")

    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=real_only(task), observers=[kill_after_the_step])
    with pytest.raises(Killed):
        co.run(tmp_path / "run")
    task = RecordingMeetingTask()
    resumed, path = CoEvolution.resume(tmp_path / "run", task=task, llm=real_only(task))
    assert resumed.state.drawn.real_share == 0.5 and resumed.state.harness.real_share == 1.0
    resumed.run(path)
    assert comparable_summary(tmp_path / "run") == comparable_summary(tmp_path / "clean")
    steps = [
        sum(e["type"] == "outer_step" for e in _events_of(tmp_path / d)) for d in ("run", "clean")
    ]
    assert steps[0] == steps[1], "the resumed run took no outer step the clean run did not"


class _StubValidator:
    """validate() and row_s_vals() of a Validator over fixed per-meeting s_vals."""

    def __init__(self, rows: dict[str, dict[str, float]]):
        self.rows = rows
        self.instances: list = []

    def validate(self, policies):
        return {
            p.id: type(
                "R",
                (),
                {
                    "s_val": float(np.mean(list(self.rows[p.id].values()))),
                    "id": p.id,
                    "per_instance": (),
                },
            )
            for p in policies
        }

    def row_s_vals(self, result):
        return self.rows[result.id]


@pytest.mark.parametrize(
    ("winner_rows", "returned_winner", "reason_start"),
    [
        ([0.30, 0.31, 0.29, 0.32], True, "confirmed: the winner beats"),
        ([0.35, 0.16, 0.33, 0.17], True, "confirmed on the mean only"),  # mean > 0, CI reaches 0
        ([0.15, 0.16, 0.14, 0.17], False, "not confirmed"),
    ],
)
def test_better_mean_says_when_the_interval_reaches_zero(
    winner_rows, returned_winner, reason_start
):
    from evotrainer.evaluation.confirmation import confirm

    seed_rows = [0.20, 0.21, 0.19, 0.22]
    w, s = PolicyGenome({"system": GOOD}), PolicyGenome({"system": BAD})
    ids = [f"m{i}" for i in range(4)]
    v = _StubValidator(
        {
            w.id: dict(zip(ids, winner_rows, strict=True)),
            s.id: dict(zip(ids, seed_rows, strict=True)),
        }
    )
    c = confirm(v, w, s, "better_mean")
    assert c.returned == (w.id if returned_winner else s.id)
    assert c.reason.startswith(reason_start), c.reason
    assert ("ci_above_zero" in c.reason) == (reason_start == "confirmed on the mean only")
