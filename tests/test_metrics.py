"""MinutesMetric (ROUGE, action-item P/R/F1, decision recall) and s_val."""

from __future__ import annotations

from pathlib import Path

import pytest

from evotrainer.tasks.base import ValidationMetric
from evotrainer.tasks.meetings.loader import load_instances
from evotrainer.tasks.meetings.metrics import MinutesMetric, reference_text, s_val
from evotrainer.tasks.meetings.schema import ActionItem, Meeting, Turn
from evotrainer.types import Instance
from tests.support import real_data

FIXTURES = Path(__file__).parent / "fixtures"
KEYS = (
    "rouge1",
    "rouge2",
    "rougeL",
    "action_item_precision",
    "action_item_recall",
    "action_item_f1",
    "decision_recall",
    "n_action_items",
    "readability",
    "distinct4",
    "words",
)


def ami_like(
    action_items=("The industrial designer will work on the working design of the remote.",), **kw
) -> Instance:
    m = Meeting(
        id=kw.pop("id", "ami"),
        source="AMI",
        transcript=(Turn("Project Manager (B)", "Let's decide the price."),),
        summary=("The team discussed the remote control price and the design.",),
        decisions=(
            "The remote will sell for 25 Euro.",
            "The remote will have an ergonomic design.",
        ),
        action_items=tuple(action_items),
        meta={"speaker_roles": {"B": "Project Manager", "C": "Industrial Designer"}},
        **kw,
    )
    return Instance(id=m.id, payload=m, source="AMI")


def minutes_from_reference(m: Meeting) -> str:
    return (
        "# Minutes\n"
        + "\n".join(m.summary)
        + "\n## Decisions\n"
        + "\n".join(f"- {d}" for d in m.decisions)
        + "\n## Action items\n"
        + "\n".join(f"- {a}" for a in m.action_items)
    )


def test_protocol_and_keys() -> None:
    mm = MinutesMetric()
    assert isinstance(mm, ValidationMetric)
    assert mm.keys == KEYS
    row = mm.score(ami_like(), "", None)
    assert set(row) == set(KEYS)


def test_reference_as_output_scores_high() -> None:
    inst = ami_like()
    mm = MinutesMetric()
    row = mm.score(inst, reference_text(inst.payload), None)
    assert row["rouge1"] == pytest.approx(1.0) and row["rougeL"] == pytest.approx(1.0)
    row = mm.score(inst, minutes_from_reference(inst.payload), None)
    assert row["rouge1"] > 0.9 and row["rouge2"] > 0.85
    assert row["action_item_f1"] == 1.0 and row["decision_recall"] == 1.0
    assert row["n_action_items"] == 1.0


def test_garbage_scores_low() -> None:
    row = MinutesMetric().score(ami_like(), "lorem ipsum dolor sit amet qqq", None)
    assert row["rouge1"] == 0.0 and row["rouge2"] == 0.0 and row["rougeL"] == 0.0
    assert row["action_item_f1"] == 0.0 and row["decision_recall"] == 0.0
    assert row["n_action_items"] == 0.0


@pytest.mark.parametrize(
    ("item", "matched"),
    [
        ("Industrial Designer (C): work on the working design", True),
        ("ID: look into the working design of the remote", True),
        ("C: working design of the remote", True),  # speaker letter -> role via meta
        ("The industrial designer will work on the working design.", True),
        ("Work on the working design (industrial designer)", True),
        ("Marketing: work on the working design", False),  # wrong owner
        ("Industrial Designer: order pizza for the team", False),  # wrong task
    ],
)
def test_ami_action_item_matching(item: str, matched: bool) -> None:
    row = MinutesMetric().score(ami_like(), f"## Action items\n- {item}\n", None)
    assert (row["action_item_f1"] == 1.0) is matched, row


def test_group_reference_owner() -> None:
    inst = ami_like(("The team will decide how the user interface will work",))
    row = MinutesMetric().score(
        inst, "## Action items\n- All: decide how the user interface works\n", None
    )
    assert row["action_item_f1"] == 1.0


def test_precision_recall_f1() -> None:
    inst = ami_like(
        (
            "The industrial designer will work on the working design.",
            "The project manager will send the minutes to everyone.",
        )
    )
    text = (
        "## Action items\n- Industrial Designer: work on the working design\n"
        "- Marketing: research trends\n- Marketing: buy snacks\n- Marketing: book a room\n"
    )
    row = MinutesMetric().score(inst, text, None)
    assert row["action_item_precision"] == pytest.approx(1 / 4)
    assert row["action_item_recall"] == pytest.approx(1 / 2)
    assert row["action_item_f1"] == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    assert row["n_action_items"] == 4.0


def test_empty_reference_list_and_no_annotation() -> None:
    mm = MinutesMetric(empty_reference="abstain")
    none = ami_like(())
    row = mm.score(none, "# Minutes\n- Nothing was assigned to anyone in this short meeting.", None)
    assert row["action_item_precision"] == 1.0 and row["action_item_f1"] == 1.0
    # abstaining needs content: "nothing to do" alone is no minutes
    row = mm.score(none, "# Minutes\n- nothing to do", None)
    assert row["action_item_precision"] == 0.0 and row["action_item_f1"] == 0.0
    row = mm.score(none, "## Action items\n- Tom: invent work\n", None)
    assert row["action_item_precision"] == 0.0
    icsi = ami_like((), has_action_items=False)
    row = mm.score(icsi, "## Action items\n- Tom: invent work\n", None)
    assert row["action_item_precision"] is None and row["action_item_f1"] is None
    assert row["rouge1"] is not None and row["decision_recall"] is not None


