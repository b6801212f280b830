"""Readable minutes (issue 46): the decoding and loop-cut genes of a policy, the repetition
measures, and a score that tells a loop from minutes (reward, s_val, the return rule)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from evotrainer.config import config_from_dict
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.validation import Validator
from evotrainer.harness.reward import score_rollout, weighted_reward
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.operators.base import OperatorContext
from evotrainer.operators.decoding import DecodingOperator
from evotrainer.policy.decoding import DecodingGenes
from evotrainer.policy.genome import PolicyGenome
from evotrainer.policy.postprocess import LoopCut, collapse_runs, cut_at_repeat, drop_repeats
from evotrainer.policy.repetition import (
    degeneracy,
    distinct_ngrams,
    is_loop,
    readability,
    repeated_unit_share,
)
from evotrainer.tasks.meetings.generator import MeetingGenerator
from evotrainer.tasks.meetings.plugin import DEFAULTS
from evotrainer.tasks.meetings.task import MeetingTask
from evotrainer.types import Lineage, Rollout

FIXTURE = Path(__file__).parent / "fixtures" / "synthetic_meetings.jsonl"
LOOP_LINE = "The team will also be working on a new project to improve the marketing strategy."
MINUTES = (
    "# Minutes: remote control design\n\n"
    "## Decisions\n- The remote will have a yellow case and rubber buttons.\n"
    "- The budget stays at twelve euros per unit.\n\n"
    "## Action items\n- Industrial Designer: build the first prototype.\n"
    "- Marketing: check what younger users want.\n"
)
LOOPED = MINUTES + "\n".join([LOOP_LINE] * 8) + "\nOkay, okay, okay, okay, okay, okay."


# -- the measures -----------------------------------------------------------------------------
def test_repetition_measures_tell_a_loop_from_minutes():
    assert distinct_ngrams(MINUTES) > 0.95 and not is_loop(MINUTES)
    assert distinct_ngrams(LOOP_LINE * 6) < 0.3 and is_loop(" ".join([LOOP_LINE] * 6))
    assert repeated_unit_share(LOOPED) >= 0.5
    assert readability(MINUTES) == 1.0
    assert readability(LOOPED) < 0.7
    # no content is not readable minutes
    assert readability("") == 0.0 and readability("Okay.") == 0.0
    assert readability("Project Manager (A): Okay.\n" * 32) < 0.2
    deg = degeneracy([MINUTES, " ".join([LOOP_LINE] * 6), ""])
    assert deg.n == 3 and deg.loop_share == pytest.approx(2 / 3)


# -- the loop cut ------------------------------------------------------------------------------
def test_loop_cut_keeps_minutes_and_removes_loops():
    cut = LoopCut(enabled=True)
    assert cut.apply(MINUTES) == MINUTES.strip()
    out = cut.apply(LOOPED)
    assert out.count(LOOP_LINE) == 1
    assert "okay, okay" not in out.lower()
    assert readability(out) == 1.0
    assert LoopCut().apply(LOOPED) == LOOPED  # off by default


def test_collapse_runs_keeps_one_copy_of_a_phrase_said_again_and_again():
    assert collapse_runs("Okay, okay, okay, okay. Next we decided.") == "Okay. Next we decided."
    assert collapse_runs("We need to we need to we need to decide.") == "We need to decide."
    assert collapse_runs("a b a b") == "a b a b"  # twice is not a run
    # runs are cut within a line; repeated lines are drop_repeats' work
    assert collapse_runs("- Okay.\n- Okay.\n- Okay.") == "- Okay.\n- Okay.\n- Okay."
    # indentation is left alone
    assert collapse_runs("- item\n  - sub item") == "- item\n  - sub item"


def test_drop_repeats_and_the_cut_at_a_repeated_ngram():
    text = "A one two three four. B five six seven eight.\nA one two three four. New words here."
    assert drop_repeats(text) == "A one two three four. B five six seven eight.\nNew words here."
    near = "The team will build the new remote. The team will build the new case."
    assert drop_repeats(near) == near  # 1.0: only word-for-word repeats
    assert drop_repeats(near, 0.5) == "The team will build the new remote."
    assert cut_at_repeat("a b c d e f. x y z. a b c d e g.", 4) == "a b c d e f. x y z."


def test_loop_cut_genes_are_validated_with_the_field_named():
    with pytest.raises(ValueError, match="seen_share"):
        LoopCut(enabled=True, seen_share=0.2)
    with pytest.raises(ValueError, match="postprocess.cut_ngram"):
        LoopCut.from_json({"cut_ngram": "eight"})
    with pytest.raises(ValueError, match="unknown field"):
        LoopCut.from_json({"enable": True})
    with pytest.raises(ValueError, match="decoding.repeat_penalty"):
        DecodingGenes.from_json({"repeat_penalty": 3})
    with pytest.raises(ValueError, match="decoding.stop"):
        DecodingGenes.from_json({"stop": "###"})


# -- the genes in the policy ---------------------------------------------------------------------
def test_default_genes_keep_a_policys_id_and_other_genes_make_another_policy():
    p = PolicyGenome.from_text("Write the minutes.")
    assert p.id == "p" + p.id[1:] and p.to_json().keys() == {"id", "name", "components", "lineage"}
    q = p.with_genes(Lineage(), DecodingGenes(repeat_penalty=1.1))
    r = p.with_genes(Lineage(), postprocess=LoopCut(enabled=True))
    assert len({p.id, q.id, r.id}) == 3
    for x in (q, r):
        back = PolicyGenome.from_json(json.loads(json.dumps(x.to_json())))
        assert back == x and back.id == x.id
        assert back.decoding == x.decoding and back.postprocess == x.postprocess


def test_text_operators_keep_the_parents_genes():
    from evotrainer.operators.registry import OPERATORS

    p = PolicyGenome.from_text(
        "You are a professional secretary. Summarise the key points as bullet points."
    ).with_genes(Lineage(), DecodingGenes(repeat_penalty=1.15), LoopCut(enabled=True))
    ctx = OperatorContext(rng=random.Random(0), generation=1)
    child = OPERATORS["synonym"].apply([p], ctx)
    assert child is not None and child.system != p.system
    assert child.decoding == p.decoding and child.postprocess == p.postprocess


def test_the_decoding_operator_moves_one_gene_a_step_within_bounds():
    op = DecodingOperator()
    p = PolicyGenome.from_text("Write the minutes.")
    changed: set[str] = set()
    for i in range(80):
        ctx = OperatorContext(rng=random.Random(i), generation=1, max_tokens=256)
        child = op.apply([p], ctx)
        if child is None:
            continue
        assert child.components == p.components and child.lineage.operator == "decoding"
        assert child.lineage.parents == (p.id,)
        d, c = child.decoding, child.postprocess
        assert 1.0 <= d.repeat_penalty <= 1.5 and 0 <= d.presence_penalty <= 1.5
        assert d.max_tokens is None or 64 <= d.max_tokens <= 1024
        diffs = [k for k, v in d.to_json().items() if v != p.decoding.to_json()[k]]
        diffs += ["loop_cut"] if c != p.postprocess else []
        assert len(diffs) == 1
        changed.update(diffs)
    assert {"repeat_penalty", "presence_penalty", "max_tokens", "loop_cut"} <= changed
    # deterministic, and limited to inner.tunable_genes
    a = op.apply([p], OperatorContext(rng=random.Random(7), generation=1))
    b = op.apply([p], OperatorContext(rng=random.Random(7), generation=1))
    assert a is not None and b is not None and a.id == b.id
    only = OperatorContext(rng=random.Random(3), generation=1, tunable_genes=("loop_cut",))
    child = op.apply([p], only)
    assert child is not None and child.decoding == p.decoding and child.postprocess.enabled
    assert (
        op.apply([p], OperatorContext(rng=random.Random(3), generation=1, tunable_genes=())) is None
    )


# -- every answer decoded and cut as the policy says ----------------------------------------------
def _meetings(n: int = 3):
    return MeetingGenerator().sample(n, 0.3, random.Random(5))


def test_the_evaluator_samples_with_the_genes_and_cuts_every_answer():
    seen: list[SamplingParams] = []

    def answer(messages, params):
        seen.append(params)
        return LOOPED

    task = MeetingTask()
    llm = FunctionLLM(answer)
    ev = Evaluator(task, llm, SamplingParams(max_tokens=256, seed=0))
    plain = PolicyGenome.from_text("Write the minutes.")
    genes = plain.with_genes(
        Lineage(), DecodingGenes(repeat_penalty=1.2, max_tokens=300), LoopCut(enabled=True)
    )
    recs = ev.evaluate([plain, genes], _meetings(2))
    assert {(p.repeat_penalty, p.max_tokens) for p in seen} == {(1.0, 256), (1.2, 300)}
    for (pid, _), rec in recs.items():
        if pid == genes.id:
            assert rec.rollout.output.count(LOOP_LINE) == 1
            assert rec.rollout.raw_output == LOOPED
        else:
            assert rec.rollout.output == LOOPED and rec.rollout.raw_output is None


def test_the_cache_keys_of_earlier_answers_stay_valid_and_penalties_change_them():
    base = SamplingParams(max_tokens=64, seed=0)
    assert set(base.key()) == {"temperature", "top_p", "max_tokens", "seed", "stop"}
    assert replace(base, repeat_penalty=1.1).key()["repeat_penalty"] == 1.1
    assert replace(base, presence_penalty=0.3).key() != base.key()


# -- a loop scores lower than its de-looped version ---------------------------------------------------
def test_a_looped_answer_scores_lower_than_its_de_looped_version_in_reward_and_s_val():
    task = MeetingTask()
    meeting = _meetings(1)[0]
    clean = LoopCut(enabled=True).apply(LOOPED)
    components = task.reward_components()
    weights = DEFAULTS["harness"]["weights"]

    def reward(text: str) -> float:
        r = Rollout("p", meeting.id, text)
        return weighted_reward(score_rollout(components, meeting, r, task.parse(text)), weights)

    assert reward(LOOPED) < reward(clean)
    assert components["non_repetition"].score(meeting, LOOPED, None).score < 0.7
    assert components["non_repetition"].score(meeting, "", None).score == 0.0

    # s_val on a real-looking meeting with references
    real = task.load(FIXTURE)[0]
    ev = Evaluator(task, FunctionLLM(lambda m, p: LOOPED), SamplingParams(seed=0))
    val = Validator(task, ev, [real], DEFAULTS["outer"]["s_val_weights"], "fixture")
    looped = PolicyGenome.from_text("Write the minutes.")
    cut = looped.with_genes(Lineage(), postprocess=LoopCut(enabled=True))
    res = val.validate([looped, cut])
    assert res[looped.id].s_val < res[cut.id].s_val


@pytest.mark.parametrize(
    "span",
    [
        "2 paragraphs",
        "1 paragraph",
        "owner",
        "task",
        "action item 1",
        "date",
        "insert note",
        "insert action item here",
        "one paragraph: summary of the meeting",
        "10 sentences",
        "add more details about what happened in this step",
    ],
)
def test_a_templates_slot_is_a_blank(span):
    from evotrainer.tasks.meetings.placeholders import is_blank_span

    assert is_blank_span(span)


@pytest.mark.parametrize(
    "span", ["1", "12:05", "Mike", "x", " ", "User Interface (B)", "... 189 turns omitted ..."]
)
def test_a_number_a_time_a_name_or_a_checked_box_is_not_a_blank(span):
    """Read in the readable profile's test answers: "[1]" numbers a point, "[12:05]" is a time,
    "- [x] task" a checked box; none is a template's slot."""
    from evotrainer.tasks.meetings.placeholders import is_blank_span

    assert not is_blank_span(span)


