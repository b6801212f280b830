"""Variation operators (crossover, mutation), child repair, the registry and seed variations.

Fast and deterministic: LLM operators run against fakes only.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from evotrainer.errors import LLMError
from evotrainer.llm.base import Completion
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.operators import (
    OPERATORS,
    Operator,
    OperatorContext,
    choose_operator,
    default_operator_weights,
    repair_child,
    repair_text,
)
from evotrainer.operators import seed_variations as _seed_variations
from evotrainer.operators.crossover import SentenceCrossover
from evotrainer.operators.keywords import KeywordOperator
from evotrainer.operators.keywords import present_phrases as _present_phrases
from evotrainer.operators.llm_ops import MAX_FEEDBACK_CHARS, LLMMerge, drop_cut_tail
from evotrainer.operators.restructure import ReorderOperator
from evotrainer.operators.synonym_table import candidates as _candidates
from evotrainer.operators.synonyms import SynonymOperator
from evotrainer.operators.text import Doc, normalise, split_sentences
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.meetings.seeds import seed_policies
from evotrainer.tasks.meetings.style import SEED_PHRASES, STYLE_PHRASES, VOCABULARY
from evotrainer.types import Lineage

# the operators run with the meeting task's vocabulary, as they do in a meeting run
SYNONYMS, VERB_SYNONYMS = VOCABULARY.table.synonyms, VOCABULARY.table.verb_synonyms


def present_phrases(text: str) -> list[str]:
    return _present_phrases(text, VOCABULARY)


def candidates(text: str) -> list[tuple[int, int, str]]:
    return _candidates(text, VOCABULARY.table)


def seed_variations(seeds, n, rng, max_chars=1500):
    return _seed_variations(seeds, n, rng, max_chars, vocab=VOCABULARY)


LEXICAL = ["synonym", "reorder", "keyword", "sentence_crossover"]
LLM_OPS = ["llm_paraphrase", "llm_merge", "reflective"]
STRUCTURAL = ["template", "template_crossover", "fewshot", "feedback_edit"]  # no LLM needed
PARAMETERS = ["decoding"]  # decoding and loop-cut genes, no LLM needed
GOOD_ANSWER = "Write the minutes with a title, every decision and at most five action items."

LONG_A = (
    "You are a careful minute-taker. Read the whole transcript before writing. "
    "Summarise each topic in one or two sentences. List the decisions that were made."
)
LONG_B = (
    "Write the minutes as bullet points. Start with a one-line title. "
    "Give each action item an owner. Ignore small talk and off-topic chatter."
)


def ctx(seed: int = 0, **kw) -> OperatorContext:
    return OperatorContext(rng=random.Random(seed), generation=3, vocabulary=VOCABULARY, **kw)


def seeds() -> list[PolicyGenome]:
    return seed_policies()


def parents_for(op: Operator, i: int = 0) -> list[PolicyGenome]:
    s = seeds()
    return [s[i % 3]] if op.arity == 1 else [s[i % 3], s[(i + 1) % 3]]


def assert_valid_child(child: PolicyGenome, parents: list[PolicyGenome], op: Operator) -> None:
    assert child.id not in {p.id for p in parents}
    assert child.lineage.parents == tuple(p.id for p in parents)
    assert child.lineage.operator == op.name
    assert child.lineage.generation == 3
    assert child.lineage.note
    assert repair_text(child.system, 1500) == child.system  # already clean
    assert child.system[-1] in ".!?"


# ---------------------------------------------------------------- every operator


@pytest.mark.parametrize("name", LEXICAL)
def test_lexical_operator_gives_valid_distinct_child(name: str) -> None:
    op = OPERATORS[name]
    made = 0
    for i in range(9):
        parents = parents_for(op, i)
        child = op.apply(parents, ctx(i))
        if child is not None:
            made += 1
            assert_valid_child(child, parents, op)
    assert made >= 6  # reorder has no valid edit for seed A (its role sentence stays first)


@pytest.mark.parametrize("name", LEXICAL + LLM_OPS)
def test_operator_is_deterministic_given_rng(name: str) -> None:
    op = OPERATORS[name]
    llm = FunctionLLM(lambda m, p: f"{GOOD_ANSWER} Use seed {p.seed % 97} wisely.")
    s = seeds()
    fb = {p.id: "R1: missed the budget topic." for p in s}
    for i in range(4):
        a = op.apply(parents_for(op, i), ctx(100 + i, llm=llm, feedback=fb))
        b = op.apply(parents_for(op, i), ctx(100 + i, llm=llm, feedback=fb))
        assert (a and a.id) == (b and b.id)
        assert (a and a.lineage) == (b and b.lineage)


def test_operators_satisfy_protocol_and_registry() -> None:
    assert set(OPERATORS) == set(LEXICAL + LLM_OPS + STRUCTURAL + PARAMETERS)
    for name, op in OPERATORS.items():
        assert isinstance(op, Operator)
        assert op.name == name
        crossovers = ("sentence_crossover", "llm_merge", "template_crossover")
        assert op.arity == (2 if name in crossovers else 1)
        assert op.uses_llm == (name in LLM_OPS)
    assert set(default_operator_weights()) == set(OPERATORS)
    assert default_operator_weights()["reflective"] > default_operator_weights()["synonym"]


def test_wrong_arity_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        OPERATORS["sentence_crossover"].apply(seeds()[:1], ctx())


# ---------------------------------------------------------------- synonym


def test_synonym_table_is_large_enough() -> None:
    assert len(SYNONYMS) + len(VERB_SYNONYMS) >= 60
    for table in (SYNONYMS, VERB_SYNONYMS):
        for key, alts in table.items():
            assert key == key.lower() and alts and key not in alts


def test_synonym_preserves_capitalisation_and_articles() -> None:
    p = PolicyGenome.from_text("You are a professional secretary. Summarise the key points.")
    outs = set()
    for i in range(40):
        child = SynonymOperator(max_edits=1).apply([p], ctx(i))
        assert child is not None
        outs.add(child.system)
        assert "a experienced" not in child.system and "an skilled" not in child.system
        assert "an professional" not in child.system
    assert any(o.startswith("You are an experienced") or "an expert" in o for o in outs)
    assert any(o.split(". ")[1][0].isupper() and "Summarise" not in o for o in outs)


def test_synonym_respects_quotes_labels_and_nouns() -> None:
    text = "Write a list of topics as 'Owner: task' lines. Title: always."
    keys = {k for _, _, k in candidates(text)}
    assert "list" not in keys  # a noun here
    assert "title" not in keys  # a label
    assert "write" in keys
    p = PolicyGenome.from_text("Keep a list of items in the 'key points' section.")
    assert SynonymOperator().apply([p], ctx()) is None  # nothing replaceable


def test_synonym_can_edit_template() -> None:
    p = PolicyGenome(
        {"system": "Summarise the meeting for the team.", "template": "Decisions and key points"}
    )
    op = SynonymOperator()
    op.other_component_p = 1.0
    child = op.apply([p], ctx())
    assert child is not None
    assert child.system == p.system and child.components["template"] != "Decisions and key points"


# ---------------------------------------------------------------- reorder


def test_reorder_keeps_sentences_or_splits_cleanly() -> None:
    p = PolicyGenome.from_text(LONG_A)
    orig = {normalise(s) for s in Doc.parse(LONG_A).sentences()}
    for i in range(10):
        child = ReorderOperator().apply([p], ctx(i))
        assert child is not None
        sents = Doc.parse(child.system).sentences()
        assert all(s[0].isupper() for s in sents)
        if child.lineage.note.startswith(("swap", "move")):
            assert {normalise(s) for s in sents} == orig


def test_reorder_splits_long_sentence() -> None:
    p = seeds()[2]  # one long sentence: "First ..., then ..., and finally ..."
    child = ReorderOperator().apply([p], ctx(0))
    assert child is not None
    sents = split_sentences(child.system)
    assert len(sents) == 2 and all(s[0].isupper() and s.endswith(".") for s in sents)
    assert sents[0].startswith("First")


def test_reorder_never_leads_with_a_leaning_sentence() -> None:
    p = PolicyGenome.from_text(
        "Read the transcript. Then list the decisions. Finally, add a title."
    )
    for i in range(20):
        child = ReorderOperator().apply([p], ctx(i))
        if child is not None:
            assert not child.system.startswith(("Then", "Finally"))


# ---------------------------------------------------------------- keyword


def test_keyword_insert_adds_a_known_phrase() -> None:
    p = seeds()[0]
    child = KeywordOperator(p_remove=0.0).apply([p], ctx())
    assert child is not None
    added = set(present_phrases(child.system)) - set(present_phrases(p.system))
    assert len(added) == 1 and added <= set(STYLE_PHRASES)


def test_keyword_remove_drops_known_phrase() -> None:
    p = PolicyGenome.from_text(LONG_B)
    child = KeywordOperator(p_remove=1.0).apply([p], ctx())
    assert child is not None
    assert len(present_phrases(child.system)) == len(present_phrases(LONG_B)) - 1
    assert child.lineage.note.startswith("-")


def test_keyword_does_not_add_a_conflicting_or_redundant_phrase() -> None:
    p = PolicyGenome.from_text("Summarise the meeting as bullet points. Be concise.")
    for i in range(30):
        child = KeywordOperator(p_remove=0.0).apply([p], ctx(i))
        assert child is not None
        assert "Be thorough and detailed." not in child.system
        assert "Use bullet points." not in child.system


# ---------------------------------------------------------------- crossover


def test_crossover_child_has_sentences_from_both_parents() -> None:
    a, b = PolicyGenome.from_text(LONG_A), PolicyGenome.from_text(LONG_B)
    sa = {normalise(s) for s in Doc.parse(LONG_A).sentences()}
    sb = {normalise(s) for s in Doc.parse(LONG_B).sentences()}
    for i in range(10):
        child = SentenceCrossover().apply([a, b], ctx(i))
        assert child is not None
        sc = [normalise(s) for s in Doc.parse(child.system).sentences()]
        assert set(sc) & sa and set(sc) & sb
        assert set(sc) <= sa | sb
        assert len(sc) == len(set(sc))


def test_crossover_deduplicates_shared_sentences() -> None:
    shared = "Start with a one-line title."
    a = PolicyGenome.from_text(f"{shared} Summarise every topic briefly.")
    b = PolicyGenome.from_text(f"{shared} List each decision that was made.")
    for i in range(10):
        child = SentenceCrossover().apply([a, b], ctx(i))
        if child is not None:
            assert child.system.count(shared) <= 1


def test_crossover_of_identical_parents_gives_none() -> None:
    p = seeds()[0]
    assert SentenceCrossover().apply([p, p], ctx()) is None


def test_crossover_paragraph_level_and_inherits_components() -> None:
    a = PolicyGenome(
        {
            "system": "Summarise the meeting for the team.\n\nList each decision with its owner.",
            "template": "Title: <title>\n- Owner: task",
        }
    )
    b = PolicyGenome({"system": "Be concise and factual always.\n\nGroup items by department."})
    for i in range(8):
        child = SentenceCrossover().apply([a, b], ctx(i))
        assert child is not None
        paras = child.system.split("\n\n")
        assert len(paras) >= 2
        assert (
            "template" not in child.components
            or child.components["template"] == (a.components["template"])
        )


def test_crossover_is_shortened_to_max_chars() -> None:
    a = PolicyGenome.from_text(LONG_A)
    b = PolicyGenome.from_text(LONG_B)
    child = SentenceCrossover().apply([a, b], ctx(1, max_chars=160))
    assert child is not None
    assert len(child.system) <= 160 and child.system.endswith(".")


# ---------------------------------------------------------------- LLM operators


def llm_answering(text: str) -> FunctionLLM:
    return FunctionLLM(lambda m, p: text)


@pytest.mark.parametrize("name", LLM_OPS)
def test_llm_operator_repairs_chatty_answer(name: str) -> None:
    op = OPERATORS[name]
    chatty = f'Sure! Here is the rewritten instruction:\n"{GOOD_ANSWER}"\nI hope this helps!'
    parents = parents_for(op)
    fb = {parents[0].id: "R3: 7 action items, too many."}
    child = op.apply(parents, ctx(llm=llm_answering(chatty), feedback=fb))
    assert child is not None
    assert child.system == GOOD_ANSWER
    assert_valid_child(child, parents, op)


@pytest.mark.parametrize("name", LLM_OPS)
@pytest.mark.parametrize("answer", ["", "   ", "!!!! ####", "ok", "the the the the the the the"])
def test_llm_operator_rejects_garbage(name: str, answer: str) -> None:
    op = OPERATORS[name]
    parents = parents_for(op)
    fb = {parents[0].id: "R1: missed topics."}
    assert op.apply(parents, ctx(llm=llm_answering(answer), feedback=fb)) is None


@pytest.mark.parametrize("name", LLM_OPS)
def test_llm_operator_survives_llm_error_and_missing_llm(name: str) -> None:
    op = OPERATORS[name]
    parents = parents_for(op)
    fb = {parents[0].id: "R1: missed topics."}

    def fail(m, p):
        raise LLMError("server down")

    assert op.apply(parents, ctx(llm=FunctionLLM(fail), feedback=fb)) is None
    assert op.apply(parents, ctx(llm=None, feedback=fb)) is None


@pytest.mark.parametrize("name", LLM_OPS)
def test_llm_operator_rejects_echo_and_unchanged(name: str) -> None:
    op = OPERATORS[name]
    parents = parents_for(op)
    fb = {parents[0].id: "R1: missed topics."}
    echo = FunctionLLM(lambda m, p: m[-1].content)
    assert op.apply(parents, ctx(llm=echo, feedback=fb)) is None
    same = llm_answering(f'"{parents[0].system}"')
    if op.arity == 1:
        assert op.apply(parents, ctx(llm=same, feedback=fb)) is None


def test_llm_paraphrase_rejects_answer_that_lost_most_content() -> None:
    p = PolicyGenome.from_text(LONG_A + " " + LONG_B)
    child = OPERATORS["llm_paraphrase"].apply(
        [p], ctx(llm=llm_answering("Summarise the meeting for the team."))
    )
    assert child is None


def test_llm_seed_comes_from_rng_and_prompt_is_short() -> None:
    seen = []
    llm = FunctionLLM(lambda m, p: seen.append((m, p)) or GOOD_ANSWER)
    op = OPERATORS["llm_paraphrase"]
    p = seeds()[1]
    op.apply([p], ctx(1, llm=llm))
    op.apply([p], ctx(1, llm=llm))
    op.apply([p], ctx(2, llm=llm))
    assert seen[0][1].seed == seen[1][1].seed != seen[2][1].seed
    assert seen[0][1].temperature == 0.8
    messages = seen[0][0]
    assert p.system in messages[-1].content
    overhead = sum(len(m.content) for m in messages) - len(p.system)
    assert overhead / 4 < 250  # ~4 characters per token


def test_llm_merge_prompt_holds_both_parents() -> None:
    seen = []
    llm = FunctionLLM(lambda m, p: seen.append(m) or GOOD_ANSWER)
    a, b = seeds()[:2]
    child = LLMMerge().apply([a, b], ctx(llm=llm))
    assert child is not None and child.lineage.parents == (a.id, b.id)
    assert a.system in seen[0][-1].content and b.system in seen[0][-1].content


def test_reflective_uses_feedback_and_needs_it() -> None:
    seen = []
    llm = FunctionLLM(lambda m, p: seen.append(m) or GOOD_ANSWER)
    p = seeds()[0]
    op = OPERATORS["reflective"]
    assert op.apply([p], ctx(llm=llm)) is None
    assert op.apply([p], ctx(llm=llm, feedback={p.id: "  "})) is None
    assert llm.calls == 0
    long_fb = "R1 completeness 0.1: missed the budget topic. " * 40
    child = op.apply([p], ctx(llm=llm, feedback={p.id: long_fb}))
    assert child is not None and child.lineage.operator == "reflective"
    prompt = seen[0][-1].content
    assert "missed the budget topic" in prompt and p.system in prompt
    assert len(prompt) < len(p.system) + MAX_FEEDBACK_CHARS + 400


def test_llm_answer_cut_by_max_tokens_drops_unfinished_sentence() -> None:
    class CutLLM(FunctionLLM):
        def complete(self, messages, params):
            return Completion(text=GOOD_ANSWER + " Then also list every", finish_reason="length")

    child = OPERATORS["llm_paraphrase"].apply([seeds()[0]], ctx(llm=CutLLM(lambda m, p: "")))
    assert child is not None and child.system == GOOD_ANSWER
    assert drop_cut_tail("Be brief. Then lis") == "Be brief. Then lis"  # too little before it


# ---------------------------------------------------------------- repair


@pytest.mark.parametrize(
    "raw",
    [
        f'Sure! Here is the rewritten instruction:\n"{GOOD_ANSWER}"',
        f"Rewritten prompt: {GOOD_ANSWER}",
        f"**New instruction:** {GOOD_ANSWER}",
        f"Certainly, here's the improved version: {GOOD_ANSWER} I hope this helps!",
        f"```\n{GOOD_ANSWER}\n```",
        f"```text\n{GOOD_ANSWER}\n```\nLet me know if you need changes.",
        f"'{GOOD_ANSWER}'",
        f"“{GOOD_ANSWER}”",
        f"{GOOD_ANSWER}\n\nI hope this helps!",
        f"{GOOD_ANSWER}\n\nExplanation: I made it shorter and clearer.",
        f"  {GOOD_ANSWER.replace(' ', '   ')}  ",
        GOOD_ANSWER[:-1],  # missing period is added
        f"{GOOD_ANSWER} {GOOD_ANSWER}",  # repeated sentence dropped
        f"{GOOD_ANSWER} Then list the",  # unfinished fragment dropped
        f"{GOOD_ANSWER} Use this format:",  # dangling colon dropped
    ],
)
def test_repair_text_repairs(raw: str) -> None:
    assert repair_text(raw, 1500) == GOOD_ANSWER


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "!!!! ####",
        "Be brief.",  # too short
        "Summarise the meeting now",  # < 25 chars
        "Write 12 34 56 78 90 11 22 33 x1 y2 z3.",  # few real words
        "minutes minutes minutes minutes minutes and more minutes now.",  # repeated word
        "★★★★★ ☆☆☆☆☆ ♥♥♥♥ Summarise the meeting ♦♦♦♦♦♦ ✓✓✓✓✓ ✓✓✓✓",  # symbols
        "Sure! Here is the rewritten instruction:",  # chatter only
        "and then the",  # fragment only
    ],
)
def test_repair_text_rejects(raw: str) -> None:
    assert repair_text(raw, 1500) is None


def test_repair_cuts_long_text_at_sentence_boundary() -> None:
    text = " ".join(f"Point {i} is about the minutes of the meeting." for i in range(50))
    out = repair_text(text, 300)
    assert out is not None and len(out) <= 300 and out.endswith("meeting.")
    assert text.startswith(out)
    assert repair_text("word " * 400, 300) is None  # no boundary to cut at


def test_repair_keeps_layout_of_templates() -> None:
    template = "Title: <title>\nTopics:\n- <topic>\nAction items:\n- Owner: task"
    assert repair_text(template, 1500, prose=False) == template
    listing = "Write the minutes in this format:\n- Title\n- Decisions\n- Owner: task"
    assert repair_text(listing, 1500) == listing


def test_repair_child_per_component() -> None:
    lin = Lineage(parents=("p1",), operator="x", generation=1)
    child = PolicyGenome(
        {
            "system": f"Rewritten prompt: {GOOD_ANSWER}",
            "template": "Title:  <title>\n- Owner: task",
        },
        lineage=lin,
    )
    fixed = repair_child(child, 1500)
    assert fixed is not None and fixed.system == GOOD_ANSWER and fixed.lineage == lin
    assert fixed.components["template"] == "Title: <title>\n- Owner: task"
    bad = PolicyGenome({"system": "!!!! #### ????"}, lineage=lin)
    assert repair_child(bad, 1500) is None
    assert repair_child(bad, 1500, only=["template"]) is bad


# ---------------------------------------------------------------- registry


def test_choose_operator_skips_llm_ops_without_llm() -> None:
    rng = random.Random(0)
    names = {choose_operator(rng, None, llm_available=False).name for _ in range(400)}
    assert names == set(LEXICAL + STRUCTURAL + PARAMETERS)
    names = {choose_operator(rng, None, llm_available=True).name for _ in range(400)}
    assert names == set(OPERATORS)


def test_choose_operator_weights_arity_exclude() -> None:
    rng = random.Random(1)
    weights = {"synonym": 1.0, "keyword": 0.0, "llm_merge": 5.0}
    names = [choose_operator(rng, weights, llm_available=True).name for _ in range(300)]
    assert set(names) == {"synonym", "llm_merge"} and names.count("llm_merge") > 200
    for _ in range(50):
        assert choose_operator(rng, None, True, arity=2).arity == 2
        assert choose_operator(rng, None, True, exclude={"reflective"}).name != "reflective"
    with pytest.raises(ValueError):
        choose_operator(rng, {"nope": 1.0}, True)
    with pytest.raises(ValueError):
        choose_operator(rng, {"llm_merge": 1.0}, llm_available=False)
    a = [choose_operator(random.Random(5), None, True).name for _ in range(5)]
    b = [choose_operator(random.Random(5), None, True).name for _ in range(5)]
    assert a == b


# ---------------------------------------------------------------- seed variations


def test_seed_variations_are_distinct_and_traced() -> None:
    s = seeds()
    out = seed_variations(s, 7, random.Random(0))
    assert len(out) == 7
    ids = {p.id for p in out}
    assert len(ids) == 7 and not ids & {p.id for p in s}
    for v in out:
        assert v.lineage.operator == "seed_variation" and v.lineage.generation == 0
        assert v.lineage.parents[0] in {p.id for p in s}
        assert v.name and v.lineage.note
        assert repair_text(v.system, 1500) == v.system
    assert sum(any(ph in v.system for ph in SEED_PHRASES) for v in out) >= 6
    again = seed_variations(s, 7, random.Random(0))
    assert [p.id for p in again] == [p.id for p in out]
    assert seed_variations(s, 0, random.Random(0)) == []


def test_seed_variations_cover_spec_keywords() -> None:
    out = seed_variations(seeds(), 30, random.Random(3))
    assert len(out) == 30
    text = " ".join(v.system for v in out)
    for word in ("rigorous", "concise", "department"):
        assert word in text


def test_operators_do_not_depend_on_hash_seed() -> None:
    """Same rng seed -> same children in processes with different PYTHONHASHSEED (no set/dict
    iteration order leaks into a choice)."""
    script = (
        "import random, hashlib\n"
        "from evotrainer.operators import OperatorContext, choose_operator, seed_variations\n"
        "from evotrainer.tasks.meetings.seeds import seed_policies\n"
        "from evotrainer.tasks.meetings.style import VOCABULARY as V\n"
        "rng = random.Random(3)\n"
        "pop = seed_policies() + seed_variations(seed_policies(), 5, rng, vocab=V)\n"
        "h = hashlib.sha1()\n"
        "for gen in range(120):\n"
        "    op = choose_operator(rng, None, False)\n"
        "    ctx = OperatorContext(rng=rng, generation=gen, vocabulary=V)\n"
        "    c = op.apply(rng.sample(pop, op.arity), ctx)\n"
        "    if c is not None:\n"
        "        pop.append(c); h.update(c.id.encode())\n"
        "print(h.hexdigest())\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    outs = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": src}
        run = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 0, run.stderr
        outs.add(run.stdout.strip())
    assert len(outs) == 1
