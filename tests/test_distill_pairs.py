"""Which answers a distillation learns from (harness/distill_pairs.py): the harness's reward
ranks them, but only against answers scored on the same reward components."""

from __future__ import annotations

from evotrainer.harness.distill_pairs import best_per_instance, choose_pairs
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import ComponentScore, Instance, ScoreVector

WEIGHTS = {"format": 0.25, "completeness": 0.25, "ref_rougeL": 0.5}
POLICY = PolicyGenome({"system": "Write the minutes."})


def scores(fmt: float, rouge: float | None) -> ScoreVector:
    """A synthetic meeting (``rouge`` None: no reference, the component does not apply) or a
    real one."""
    return ScoreVector(
        (
            ComponentScore("format", fmt),
            ComponentScore("completeness", fmt),
            ComponentScore("ref_rougeL", rouge or 0.0, applicable=rouge is not None),
        )
    )


def render(policy, inst):
    return [{"role": "user", "content": inst.id}]


def candidates(table):
    """``table``: instance id -> (format score, ROUGE-L or None)."""
    insts = [
        Instance(i, None, source="synthetic" if r is None else "AMI") for i, (_, r) in table.items()
    ]
    return best_per_instance(
        [POLICY], insts, lambda p, inst: (f"minutes of {inst.id}", scores(*table[inst.id])), WEIGHTS
    )


def kept_ids(choice):
    return sorted(r["instance"] for r in choice.kept)


def test_real_and_synthetic_answers_are_ranked_each_on_their_own_scale():
    # synthetic meetings reward format only (0.6-0.9); real ones mostly ROUGE-L (0.2-0.45)
    table = {
        "syn1": (0.9, None),
        "syn2": (0.8, None),
        "syn3": (0.7, None),
        "syn4": (0.6, None),
        "ami1": (0.9, 0.3),
        "ami2": (0.9, 0.2),
        "ami3": (0.9, 0.1),
        "ami4": (0.9, 0.0),
    }
    cands = candidates(table)
    assert {c.scale for c in cands} == {
        ("completeness", "format"),
        ("completeness", "format", "ref_rougeL"),
    }
    choice = choose_pairs(cands, render, keep_share=0.5, max_pairs=64)
    # ranked on one list, the four synthetic answers (0.6-0.9) would beat every real one (<=0.6)
    assert kept_ids(choice) == ["ami1", "ami2", "syn1", "syn2"]
    assert len(choice.pairs) == 4
    why = {r["instance"]: r["why"] for r in [*choice.kept, *choice.dropped]}
    assert why["ami3"] == "dropped: reward below 0.550 on completeness+format+ref_rougeL"
    assert why["syn3"] == "dropped: reward below 0.800 on completeness+format"
    assert choice.threshold == 0.55  # the lowest reward kept
    assert any("2 of 4 kept on completeness+format (reward >= 0.800)" in n for n in choice.notes)


def test_one_scale_keeps_the_top_share_by_reward_and_max_pairs_cuts_the_lowest_places():
    table = {f"ami{i}": (1.0, i / 10) for i in range(10)}
    choice = choose_pairs(candidates(table), render, keep_share=0.5, max_pairs=64)
    assert kept_ids(choice) == ["ami5", "ami6", "ami7", "ami8", "ami9"]
    assert all(r["why"] == "kept: among the top rewards" for r in choice.kept)
    assert not choice.notes

    both = {**table, **{f"syn{i}": (i / 10, None) for i in range(10)}}
    capped = choose_pairs(candidates(both), render, keep_share=0.5, max_pairs=4)
    # the two best of each scale: the places 0 and 1/10 of both lists
    assert kept_ids(capped) == ["ami8", "ami9", "syn8", "syn9"]
    beyond = [r["instance"] for r in capped.dropped if "max_pairs" in r["why"]]
    assert sorted(beyond) == ["ami5", "ami6", "ami7", "syn5", "syn6", "syn7"]


def test_the_real_share_adds_human_references_to_the_kept_answers():
    table = {f"ami{i}": (1.0, i / 10) for i in range(6)}
    refs = [(Instance(f"ref{i}", None, source="AMI"), f"reference {i}") for i in range(5)]
    choice = choose_pairs(
        candidates(table), render, 0.5, 64, real_share=0.5, references=refs, reference_policy=POLICY
    )
    assert choice.references == 2  # round(0.5 x 3 kept)
    assert [p.completion for p in choice.pairs[-2:]] == ["reference 0", "reference 1"]