def test_minutes_that_copy_their_templates_blanks_read_worse_in_reward_and_s_val():
    """Issue 46: an evolved template's blanks ("[2 paragraphs]", "- <owner>: <task>") copied into
    the answer counted as readable prose; the same minutes without them now score higher."""
    from evotrainer.tasks.meetings.placeholders import blank_share

    task = MeetingTask()
    real = task.load(FIXTURE)[0]
    blanks = MINUTES.replace("## Decisions\n", "## Decisions\n[2 paragraphs]\n") + (
        "- <owner>: <task>\n"
    )
    assert blank_share(MINUTES) == 0.0
    assert 0.0 < blank_share(blanks) < 0.5
    metric = task.validation_metric()
    with_blanks = metric.score(real, blanks, task.parse(blanks))["readability"]
    without = metric.score(real, MINUTES, task.parse(MINUTES))["readability"]
    assert with_blanks < without == 1.0
    comp = task.reward_components()["non_repetition"]
    scored = comp.score(real, blanks, None)
    assert scored.score < comp.score(real, MINUTES, None).score
    assert "template blank" in scored.feedback
    assert "repetitive" not in scored.feedback  # the blanks cost it, not a repetition
    # a checked box is an action item, not a blank
    boxes = MINUTES.replace("- Marketing:", "- [x] Marketing:")
    assert metric.score(real, boxes, task.parse(boxes))["readability"] == 1.0


