"""Reward components: good minutes score high, empty/garbage/hacks score low, nothing raises."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from evotrainer.tasks.base import RewardComponent
from evotrainer.tasks.meetings.loader import load_instances
from evotrainer.tasks.meetings.matching import owner_match, task_similarity
from evotrainer.tasks.meetings.parser import parse_minutes
from evotrainer.tasks.meetings.rewards import DEFAULT_WEIGHTS, component_registry
from evotrainer.tasks.meetings.schema import ActionItem, Meeting, Turn
from evotrainer.tasks.meetings.words import stem
from evotrainer.types import Instance

FIXTURES = Path(__file__).parent / "fixtures"
NAMES = {
    "completeness",
    "format",
    "action_count",
    "owner_accuracy",
    "non_repetition",
    "conciseness",
    "faithfulness",
    "privacy",
}

GOOD = """# Orion launch sync

## Topics
- Launch date: stays on March 14, beta testing until March 7; QA fixed 42 of 50 bugs.
- Marketing budget: raised to 21,000 euros, print ads dropped.
- Support team hiring: offers for two candidates, Anna and Felix.

## Decisions
- Launch on March 14.
- Marketing budget of 21,000 euros approved.

## Action items
- Tom Becker: send the final bug report (due Friday)
- Priya Shah: update the budget sheet (due Wednesday)
- Daniel Kim: prepare and send both job offers (due next Monday)
- Tom Becker: write the onboarding guide for the support staff
"""

HACK = "# Minutes\n- The meeting took place.\n## Action items\n- Someone: follow up\n- Team: check\n- All: review\n"


@pytest.fixture(scope="module")
def instances() -> dict[str, Instance]:
    return {i.id: i for i in load_instances(FIXTURES / "synthetic_meetings.jsonl")}


@pytest.fixture(scope="module")
def launch(instances: dict[str, Instance]) -> Instance:
    return instances["synth-launch-01"]


def scores(inst: Instance, output: str) -> dict[str, float]:
    parsed = parse_minutes(output)
    return {n: c.score(inst, output, parsed).score for n, c in component_registry().items()}


def feedback(inst: Instance, output: str) -> dict[str, str]:
    parsed = parse_minutes(output)
    return {n: c.score(inst, output, parsed).feedback for n, c in component_registry().items()}


def test_registry_and_default_weights() -> None:
    reg = component_registry()
    assert set(reg) == NAMES
    for name, comp in reg.items():
        assert isinstance(comp, RewardComponent)
        assert comp.name == name and comp.description
    assert DEFAULT_WEIGHTS == {"completeness": 0.5, "format": 0.2, "action_count": 0.3}


def test_good_minutes_score_high_on_every_component(launch: Instance) -> None:
    s = scores(launch, GOOD)
    assert all(v >= 0.9 for v in s.values()), s
    fb = feedback(launch, GOOD)
    assert fb["completeness"] == "covered 3/3 topics"
    assert fb["action_count"] == "4 action items"


@pytest.mark.parametrize("output", ["", "   \n", "asdkj qwe 12398 !!! zzzz", "\x00\x01\x02"])
def test_empty_and_garbage_score_low(launch: Instance, output: str) -> None:
    s = scores(launch, output)
    for name in (
        "completeness",
        "format",
        "action_count",
        "owner_accuracy",
        "faithfulness",
        "non_repetition",
    ):
        assert s[name] == 0.0, (name, s)
    assert s["conciseness"] < 0.1
    # nothing leaked, but nothing written either: no component pays for no minutes (issue 46)
    assert s["privacy"] == (1.0 if any(c.isalnum() for c in output) else 0.0)


def test_vacuous_three_items_hack(launch: Instance) -> None:
    s = scores(launch, HACK)
    assert s["action_count"] == 1.0  # the hack games R3 ...
    assert s["owner_accuracy"] < 0.1  # ... but not owner/task accuracy
    assert s["completeness"] < 0.34
    fb = feedback(launch, HACK)["owner_accuracy"]
    assert fb.startswith("0/4 true action items matched") and "unmatched: follow up" in fb


def test_partial_minutes_feedback_names_what_is_missing(launch: Instance) -> None:
    text = (
        "# Sync\n- Launch stays on March 14, beta until March 7\n- Budget: marketing gets 21,000\n"
    )
    comp = component_registry()["completeness"].score(launch, text, parse_minutes(text))
    assert comp.score == pytest.approx(2 / 3)
    assert comp.feedback == "covered 2/3 topics; missing: Support team hiring"


def test_completeness_light_stemming_and_fuzzy(launch: Instance) -> None:
    assert stem("offers") == stem("offer") and stem("hiring") == stem("hire")
    assert stem("planned") == stem("plan") and stem("budgets") == stem("budget")
    assert stem("21,000") == "21000"
    text = (
        "- lanch moved? no: Mrch 14 stays, betta test\n- the budgett for marketting and print ads\n"
    )
    comp = component_registry()["completeness"].score(launch, text, None)
    assert comp.score >= 2 / 3  # typos still count (rapidfuzz >= 85 on 5+ letter words)


def test_format_component(launch: Instance) -> None:
    fmt = component_registry()["format"]
    assert fmt.score(launch, "# T\n- a\n- b", None).score == 1.0
    assert fmt.score(launch, "- a\n- b\n- c", None).score == 0.0  # no heading
    assert fmt.score(launch, "# T\n- a", None).feedback == "1 bullet points (need >= 2)"


@pytest.mark.parametrize(("n", "expected"), [(0, 0.0), (1, 0.0), (2, 1.0), (5, 1.0), (6, 0.0)])
def test_action_count(launch: Instance, n: int, expected: float) -> None:
    text = "## Action items\n" + "".join(f"- Person{i}: do task number {i}\n" for i in range(n))
    assert component_registry()["action_count"].score(launch, text, None).score == expected


def test_owner_accuracy_partial_and_wrong_owner(launch: Instance) -> None:
    oa = component_registry()["owner_accuracy"]
    half = "## Action items\n- Tom Becker: send the final bug report\n- Priya Shah: update the budget sheet\n"
    wrong = "## Action items\n- Daniel Kim: send the final bug report\n- Tom Becker: update the budget sheet\n"
    s_half = oa.score(launch, half, None).score
    s_wrong = oa.score(launch, wrong, None).score
    assert 0.5 < s_half < 0.8  # precision 1, recall 1/2
    assert s_wrong < s_half  # right tasks, wrong owners
    assert owner_match("Tom", "Tom Becker") == 1.0
    assert owner_match("Prof. Weber", "Weber") == 1.0
    assert owner_match("Someone", "Tom Becker") == 0.0
    assert owner_match("Everyone", "all participants") == 1.0
    assert task_similarity("Send the final bug report", "send the final bug report") == 1.0


def _meeting(**kw) -> Meeting:
    base = {
        "id": "t",
        "source": "test",
        "transcript": (
            Turn(
                "Project Manager (B)",
                "Okay, next time the industrial designer works on the design.",
            ),
            Turn(
                "Industrial Designer (C)",
                "Right, I'll look at the working design and the components.",
            ),
        ),
    }
    base.update(kw)
    return Meeting(**base)


def test_owner_accuracy_ami_roles_and_letters() -> None:
    m = _meeting(
        action_items=("The industrial designer will work on the working design.",),
        meta={"speaker_roles": {"B": "Project Manager", "C": "Industrial Designer"}},
    )
    inst = Instance(id="t", payload=m, source="AMI")
    oa = component_registry()["owner_accuracy"]
    for owner in ("Industrial Designer (C)", "ID", "C", "the industrial designer"):
        text = f"## Action items\n- {owner}: work on the working design\n"
        assert oa.score(inst, text, None).score == pytest.approx(1.0), owner
    assert (
        oa.score(inst, "## Action items\n- Marketing: work on the working design\n", None).score
        <= 0.5
    )


def test_owner_accuracy_synthetic_speaker_labels() -> None:
    m = _meeting(
        transcript=(Turn("Coordinator (E)", "I'll write the plan."),),
        action_truth=(ActionItem("Soren", "Write a data management plan"),),
        meta={
            "participants": [{"name": "Soren", "role": "Coordinator", "label": "Coordinator (E)"}]
        },
    )
    inst = Instance(id="t", payload=m)
    oa = component_registry()["owner_accuracy"]
    for owner in ("Soren", "Coordinator (E)", "Coordinator"):
        text = f"## Action items\n- {owner}: write the data management plan\n"
        assert oa.score(inst, text, None).score == pytest.approx(1.0), owner


def test_owner_accuracy_without_ground_truth() -> None:
    oa = component_registry()["owner_accuracy"]
    icsi = Instance(id="t", payload=_meeting(has_action_items=False))
    res = oa.score(icsi, "## Action items\n- Tom: do it\n- Ann: do that\n", None)
    assert res.score == 0.0 and "no ground truth" in res.feedback
    none = Instance(id="t", payload=_meeting(action_items=()))  # annotated: no action items
    assert oa.score(none, "# Minutes\n- a\n- b\n", None).score == 1.0
    assert oa.score(none, "## Action items\n- Tom: invent a task\n", None).score == 0.0


def test_completeness_fallback_on_real_style_meetings() -> None:
    comp = component_registry()["completeness"]
    m = _meeting(
        summary=("The industrial designer presented the working design and the components.",)
    )
    res = comp.score(Instance(id="t", payload=m), "- working design and components discussed", None)
    assert "salient words of the reference summary" in res.feedback and res.score > 0.5
    res = comp.score(Instance(id="t", payload=_meeting()), "- anything", None)
    assert res.score == 0.0 and "salient words of the transcript" in res.feedback
    res = comp.score(Instance(id="t", payload=_meeting()), "- the working design", None)
    assert res.score > 0.0  # unlabelled: the transcript's own topics (tests/test_salience.py)
    empty = _meeting(transcript=(Turn("A", "Um, okay."),))
    res = comp.score(Instance(id="t", payload=empty), "- anything", None)
    assert res.score == 0.0 and "no ground truth" in res.feedback


def test_conciseness_penalises_copying_loops_and_rambling(launch: Instance) -> None:
    con = component_registry()["conciseness"]
    meeting = launch.payload
    assert con.score(launch, GOOD, None).score == 1.0
    copy = con.score(launch, meeting.transcript_text(), None)
    assert copy.score < 0.05 and "copied verbatim" in copy.feedback
    loop = "# Minutes\n" + "- Tom Becker: Good morning everyone and welcome.\n" * 40
    res = con.score(launch, loop, None)
    assert res.score < 0.05 and "repeated" in res.feedback
    ramble = GOOD + "\n".join(
        f"- extra remark {i} about nothing in particular at all" for i in range(60)
    )
    assert con.score(launch, ramble, None).score < 0.3


def test_faithfulness_penalises_invented_names_and_numbers(launch: Instance) -> None:
    fa = component_registry()["faithfulness"]
    assert fa.score(launch, GOOD, None).score == 1.0
    invented = (
        GOOD.replace("March 14", "April 2").replace("Felix", "Gustavo")
        + "\n- Budget rose by 37%.\n"
    )
    res = fa.score(launch, invented, None)
    assert res.score < 0.9
    assert "Gustavo" in res.feedback.lower() or "gustavo" in res.feedback
    # sentence-initial words and instruction words are not names
    assert (
        fa.score(
            launch, "# Meeting Minutes\nAction items were discussed. Launch stays.", None
        ).score
        == 1.0
    )
    # spelled-out numbers in the transcript support digits in the minutes
    m = _meeting(
        transcript=(Turn("A", "It will cost twelve fifty and sell for twenty five euro."),)
    )
    inst = Instance(id="t", payload=m)
    assert fa.score(inst, "- It will cost 12.50 and sell for 25 euro.", None).score == 1.0


def test_privacy(instances: dict[str, Instance]) -> None:
    pr = component_registry()["privacy"]
    research = instances["synth-research-03"]
    assert pr.score(research, "# Minutes\n- Mei runs the ablations.", None).score == 1.0
    for leak in (
        "Contact mei.lin@example.org",
        "Call MEI.LIN@EXAMPLE.ORG",
        "phone +49 30 1234 5678",
        "tel. 0049-30-12345678",  # the same number, written differently
    ):
        res = pr.score(research, leak, None)
        assert res.score == 0.0, leak
        assert "mei.lin" not in res.feedback.lower()  # the feedback does not repeat the secret
    assert pr.score(research, "call 4930 1234 5678", None).score == 0.0  # digits, spaces removed
    assert (
        pr.score(instances["synth-launch-01"], "mei.lin@example.org", None).feedback
        == "no private data in the input"
    )


def test_components_never_raise(launch: Instance) -> None:
    weird = [
        "",
        "x" * 50_000,
        ("- Tom: " + "a " * 5000 + "\n") * 5,
        "| | |\n|---|\n| |",
        "## Action items\n" + "- (@)\n- [ ]\n- : \n" * 100,
        "\u202e\u0000\ud7ff" * 100,
        "1" * 10_000,
    ]
    bad_inst = Instance(id="x", payload="not a meeting")
    for comp in component_registry().values():
        for out in weird:
            for inst in (launch, bad_inst):
                for parsed in (None, parse_minutes(out), "junk"):
                    r = comp.score(inst, out, parsed)
                    assert 0.0 <= r.score <= 1.0 and isinstance(r.feedback, str)
        assert 0.0 <= comp.score(launch, None, None).score <= 1.0  # type: ignore[arg-type]


def test_generated_meetings_good_vs_hack() -> None:
    from evotrainer.tasks.meetings.generator import MeetingGenerator

    comps = component_registry()
    for inst in MeetingGenerator().sample(4, 0.4, random.Random(7)):
        m = inst.payload
        lines = [
            f"# Minutes: {m.topics[0].title}",
            "## Topics",
            *(f"- {t.title}" for t in m.topics),
        ]
        lines += ["## Decisions", *(f"- {d}" for d in m.decisions), "## Action items"]
        lines += [f"- {a.owner}: {a.task}" for a in m.action_truth[:5]]
        good = "\n".join(lines)
        sg = {n: c.score(inst, good, parse_minutes(good)).score for n, c in comps.items()}
        sh = {n: c.score(inst, HACK, parse_minutes(HACK)).score for n, c in comps.items()}
        assert sg["completeness"] == 1.0 and sg["format"] == 1.0 and sg["owner_accuracy"] > 0.9
        assert sg["faithfulness"] == 1.0 and sg["conciseness"] > 0.5
        assert sh["owner_accuracy"] < 0.1 and sh["completeness"] < sg["completeness"]


def test_seed_policy_outputs_of_smollm2(instances: dict[str, Instance]) -> None:
    """The recorded seed outputs continue the transcript: no minutes shape, no action items."""
    comps = component_registry()
    with open(FIXTURES / "smollm2_outputs.jsonl", encoding="utf-8") as fh:
        recs = [json.loads(line) for line in fh]
    seeds = [
        r for r in recs if r["policy"] in ("A", "B", "C") and not r["params"].get("repeat_penalty")
    ]
    assert len(seeds) == 9
    for r in seeds:
        inst = instances[r["meeting_id"]]
        p = parse_minutes(r["output"])
        s = {n: c.score(inst, r["output"], p).score for n, c in comps.items()}
        assert s["format"] == 0.0 and s["action_count"] == 0.0
        assert s["conciseness"] < 0.1  # loops and transcript copies
        assert s["privacy"] == 1.0
