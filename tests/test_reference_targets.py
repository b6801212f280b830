"""What a distillation trains on as a human reference (``distill.reference_targets``): the
reference written as the answer the task asks for, cut to the answer cap by shortening its
prose first so the action items stay (``fit_to_cap``), or the metric's reference text as it
is (the behaviour before: its action items are plain sentences the parser does not read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from evotrainer.harness.distill_mix import cut_to_cap, estimate_tokens, fit_to_cap, reference_of
from evotrainer.tasks.meetings.task import MeetingTask
from tests.support import real_data
from tests.test_distill_run import (  # noqa: F401 - fake_training: a fixture
    config,
    fake_training,
    run,
)

SUMMARY = "Summary: " + " ".join(f"The team discussed point {i} at length." for i in range(40))
ITEMS = [
    "Decisions:",
    "- Use a rubber case.",
    "Action items:",
    "- The industrial designer will work on the case.",
    "- The marketing expert will survey the users.",
]
MINUTES = "\n".join([SUMMARY, *ITEMS])


def test_a_reference_as_minutes_keeps_its_decisions_and_action_items_within_the_cap():
    assert estimate_tokens(MINUTES) > 128
    fit = fit_to_cap(MINUTES, 128)
    assert estimate_tokens(fit) <= 128
    summary, *rest = fit.splitlines()
    assert rest == ITEMS  # headings and list items untouched
    assert SUMMARY.startswith(summary) and summary.endswith(".") and len(summary) < len(SUMMARY)
    assert fit_to_cap(MINUTES, 10_000) == MINUTES  # a reference that fits stays as it is
    # the head cut it replaces loses every item: they come last
    assert "Action items:" not in cut_to_cap(MINUTES, 128)


def test_when_every_line_is_one_sentence_the_head_cut_takes_over():
    lines = "\n".join(f"- item {i} about the remote control's case and buttons" for i in range(40))
    fit = fit_to_cap(lines, 50)
    assert estimate_tokens(fit) <= 50 and lines.startswith(fit)


@given(st.text(alphabet="ab .!?\n-:", max_size=400), st.integers(min_value=1, max_value=120))
@example("a. b\n", 1)
@example(". .\n. .", 2)
def test_a_fitted_target_never_exceeds_the_cap_and_only_drops_text(text, cap):
    fit = fit_to_cap(text, cap)
    assert estimate_tokens(fit) <= cap or fit == ""
    words = text.split()
    assert all(w in words for w in fit.split()) or not fit.split()


def test_the_answer_form_falls_back_to_the_text_where_the_task_writes_no_answer():
    class Task:
        def reference_text(self, instance):
            return f"text of {instance}"

        def reference_example(self, instance):
            return None if instance == "bare" else f"answer of {instance}"

    assert reference_of(Task(), "answer")("m1") == "answer of m1"
    assert reference_of(Task(), "answer")("bare") == "text of bare"
    assert reference_of(Task(), "text")("m1") == "text of m1"


def test_ami_references_as_answers_score_their_action_items_and_as_text_do_not():
    task = MeetingTask(empty_reference_items="skip")
    metric = task.validation_metric()
    meetings = [i for i in task.load(real_data("ami-train.jsonl"))[:30] if i.payload.action_items]
    assert meetings

    def f1(form: str) -> list[float]:
        out = []
        for inst in meetings:
            target = fit_to_cap(reference_of(task, form)(inst) or "", 256)
            out.append(metric.score(inst, target, task.parse(target))["action_item_f1"])
        return out

    assert all(x == 0.0 for x in f1("text"))  # the finding: no item the parser reads
    answers = f1("answer")
    assert sum(answers) / len(answers) > 0.9, answers  # cut to the cap, the items stay


@pytest.mark.usefixtures("fake_training")
def test_the_weights_first_round_trains_on_references_written_as_minutes(tmp_path):
    cfg = config(tmp_path, schedule="weights_first", max_rounds=1, cut_targets=True)
    assert cfg.distill.reference_targets == "answer"  # the default
    _, res = run(tmp_path, cfg)
    first = res.summary["distillations"][0]
    # the fake training writes its pairs into the adapter file
    (path,) = Path(tmp_path / "run").rglob(f"{first['adapter']}.gguf")
    targets = [p["completion"] for p in json.loads(path.read_bytes())]
    assert targets and all(t.startswith("Summary: ") for t in targets)
    assert any("\nAction items:\n- " in t for t in targets)
    assert all(estimate_tokens(t) <= cfg.model.max_tokens for t in targets)