@pytest.mark.parametrize(
    ("answer", "kept"),
    [
        ("- <owner>: Johno\n- <owner>: Eva", "- Owner: Johno\n- Owner: Eva"),
        ("- <action item 1>:\n- <action item 2>:\nThe remote is yellow.", "The remote is yellow."),
        (
            "Summary: [insert key statement here]\nThe budget is 12 euros.",
            "The budget is 12 euros.",
        ),
        ("It covered [topic] and [group member]. The case is rubber.", "The case is rubber."),
        ("- <task>: Send the slides.", "- Task: Send the slides."),
        ("- [x] Mike: send the slides.\n[12:05] Kate: agreed.", None),
        ("Action items:\n[1] Use the macro facility.", None),
    ],
)
def test_drop_blanks_removes_a_templates_unfilled_blanks_and_keeps_the_rest(answer, kept):
    """Read in the readable-wide test answers: a slot used as a label keeps its word, a
    sentence or line that still holds a blank goes, numbers, times and checked boxes stay."""
    from evotrainer.tasks.meetings.placeholders import blank_share

    task = MeetingTask()
    out = task.strip_blanks(answer)
    assert out == (answer if kept is None else kept)
    assert blank_share(out) == 0.0
    assert LoopCut(enabled=True, drop_blanks=True).apply(answer, task.strip_blanks) == out
    # off, or a task without a blank rule: the answer is left as it is
    assert LoopCut(enabled=True).apply(answer, task.strip_blanks) == answer
    assert LoopCut(enabled=True, drop_blanks=True).apply(answer) == answer