def test_empty_reference_items_can_be_skipped_instead_of_rewarding_abstention() -> None:
    """task.empty_reference_items: skip leaves action-item P/R/F1 undefined where the reference
    lists none (an empty answer no longer scores 1, an invented item no longer 0), so s_val is
    ROUGE-L there; meetings with items score as before; the task passes it to its metric."""
    from evotrainer.config import config_from_dict
    from evotrainer.tasks.registry import build_task

    skip = MinutesMetric(empty_reference="skip")
    none = ami_like(())
    for text in ("# Minutes\n- nothing to do", "## Action items\n- Tom: invent work\n"):
        row = skip.score(none, text, None)
        assert row["action_item_precision"] is None and row["action_item_f1"] is None
        assert row["rougeL"] is not None
    assert skip.score(none, "## Action items\n- Tom: invent work\n", None)["n_action_items"] == 1
    text = "## Action items\n- Tom: invent work\n"
    abstain = MinutesMetric(empty_reference="abstain")
    assert skip.score(ami_like(), text, None) == abstain.score(ami_like(), text, None)
    with pytest.raises(ValueError):
        MinutesMetric(empty_reference="zero")
    cfg = config_from_dict({"task": {"empty_reference_items": "skip"}})
    assert build_task(cfg.task).validation_metric().empty_reference == "skip"
    # the default since issue 46: abstaining paid a loop of "Okay." with F1 1 (docs/readability.md)
    assert build_task(config_from_dict({}).task).validation_metric().empty_reference == "skip"


def test_decision_recall_is_fuzzy() -> None:
    text = "# Minutes\n- Price: the remote sells for 25 euros\n- Design: ergonomic, decided today\n"
    row = MinutesMetric().score(ami_like(), text, None)
    assert row["decision_recall"] == 1.0
    row = MinutesMetric().score(ami_like(), "# Minutes\n- Price: 25 euros\n", None)
    assert row["decision_recall"] == 0.0  # 2 of 4 content words is not enough


def test_aggregate_skips_none_and_s_val_renormalises() -> None:
    mm = MinutesMetric()
    rows = [
        {"rouge1": 0.2, "action_item_f1": None, "decision_recall": 1.0},
        {"rouge1": 0.4, "action_item_f1": 0.5, "decision_recall": None},
    ]
    agg = mm.aggregate(rows)
    assert agg == pytest.approx({"rouge1": 0.3, "action_item_f1": 0.5, "decision_recall": 1.0})
    assert "rouge2" not in agg
    assert s_val(agg, {"rouge1": 1.0, "action_item_f1": 1.0}) == pytest.approx(0.4)
    # a missing key's weight is renormalised away; zero weights are ignored
    assert s_val(agg, {"rouge1": 1.0, "rouge2": 3.0, "decision_recall": 0.0}) == pytest.approx(0.3)
    assert s_val({}, {"rouge1": 1.0}) == 0.0
    assert s_val({"rouge1": None}, {"rouge1": 1.0}) == 0.0  # type: ignore[dict-item]


def test_synthetic_meeting_uses_structured_truth() -> None:
    inst = {i.id: i for i in load_instances(FIXTURES / "synthetic_meetings.jsonl")}[
        "synth-office-02"
    ]
    m = inst.payload
    text = "# Office move\n## Decisions\n" + "\n".join(f"- {d}" for d in m.decisions)
    text += "\n## Action items\n" + "\n".join(f"- {a.owner}: {a.task}" for a in m.action_truth)
    row = MinutesMetric().score(inst, text, None)
    assert row["action_item_f1"] == 1.0 and row["decision_recall"] == 1.0
    assert row["rouge1"] > 0.5
    truth_only = Meeting(
        id="s",
        source="synthetic",
        transcript=m.transcript,
        action_truth=(ActionItem("Lena Novak", "move the server"),),
    )
    assert "Lena Novak: move the server" in reference_text(truth_only)


def test_never_raises() -> None:
    mm = MinutesMetric()
    for out in ("", "x" * 30_000, "| |\n|-|", "\x00" * 10, "## Action items\n- (@)\n"):
        for inst in (ami_like(), Instance(id="bad", payload=None)):
            row = mm.score(inst, out, None)
            assert set(row) == set(KEYS)


@pytest.mark.realdata
def test_real_ami_dev_reference_vs_garbage() -> None:
    insts = load_instances(real_data("ami-dev.jsonl"))
    mm = MinutesMetric()
    ref_rows = [mm.score(i, minutes_from_reference(i.payload), None) for i in insts]
    junk_rows = [
        mm.score(i, "Thank you all. Good morning everyone, lorem ipsum.", None) for i in insts
    ]
    ref, junk = mm.aggregate(ref_rows), mm.aggregate(junk_rows)
    assert ref["rouge1"] > 0.95 and ref["rougeL"] > 0.95 and ref["rouge2"] > 0.9
    assert ref["action_item_f1"] == 1.0 and ref["decision_recall"] == 1.0
    assert junk["rouge1"] < 0.05 and junk["decision_recall"] == 0.0
    # two dev meetings have no action items ("*NA*"): skipped there (the default), and junk
    # without items scores 0 on the other 18
    assert junk["action_item_f1"] == 0.0
    assert sum(r["action_item_f1"] is None for r in junk_rows) == 2
    assert junk["readability"] == 0.0  # fewer than 10 words: no content


@pytest.mark.realdata
def test_real_icsi_has_no_action_metrics() -> None:
    insts = load_instances(real_data("icsi.jsonl"))[:3]
    mm = MinutesMetric()
    rows = [mm.score(i, minutes_from_reference(i.payload), None) for i in insts]
    agg = mm.aggregate(rows)
    assert "action_item_f1" not in agg and agg["rouge1"] > 0.9
