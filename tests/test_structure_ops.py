"""The structural operators (template, template crossover, few-shot example, feedback-directed
edit) and the bandit that chooses operators. Fakes only, deterministic."""

from __future__ import annotations

import random

from evotrainer.llm.fakes import FunctionLLM
from evotrainer.loops.inner import OperatorStats
from evotrainer.operators import OperatorContext
from evotrainer.operators.bandit import choose_bandit, posterior_means
from evotrainer.operators.base import FeedbackEdit
from evotrainer.operators.feedback import FeedbackEditOperator, apply_edit
from evotrainer.operators.fewshot import FewShotOperator, cut_to_tokens
from evotrainer.operators.structure import (
    TemplateCrossover,
    TemplateOperator,
    heading,
    is_template,
    sections,
)
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.meetings.structure import EDITS, TEMPLATES, reference_minutes
from evotrainer.tasks.meetings.task import MeetingTask

C = "First extract the key statements, then summarise the discussion, then list the to-do items."


def ctx(seed: int = 0, **kw) -> OperatorContext:
    return OperatorContext(rng=random.Random(seed), generation=2, **kw)


def test_library_templates_parse_into_sections():
    for t in TEMPLATES:
        assert is_template(t), t
    secs = sections(TEMPLATES[0])
    assert [heading(s) for s in secs] == ["summary", "decisions", "action items"]
    assert heading("## Action items") == heading("Action items:\n- <owner>: <task>")


def test_template_operator_adds_replaces_and_drops():
    op = TemplateOperator()
    bare = PolicyGenome({"system": C})
    added = op.apply([bare], ctx(0, templates=TEMPLATES))
    assert added is not None and added.components["template"] in TEMPLATES
    assert added.lineage.operator == "template" and "add" in added.lineage.note
    seen = set()
    for seed in range(40):
        child = op.apply([added], ctx(seed, templates=TEMPLATES))
        if child is None:
            continue
        assert child.system == C  # only the template changes
        t = child.components.get("template")
        seen.add("drop" if t is None else child.lineage.note.split(" ")[1])
    assert {"drop", "replace", "add", "remove"} <= seen


def test_template_operator_without_library_needs_an_llm():
    bare = PolicyGenome({"system": C})
    assert TemplateOperator().apply([bare], ctx(0)) is None
    written = "Summary: <the discussion>\nNext steps:\n- <owner>: <task>"
    llm = FunctionLLM(lambda m, p: written)
    child = TemplateOperator().apply([bare], ctx(0, llm=llm))
    assert child is not None and child.components["template"] == written
    junk = FunctionLLM(lambda m, p: "I cannot help with that.")
    assert TemplateOperator().apply([bare], ctx(0, llm=junk)) is None  # not a template


def test_template_crossover_mixes_sections_and_inherits():
    a = PolicyGenome({"system": C, "template": TEMPLATES[0]})
    b = PolicyGenome({"system": "Write minutes.", "template": TEMPLATES[4]})
    op = TemplateCrossover()
    kids = [op.apply([a, b], ctx(s)) for s in range(20)]
    kids = [k for k in kids if k is not None]
    assert kids
    for k in kids:
        assert k.system == C
        names = {heading(s) for s in sections(k.components["template"])}
        assert names & {"summary", "decisions", "action items", "main points", "next steps"}
        assert k.components["template"] not in (TEMPLATES[0], TEMPLATES[4])
    bare = PolicyGenome({"system": "Write minutes."})
    inherited = op.apply([bare, a], ctx(0))
    assert inherited is not None and inherited.components["template"] == TEMPLATES[0]
    assert op.apply([bare, bare.relabel("x")], ctx(0)) is None  # no template on either side


def test_fewshot_adds_replaces_and_drops_examples():
    op = FewShotOperator()
    bare = PolicyGenome({"system": C})
    assert op.apply([bare], ctx(0)) is None  # nothing to draw from
    pool = ["Summary: the team chose a design.", "Summary: the budget was agreed."]
    child = op.apply([bare], ctx(0, examples=pool))
    assert child is not None and child.components["examples"] in pool
    notes = {op.apply([child], ctx(s, examples=pool)).lineage.note.split(" ")[1] for s in range(30)}
    assert {"drop", "replace"} <= notes


def test_examples_are_cut_to_the_token_budget():
    long = "\n".join(f"- point number {i} of the meeting." for i in range(200))
    cut = cut_to_tokens(long, 40)
    assert cut is not None and len(cut) <= 160 and cut.endswith(".")


def test_reference_minutes_of_a_meeting(tmp_path):
    from tests.support import real_data

    task = MeetingTask()
    inst = task.load(real_data("ami-train.jsonl"))[0]
    text = task.reference_example(inst)
    assert text == reference_minutes(inst.payload)
    assert text.startswith("Summary: ") and "Decisions:" in text


def test_feedback_edit_targets_the_biggest_deficit():
    op = FeedbackEditOperator()
    p = PolicyGenome({"system": C})
    scores = {p.id: {"ref_rougeL": 0.2, "action_count": 0.9, "format": 0.0}}
    weights = {"ref_rougeL": 0.5, "action_count": 0.3, "format": 0.1}
    child = op.apply([p], ctx(1, edits=EDITS, scores=scores, weights=weights))
    assert child is not None
    assert child.lineage.note.startswith("ref_rougeL 0.20")  # 0.5 * 0.8 is the largest deficit
    assert child.render() != p.render()
    # no scores for the parent: nothing to direct the edit
    assert op.apply([p], ctx(1, edits=EDITS, weights=weights)) is None


def test_apply_edit_adds_a_template_section_once():
    comps = {"system": C}
    edit = FeedbackEdit("template", "Action items:\n- <owner>: <task>")
    assert apply_edit(comps, edit)
    assert comps["template"] == "Action items:\n- <owner>: <task>"
    assert not apply_edit(comps, edit)  # already there
    assert apply_edit(comps, FeedbackEdit("system", "Be concise."))
    assert comps["system"].endswith("Be concise.")


def test_bandit_prefers_operators_that_succeed():
    rng = random.Random(0)
    weights = {"synonym": 1.0, "template": 1.0, "keyword": 1.0}
    stats = {
        "synonym": OperatorStats(tried=40, produced=40, improved=1),
        "template": OperatorStats(tried=40, produced=40, improved=20),
        "keyword": OperatorStats(tried=40, produced=40, improved=2),
    }
    picks = [choose_bandit(rng, weights, stats).name for _ in range(300)]
    assert picks.count("template") > 250
    # without observations the weights decide, and every operator gets tried
    fresh = {choose_bandit(rng, weights, {}).name for _ in range(100)}
    assert fresh == set(weights)
    means = posterior_means(stats)
    assert means["template"] > means["keyword"] > means["synonym"]