def test_the_evaluator_applies_the_tasks_blank_rule_when_the_gene_is_on():
    blanks = MINUTES + "- <action item 1>:\nSummary: [insert key statement here]\n"
    task = MeetingTask()
    ev = Evaluator(task, FunctionLLM(lambda m, p: blanks), SamplingParams(max_tokens=256, seed=0))
    plain = PolicyGenome.from_text("Write the minutes.").with_genes(
        Lineage(), postprocess=LoopCut(enabled=True)
    )
    strips = plain.with_genes(Lineage(), postprocess=LoopCut(enabled=True, drop_blanks=True))
    recs = ev.evaluate([plain, strips], _meetings(1))
    out = {pid: rec.rollout for (pid, _), rec in recs.items()}
    assert out[plain.id].output == blanks.strip()
    assert out[strips.id].output == MINUTES.strip() and out[strips.id].raw_output == blanks
    assert LoopCut.from_json(strips.postprocess.to_json()) == strips.postprocess
    assert DEFAULTS["inner"]["seed_postprocess"]["drop_blanks"] is True


def test_no_default_gives_a_full_score_to_an_empty_or_repeated_answer():
    task = MeetingTask()
    real = task.load(FIXTURE)[0]
    metric = task.validation_metric()
    weights = DEFAULTS["outer"]["s_val_weights"]
    from evotrainer.tasks.base import combine_s_val

    for text in ("", "Okay.", "Project Manager (A): Okay.\n" * 32):
        row = metric.score(real, text, task.parse(text))
        assert combine_s_val(row, weights) < 0.1, text[:30]
        assert row["readability"] < 0.2
    for name, comp in task.reward_components().items():
        s = comp.score(real, "", None)
        assert s.score < 1.0 or not s.applicable, name


