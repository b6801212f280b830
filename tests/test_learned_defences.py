"""Learned defences against reward hacking: the adversarial discriminator (policy outputs vs.
human references) and the learned reward model (predicts the validation score)."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

from evotrainer.defences.discriminator import (  # noqa: E402
    DiscriminatorReward,
    OutputDiscriminator,
    normalise_text,
)
from evotrainer.defences.learned_reward import (  # noqa: E402
    LearnedReward,
    LearnedRewardModel,
    row_target,
)
from evotrainer.evaluation.correlation import spearman  # noqa: E402
from evotrainer.tasks.base import RewardComponent  # noqa: E402
from evotrainer.tasks.meetings.features import (  # noqa: E402
    MINUTES_FEATURES,
    human_reference_pool,
)
from evotrainer.tasks.meetings.generator import MeetingGenerator, meeting_instance  # noqa: E402
from evotrainer.tasks.meetings.metrics import reference_text  # noqa: E402
from evotrainer.tasks.meetings.rewards import component_registry  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
AMI_TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "meetings" / "ami-train.jsonl"

HACK = "# Minutes\n- Someone: follow up\n- Team: check\n- All: review"
OWNERS = ["Someone", "Team", "All", "Everyone", "TBD", "Owner", "Group", "Somebody"]
TASKS = ["follow up", "check", "review", "look into it", "discuss further", "sync", "circle back"]
GARBAGE = "".join(random.Random(5).choice("abc xyz#-*:\n\u00e9\u4e2d0123") for _ in range(50_000))


def vacuous(rng: random.Random) -> str:
    head = rng.choice(["# Minutes", "# Meeting Minutes", "## Action Items", "Minutes:"])
    return "\n".join([head, *(f"- {rng.choice(OWNERS)}: {rng.choice(TASKS)}" for _ in range(3))])


def copied(rng: random.Random, meeting) -> str:
    i = rng.randrange(max(1, len(meeting.transcript) - 8))
    turns = meeting.transcript[i : i + rng.randint(3, 8)]
    return "\n".join(f"{t.speaker}: {t.text}" for t in turns)


def hack_outputs(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    gen = MeetingGenerator()
    out = []
    for k in range(n):
        out.append(vacuous(rng) if k % 2 == 0 else copied(rng, gen.meeting(rng.random(), rng)))
    return out


@pytest.fixture(scope="module")
def trained() -> tuple[OutputDiscriminator, object]:
    pool = human_reference_pool(None, 80, seed=3)
    d = OutputDiscriminator()
    report = d.fit(pool.texts, hack_outputs(80, seed=7), rng_seed=1)
    return d, report


# ---- discriminator ---------------------------------------------------------------------------


def test_discriminator_separates_references_from_hacks(trained) -> None:
    d, report = trained
    assert report.fitted and report.n_human == 80 and report.n_policy == 80
    assert report.n_test == 40
    assert report.accuracy >= 0.9 and report.auc >= 0.95, report
    held_out = human_reference_pool(None, 20, seed=99).texts  # other meetings than training
    assert not set(held_out) & set(human_reference_pool(None, 80, seed=3).texts)
    human_p = [d.prob_human(t) for t in held_out]
    assert min(human_p) > 0.7, human_p
    hacks = [HACK, *hack_outputs(12, seed=1234)]
    hack_p = [d.prob_human(t) for t in hacks]
    assert max(hack_p) < 0.3, hack_p
    assert d.prob_human(HACK) < 0.3


def test_format_blind_does_not_punish_markdown(trained) -> None:
    d, _ = trained
    ref = human_reference_pool(None, 1, seed=42).texts[0]
    markdown = "# Meeting minutes\n\n## Notes\n" + "\n".join(
        f"- **{ln}**" for ln in ref.splitlines()
    )
    assert normalise_text(markdown) == normalise_text(ref)
    assert d.prob_human(markdown) == pytest.approx(d.prob_human(ref))
    assert d.prob_human(markdown) > 0.7


def test_discriminator_untrained_and_too_few_examples() -> None:
    d = OutputDiscriminator()
    assert not d.is_fitted and d.prob_human("anything") == 0.5
    report = d.fit(["a reference line"] * 4, hack_outputs(10, 0), rng_seed=0)
    assert not report.fitted and "untrained" in report.note and report.n_human == 4
    assert not d.is_fitted and d.prob_human(HACK) == 0.5
    cs = DiscriminatorReward(d).score(None, HACK, None)  # type: ignore[arg-type]
    assert cs.name == "discriminator" and cs.score == 0.5 and "untrained" in cs.feedback


def test_discriminator_keeps_model_when_a_later_fit_is_too_small(trained) -> None:
    d, _ = trained
    clone = OutputDiscriminator()
    clone.load_state_dict(json.loads(json.dumps(d.state_dict())))
    before = clone.prob_human(HACK)
    report = clone.fit(["x y z"], [HACK], rng_seed=0)
    assert not report.fitted and "kept the previous model" in report.note
    assert clone.prob_human(HACK) == before


def test_discriminator_state_round_trip_is_identical(trained) -> None:
    d, report = trained
    state = json.loads(json.dumps(d.state_dict()))
    fresh = OutputDiscriminator(format_blind=False, C=0.1)
    fresh.load_state_dict(state)
    assert fresh.is_fitted and fresh.format_blind and fresh.report == report
    texts = [HACK, "", GARBAGE, *human_reference_pool(None, 5, seed=8).texts, *hack_outputs(5, 9)]
    assert [fresh.prob_human(t) for t in texts] == [d.prob_human(t) for t in texts]
    untrained = OutputDiscriminator()
    untrained.load_state_dict(json.loads(json.dumps(OutputDiscriminator().state_dict())))
    assert not untrained.is_fitted
    with pytest.raises(ValueError):
        fresh.load_state_dict({"format": "something else"})


def test_discriminator_is_deterministic() -> None:
    human = human_reference_pool(None, 20, seed=5).texts
    policy = hack_outputs(20, seed=6)
    a, b = OutputDiscriminator(), OutputDiscriminator()
    ra, rb = a.fit(human, policy, rng_seed=11), b.fit(human, policy, rng_seed=11)
    assert ra == rb
    assert a.state_dict() == b.state_dict()


def test_hand_predictor_matches_sklearn(trained) -> None:
    d, _ = trained
    human = human_reference_pool(None, 30, seed=21).texts
    policy = hack_outputs(30, seed=22)
    vec, scaler, lr = d._fit_sklearn(human + policy, [1] * 30 + [0] * 30, 0)
    params = d._extract(vec, scaler, lr)
    probe = [HACK, GARBAGE[:3000], *human_reference_pool(None, 4, seed=23).texts]
    sk = lr.predict_proba(d._sklearn_matrix(vec, scaler, probe))[:, 1]
    mine = [d._prob(params, t) for t in probe]
    assert mine == pytest.approx(list(sk), abs=1e-9)


def test_discriminator_reward_never_raises(trained) -> None:
    d, _ = trained
    comp = DiscriminatorReward(d)
    assert isinstance(comp, RewardComponent) and comp.name == "discriminator"
    for out in ["", "   \n# \n- ", GARBAGE, HACK, "\x00\ufffd" * 1000]:
        cs = comp.score(None, out, None)  # type: ignore[arg-type]
        assert 0.0 <= cs.score <= 1.0 and cs.feedback
    assert comp.score(None, "", None).score == 0.0  # type: ignore[arg-type]
    cs = comp.score(None, HACK, None)  # type: ignore[arg-type]
    assert "like a human reference" in cs.feedback and "machine-like" in cs.feedback
    ref = human_reference_pool(None, 1, seed=77).texts[0]
    cs = comp.score(None, ref, None)  # type: ignore[arg-type]
    assert cs.score > 0.7 and cs.feedback.startswith("looks ")


def test_human_reference_pool_sources(tmp_path: Path) -> None:
    syn = human_reference_pool(None, 6, seed=1)
    assert syn.source == "synthetic" and len(syn.texts) == 6 and all(syn.texts)
    assert human_reference_pool(None, 6, seed=1) == syn
    missing = human_reference_pool(tmp_path / "nope.jsonl", 3, seed=1)
    assert missing.source == "synthetic" and "not found" in missing.note
    fixture = FIXTURES / "synthetic_meetings.jsonl"
    pool = human_reference_pool(fixture, 10, seed=1)
    assert pool.source == f"file:{fixture}" and len(pool.texts) == 3
    pool = human_reference_pool(fixture, 10, seed=1, exclude_ids={"synth-launch-01"})
    assert len(pool.texts) == 2


@pytest.mark.realdata
@pytest.mark.skipif(not AMI_TRAIN.is_file(), reason="no ../shared/data/meetings")
def test_human_reference_pool_reads_ami_train() -> None:
    pool = human_reference_pool(AMI_TRAIN, 20, seed=0)
    assert pool.source.startswith("file:") and len(pool.texts) == 20 and all(pool.texts)


def test_modules_import_without_sklearn() -> None:
    code = (
        "import sys, evotrainer.defences.discriminator, evotrainer.defences.learned_reward;"
        "assert 'sklearn' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- learned reward model --------------------------------------------------------------------

COMPONENTS = ["completeness", "format", "action_count", "owner_accuracy", "conciseness"]
OUTPUTS = [
    "# Minutes\n- Bob: write the report\n- Alice: check the numbers",
    "Decisions: keep the launch date",
    "",
    "- A: x\n- B: y\n- C: z",
]


def synthetic_pairs(n: int, seed: int) -> list[tuple[dict[str, float], str, float, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        comps = {k: rng.random() for k in COMPONENTS}
        comps["discriminator"] = rng.random()  # never a feature
        target = 0.8 * comps["completeness"] + rng.gauss(0.0, 0.05)
        out.append((comps, OUTPUTS[i % len(OUTPUTS)], target, f"policy-{i % 10}"))
    return out


def make_model(n: int = 80, seed: int = 0) -> LearnedRewardModel:
    m = LearnedRewardModel(features=MINUTES_FEATURES)
    for comps, out, target, group in synthetic_pairs(n, seed):
        assert m.add(comps, out, target, group=group)
    return m


@pytest.fixture(scope="module")
def learned() -> tuple[LearnedRewardModel, object]:
    m = make_model()
    return m, m.fit(rng_seed=3)


def test_learned_model_predicts_the_target(learned) -> None:
    m, report = learned
    assert report.fitted and report.n_pairs == 80 and report.split == "group"
    assert report.n_test + report.n_train == 80 and report.n_test >= 12
    assert report.spearman > 0.6, report
    assert report.mae < report.baseline_mae
    assert "discriminator" not in report.features and "completeness" in report.features
    # new pairs from the same process, never seen in training
    fresh = synthetic_pairs(40, seed=99)
    pred = [m.predict(c, o) for c, o, _, _ in fresh]
    assert spearman(pred, [t for *_, t, _ in fresh]) > 0.6
    assert all(0.0 <= p <= 1.0 for p in pred)


def test_learned_model_untrained_below_min_pairs() -> None:
    m = make_model(11)
    assert m.predict({"completeness": 1.0}, "x") == 0.5
    report = m.fit(0)
    assert not report.fitted and report.n_pairs == 11 and "untrained" in report.note
    assert not m.is_fitted and m.predict({"completeness": 1.0}, "x") == 0.5
    comp = LearnedReward(m, component_registry())
    cs = comp.score(None, "x", None)  # type: ignore[arg-type]
    assert cs.name == "learned" and cs.score == 0.5 and "untrained" in cs.feedback


def test_learned_model_is_deterministic(learned) -> None:
    m, report = learned
    other = make_model()
    assert other.fit(rng_seed=3) == report
    assert other.state_dict() == m.state_dict()


def test_learned_model_state_round_trip(learned) -> None:
    m, report = learned
    fresh = LearnedRewardModel(min_pairs=99, features=MINUTES_FEATURES)
    fresh.load_state_dict(json.loads(json.dumps(m.state_dict())))
    assert fresh.is_fitted and fresh.min_pairs == 12 and len(fresh) == 80
    assert fresh.report == report
    probe = synthetic_pairs(20, seed=5)
    assert [fresh.predict(c, o) for c, o, *_ in probe] == [m.predict(c, o) for c, o, *_ in probe]
    assert fresh.fit(rng_seed=3) == report  # the pairs survive: a refit gives the same model
    light = m.state_dict(include_pairs=False)
    assert light["pairs"] == [] and light["model"] is not None
    with pytest.raises(ValueError):
        fresh.load_state_dict({"format": "nope"})


def test_learned_hand_predictor_matches_sklearn(learned) -> None:
    m, report = learned
    feats = list(report.features)
    x = [m._row(feats, c, o) for c, o, _, _ in m.pairs]
    y = [t for _, _, t, _ in m.pairs]
    sk = m._fit_sklearn(x, y, 3).predict(x)
    mine = [m._forest.predict(row) for row in x]
    assert mine == pytest.approx(list(sk), abs=1e-12)


def test_learned_model_add_skips_bad_targets_and_caps_pairs() -> None:
    m = LearnedRewardModel(max_pairs=5, features=MINUTES_FEATURES)
    assert not m.add({"a": 1.0}, "x", None)
    assert not m.add({"a": 1.0}, "x", float("nan"))
    for i in range(8):
        assert m.add({"a": i / 8, "b": float("inf")}, "x", 2.0 if i == 7 else i / 8)
    assert len(m) == 5
    assert m.pairs[0][0]["a"] == 3 / 8 and m.pairs[-1][2] == 1.0  # newest kept, target clipped
    assert m.pairs[0][0]["b"] == 0.0


def test_row_target() -> None:
    w = {"rougeL": 0.5, "action_item_f1": 0.5}
    assert row_target({"rougeL": 0.4, "action_item_f1": 0.8}, w) == pytest.approx(0.6)
    assert row_target({"rougeL": 0.4, "action_item_f1": None}, w) == pytest.approx(0.4)
    assert row_target({"rougeL": 0.4}, {"rougeL": 1.0, "action_item_f1": 3.0}) == 0.4
    assert row_target({"rouge1": 0.9}, w) is None
    assert row_target({"rougeL": float("nan"), "action_item_f1": 0.2}, w) == pytest.approx(0.2)
    assert row_target(
        {"rougeL": 0.2, "action_item_f1": 1.0}, {"rougeL": 3, "action_item_f1": 1}
    ) == (pytest.approx(0.4))


def test_spearman_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(1)
    a = [rng.choice([0.1, 0.2, 0.3, 0.5]) for _ in range(30)]
    b = [x + rng.gauss(0, 0.2) for x in a]
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
    assert spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) is None
    assert spearman([1.0], [2.0]) is None


def test_learned_reward_recomputes_the_other_components(learned) -> None:
    m, _ = learned
    registry = dict(component_registry())
    registry["discriminator"] = DiscriminatorReward()
    comp = LearnedReward(m, registry)
    registry["learned"] = comp
    assert isinstance(comp, RewardComponent)
    assert "discriminator" not in comp.components and "learned" not in comp.components
    gen = MeetingGenerator()
    meeting = gen.meeting(0.3, random.Random(4))
    inst = meeting_instance(meeting)
    output = "# Minutes\n" + "\n".join(f"- {ln}" for ln in reference_text(meeting).splitlines())
    cs = comp.score(inst, output, None)
    expected = m.predict(
        {k: c.score(inst, output, None).score for k, c in comp.components.items()}, output
    )
    assert cs.score == expected and "predicted validation score" in cs.feedback
    for out in ["", GARBAGE, HACK]:
        cs = comp.score(inst, out, None)
        assert 0.0 <= cs.score <= 1.0 and not math.isnan(cs.score)