def test_abstaining_needs_content():
    from evotrainer.tasks.meetings.metrics import MinutesMetric

    task = MeetingTask()
    real = task.load(FIXTURE)[0]
    no_items = replace(real, payload=replace(real.payload, action_items=(), action_truth=()))
    metric = MinutesMetric(empty_reference="abstain")
    assert metric.score(no_items, "Okay.", None)["action_item_f1"] == 0.0
    assert metric.score(no_items, MINUTES.split("## Action")[0], None)["action_item_f1"] == 1.0
    assert MinutesMetric().score(no_items, "Okay.", None)["action_item_f1"] is None  # skip


# -- the return rule -------------------------------------------------------------------------------
def test_the_return_rule_refuses_a_loopier_winner():
    from evotrainer.evaluation.confirmation import confirm

    task = MeetingTask()
    meetings = _meetings(4)
    winner = PolicyGenome.from_text("Write long minutes and say everything twice.")
    seed = PolicyGenome.from_text("Write the minutes.")

    def answer(messages, params):
        return (MINUTES + " ".join([LOOP_LINE] * 10)) if "twice" in messages[-1].content else "x"

    ev = Evaluator(task, FunctionLLM(answer), SamplingParams(seed=0))
    val = Validator(task, ev, meetings, {"rougeL": 1.0}, "t")
    # the loop wins on ROUGE-L against a one-word seed ...
    got = confirm(val, winner, seed, "better_mean", refuse_loopier=False)
    assert got.returned == winner.id and got.difference.mean > 0
    # ... and is refused when loops count
    got = confirm(val, winner, seed, "better_mean")
    assert got.returned == seed.id and "loop more often" in got.reason
    assert got.winner_loop_share == 1.0 and got.to_json()["winner_loop_share"] == 1.0


# -- the config ----------------------------------------------------------------------------------------
def test_seed_genes_come_from_the_config_and_merge_with_the_tasks():
    from evotrainer.policy.seeds import seed_policies

    cfg = config_from_dict({"inner": {"seed_decoding": {"max_tokens": 400}}})
    task = MeetingTask()
    seeds = seed_policies(cfg.inner, task)
    task_default = DEFAULTS["inner"]["seed_decoding"]
    assert all(s.decoding.max_tokens == 400 for s in seeds)
    assert all(s.decoding.repeat_penalty == task_default["repeat_penalty"] for s in seeds)
    assert all(
        s.postprocess.enabled == DEFAULTS["inner"]["seed_postprocess"]["enabled"] for s in seeds
    )
    code = config_from_dict({"task": {"name": "code"}})
    assert not code.inner.seed_postprocess.enabled and not code.validation.refuse_loopier


def test_the_genes_survive_a_checkpoint_and_a_kill_then_resume(tmp_path):
    """Policies with evolved decoding and loop-cut genes are checkpointed with them; a run
    killed mid-way and resumed gives the uninterrupted result, genes and ids alike."""
    from evotrainer.run import events as ev
    from tests.fake_runs import (
        Killed,
        comparable_summary,
        fake_resume,
        fake_run,
        kill_at,
        small_config,
    )

    genes = {
        "seed_decoding": {"repeat_penalty": 1.2, "max_tokens": 200},
        "seed_postprocess": {"enabled": True, "cut_ngram": 8, "drop_blanks": True},
        "operators": {"decoding": 5.0, "synonym": 1.0},
    }
    cfg = small_config(tmp_path / "a.sqlite", inner=genes)
    whole = fake_run(cfg, tmp_path / "whole")
    evolved = [p for p in whole.state.policies.values() if p.lineage.operator == "decoding"]
    assert evolved, "the decoding operator made children"
    seeds = [p for p in whole.state.policies.values() if p.lineage.operator == "seed"]
    assert seeds and all(p.decoding.repeat_penalty == 1.2 for p in seeds)
    assert all(p.postprocess.cut_ngram == 8 and p.decoding.max_tokens == 200 for p in seeds)
    assert all(p.postprocess.drop_blanks for p in seeds)
    cfg = small_config(tmp_path / "b.sqlite", inner=genes)
    with pytest.raises(Killed):
        fake_run(cfg, tmp_path / "killed", observers=[kill_at(ev.GENERATION, 3)])
    resumed = fake_resume(tmp_path / "killed")
    assert comparable_summary(tmp_path / "killed") == comparable_summary(tmp_path / "whole")
    for pid, p in whole.state.policies.items():
        q = resumed.state.policies[pid]
        assert (q.decoding, q.postprocess) == (p.decoding, p.postprocess)
    best = json.loads((tmp_path / "killed" / "best" / "policy.json").read_text())
    assert PolicyGenome.from_json(best).id == best["id"]


def test_a_model_without_a_chat_template_is_refused_not_given_another_format(tmp_path, monkeypatch):
    llama_cpp = pytest.importorskip("llama_cpp")
    from evotrainer.errors import ModelSpecError
    from evotrainer.llm.llamacpp import LlamaCppLLM

    class BaseModel:  # a base model's GGUF: no tokenizer.chat_template in its metadata
        metadata = {"general.architecture": "gemma3"}

        def __init__(self, **kw):
            self.kw = kw

        def n_ctx(self) -> int:
            return 512

    monkeypatch.setattr(llama_cpp, "Llama", BaseModel)
    gguf = tmp_path / "base.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(ModelSpecError, match="no chat template.*model.chat_format"):
        LlamaCppLLM(gguf, n_threads=1)
    llm = LlamaCppLLM(gguf, n_threads=1, chat_format="gemma")  # named: taken as given
    assert llm._llm.kw["chat_format"] == "gemma"


def test_a_checkpoint_holding_raw_answers_and_genes_passes_the_resume_check(tmp_path):
    """The checkpoint's schema knows issue 46's fields: a validation row's answer before the
    loop cut (a string among the metrics), a policy's decoding and loop-cut genes, a harness's
    own genes; a wrong type there is refused like anywhere else."""
    from evotrainer.engine.checkpoint_schema import check_checkpoint
    from tests.fake_runs import small_config

    def looping(messages, params):
        return LOOPED

    from evotrainer.coevolution import CoEvolution
    from tests.fake_meetings import RecordingMeetingTask

    cfg = small_config(tmp_path / "c.sqlite", inner={"generations": 1})
    co = CoEvolution(cfg, task=RecordingMeetingTask(), llm=FunctionLLM(looping))
    co.run(tmp_path / "run")
    from evotrainer.run import checkpoint

    state, _, _ = checkpoint.load_latest(tmp_path / "run")
    rows = [r for v in state["validation_memo"].values() for r in v["per_instance"]]
    assert any(isinstance(r.get("raw_output"), str) for r in rows)
    assert any("postprocess" in p for p in state["policies"].values())
    check_checkpoint(state)
    bad = json.loads(json.dumps(state))
    next(iter(bad["policies"].values()))["postprocess"] = {"enabled": "yes"}
    with pytest.raises(TypeError, match="postprocess.enabled"):
        check_checkpoint(bad)
