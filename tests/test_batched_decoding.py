"""Batched multi-sequence decoding of the embedded model (issue 12): the answers of prompts that
share a transcript, decoded together, equal the sequential path's token for token: text, finish
reason and token counts. The pure parts (prefix, answer assembly) are tested without a model."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evotrainer.llm.base import Completion, SamplingParams
from evotrainer.llm.llamacpp_batch import (
    MIN_PIECE,
    Answer,
    clusters,
    common_prefix,
    pieces,
)
from evotrainer.llm.prompt_lookup import Drafter
from evotrainer.types import Message
from tests.support import needs_model

TRANSCRIPT = (
    "Meeting transcript:\n"
    "Anna: Let's start. The budget for the new website is 12,000 euros.\n"
    "Ben: I can have the design ready by Friday.\n"
    "Anna: Good. Carla, please check the hosting contract.\n"
    "Carla: Will do. We also need to decide on the launch date.\n"
    "Anna: Let's say the first of June. Ben sends the mock-ups to the client.\n"
)
INSTRUCTIONS = (
    "Write the minutes with a title, the topics and the action items.",
    "Summarise the key points as bullet points and list the tasks as 'Owner: task'.",
    "List the decisions.",
    "First extract the key statements, then list the to-do items.",
    "Who does what? One line per person.",
    "Write a one-sentence summary.",
)


def _prompt(instruction: str) -> list[Message]:
    return [Message("user", f"{TRANSCRIPT}\n{instruction}")]


# -- without a model ----------------------------------------------------------------------
def test_common_prefix_leaves_every_prompt_a_token():
    assert common_prefix([[1, 2, 3, 4], [1, 2, 3, 5]]) == 3
    assert common_prefix([[1, 2, 3], [1, 2, 3, 4]]) == 2  # the shorter keeps its last token
    assert common_prefix([[7, 8], [9, 8]]) == 0


def test_pieces_cover_the_range_and_never_leave_one_token_alone():
    assert pieces(0, 10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert pieces(0, 9, 4) == [(0, 4), (4, 7), (7, 9)]  # not 4 + 4 + 1
    assert pieces(5, 6, 512) == [(5, 6)] and pieces(3, 3, 512) == []
    for size in (3, 4, 7, 512):
        for start in range(4):
            for end in range(start + MIN_PIECE, start + 40):
                cuts = pieces(start, end, size)
                assert cuts[0][0] == start and cuts[-1][1] == end
                assert all(b == c for (_, b), (c, _) in zip(cuts, cuts[1:], strict=False))
                assert all(MIN_PIECE <= b - a <= size for a, b in cuts)


def test_clusters_split_a_group_by_meeting():
    a, b = list(range(100)), [0, 1, *range(500, 600)]  # two transcripts sharing a 2-token header
    prompts = [[*a, 1000], [*a, 1001, 1002], [*b, 1000], [*b, 1003], [*a, 1004]]
    assert clusters(prompts) == [[0, 1], [2, 3], [4]]  # consecutive only: a again is its own
    assert clusters([[*a, 1]]) == [[0]]


def _answer(max_tokens=5, stop=(), criteria=None):
    pieces = {1: b"abc", 2: b" b", 3: b"\xc3", 4: b"\xa9", 5: b"<end>", 9: b""}
    return Answer(
        prompt=[0],
        max_tokens=max_tokens,
        stop=[s.encode() for s in stop],
        criteria=criteria,
        detokenize=lambda toks, prev_tokens=None: b"".join(pieces[t] for t in toks),
        is_eog=lambda t: t == 9,
        n_vocab=10,
    )


def test_answer_assembly_follows_create_completion():
    a = _answer()
    for t in (1, 2, 9):
        a.feed(t)
    assert (a.text, a.finish, a.completion, a.done) == (b"abc b", "stop", [1, 2], True)
    a = _answer(max_tokens=2)
    a.feed(1)
    a.feed(2)
    assert (a.text, a.finish) == (b"abc b", "length")
    a = _answer(stop=["<end>"])
    for t in (1, 5):
        a.feed(t)
    assert (a.text, a.finish, a.completion) == (b"abc", "stop", [1, 5])
    # a multi-byte character straddling max_tokens: held back, so generation goes on one more
    a = _answer(max_tokens=2)
    for t in (1, 3):
        a.feed(t)
    assert not a.done
    a.feed(4)
    assert a.done and a.text == "abcé".encode() and a.finish == "length"
    # the chat format's stopping criteria see the tokens evaluated so far
    a = _answer(criteria=lambda toks, logits: list(toks) == [0, 1])
    assert not a.stopped_by_criteria()
    a.feed(1)
    assert a.stopped_by_criteria() and a.finish == "stop" and a.text == b"abc"


def test_drafter_proposes_what_followed_the_latest_copy_of_the_last_tokens():
    d = Drafter([1, 2, 3, 4, 5, 9, 2, 3, 7, 8])
    assert d.draft(4) == []  # "7 8" was never seen before
    d.append(2)
    d.append(3)  # "8 2 3": no 3-gram match; "2 3" last continued by 7 8
    assert d.draft(4) == [7, 8, 2, 3]
    assert d.draft(1) == [7]
    d.append(7)  # "2 3 7" seen once: what followed it
    assert d.draft(2) == [8, 2]


def test_drafter_follows_a_loop_of_its_own_answer():
    d = Drafter([5, 6])  # the prompt
    for t in [10, 11, 12, 10, 11, 12, 10, 11]:
        d.append(t)
    assert d.draft(5) == [12, 10, 11]  # up to the end of what is known


# -- the real model -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def smollm2():
    from evotrainer.llm.llamacpp import LlamaCppLLM, smollm2_path

    return LlamaCppLLM(smollm2_path(), n_ctx=2048, n_threads=1, label="smollm2", batch_size=4)


def _same(a: Completion, b: Completion) -> tuple:
    return (a.text, a.finish_reason, a.prompt_tokens, a.completion_tokens) == (
        b.text,
        b.finish_reason,
        b.prompt_tokens,
        b.completion_tokens,
    )


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize("temperature", [0.0, 0.7])
def test_batched_answers_equal_sequential_ones_token_for_token(smollm2, temperature):
    params = SamplingParams(temperature=temperature, max_tokens=48, seed=11)
    prompts = [_prompt(i) for i in INSTRUCTIONS]
    sequential = [smollm2.complete(m, params) for m in prompts]
    groups = smollm2._decoder.stats["groups"] if smollm2._decoder else 0
    batched = smollm2.complete_batch(prompts, params)  # 6 prompts, batch_size 4: 4 + 2
    assert all(isinstance(c, Completion) for c in batched)
    assert [c.text for c in batched] == [c.text for c in sequential]
    assert all(_same(a, b) for a, b in zip(batched, sequential, strict=True))
    assert smollm2._decoder.stats["groups"] == groups + 2  # decoded in batches, not one by one
    assert smollm2._decoder.stats["prefix_tokens"] > 100
    # where the time went: every phase counted, the steps by their rows (at most 4 per step)
    stats = smollm2._decoder.stats
    assert stats["seconds"]["steps"] > 0 and stats["seconds"]["tails"] > 0
    assert stats["step_rows"] and max(stats["step_rows"]) <= 4


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize("temperature", [0.0, 0.7])
def test_batched_answers_stay_sequential_with_the_penalties_on(smollm2, temperature):
    """A policy's decoding genes (repetition, frequency and presence penalties) reach both
    paths: the batched answers still equal the one-at-a-time ones, and differ from the answers
    without the penalties (so the genes are not silently dropped)."""
    params = SamplingParams(
        temperature=temperature,
        max_tokens=48,
        seed=11,
        repeat_penalty=1.3,
        frequency_penalty=0.5,
        presence_penalty=0.5,
    )
    prompts = [_prompt(i) for i in INSTRUCTIONS]
    sequential = [smollm2.complete(m, params) for m in prompts]
    groups = smollm2._decoder.stats["groups"] if smollm2._decoder else 0
    batched = smollm2.complete_batch(prompts, params)
    assert all(isinstance(c, Completion) for c in batched)
    assert [c.text for c in batched] == [c.text for c in sequential]
    assert all(_same(a, b) for a, b in zip(batched, sequential, strict=True))
    assert smollm2._decoder.stats["groups"] == groups + 2  # decoded in batches
    plain = replace(params, repeat_penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0)
    unpenalised = [smollm2.complete(m, plain).text for m in prompts]
    assert unpenalised != [c.text for c in sequential]


@pytest.mark.slow
@needs_model
def test_drafts_save_decoding_steps_and_answer_the_same_each_time():
    """Prompt-lookup drafts verified in the decoding step (``draft_tokens``): a draft token is
    kept only where the model chose it, so steps are fewer than tokens. Not the sequential
    answers token for token: llama.cpp computes a token's logits a little differently when
    other tokens of its sequence are in the same step (docs/efficiency.md), so the test asks
    what holds: the same answers on every run, and drafts proposed and accepted."""
    from evotrainer.llm.llamacpp import LlamaCppLLM, smollm2_path

    model = LlamaCppLLM(
        smollm2_path(), n_ctx=2048, n_threads=1, label="smollm2", batch_size=4, draft_tokens=6
    )
    params = SamplingParams(temperature=0.0, max_tokens=64, seed=5)
    prompts = [_prompt(i) for i in ("Repeat the transcript word for word.", *INSTRUCTIONS[:3])]
    first = model.complete_batch(prompts, params)
    again = model.complete_batch(prompts, params)
    assert all(isinstance(c, Completion) for c in first)
    assert all(_same(a, b) for a, b in zip(first, again, strict=True))
    stats = model._decoder.stats
    assert stats["drafted"] > 0 and 0 < stats["accepted"] <= stats["drafted"]
    generated = sum(c.completion_tokens for c in first + again)
    assert sum(stats["step_rows"].values()) < generated  # fewer steps than tokens
    assert model.describe()["draft_tokens"] == 6


@pytest.mark.slow
@needs_model
def test_a_meetings_transcript_is_prefilled_once_not_once_per_group(smollm2):
    """The second group of a meeting keeps the first group's prefilled transcript (as the
    sequential path keeps its prefix); another meeting keeps only the common chat header; the
    answers stay those of the sequential path throughout."""
    params = SamplingParams(temperature=0.0, max_tokens=24, seed=3)
    meeting = [_prompt(i) for i in INSTRUCTIONS]  # groups of 4 and 2
    other = [[Message("user", f"{TRANSCRIPT.replace('Anna', 'Dora')}\n{i}")] for i in INSTRUCTIONS]
    transcript_tokens = smollm2.count_tokens(TRANSCRIPT)
    sequential = [smollm2.complete(m, params) for m in [*meeting, *other, *meeting]]
    smollm2.complete_batch(meeting[:2], params)  # the decoder exists, its cache starts empty
    smollm2._decoder.close()
    stats = smollm2._decoder.stats
    batched, reused = [], []
    for prompts in (meeting, other, meeting):
        before = stats["prefix_reused_tokens"]
        batched += smollm2.complete_batch(prompts, params)
        reused.append(stats["prefix_reused_tokens"] - before)
    assert all(_same(a, b) for a, b in zip(batched, sequential, strict=True))
    assert reused[0] >= transcript_tokens - 2  # group 2 kept group 1's transcript
    # another meeting: the chat header and "Meeting transcript:" only, then its own group 2
    assert reused[1] - reused[0] < transcript_tokens / 2
    assert reused[2] - reused[0] < transcript_tokens / 2


@pytest.mark.slow
@needs_model
def test_a_prompt_too_long_fails_alone_in_its_batch(smollm2):
    params = SamplingParams(max_tokens=8, seed=0)
    prompts = [_prompt(INSTRUCTIONS[0]), [Message("user", "word " * 3000)]]
    ok, too_long = smollm2.complete_batch(prompts, params)
    assert isinstance(ok, Completion) and ok.text
    assert type(too_long).__name__ == "ContextOverflowError"


@pytest.mark.slow
@needs_model
def test_a_group_of_two_meetings_decodes_together_with_the_sequential_answers(smollm2):
    """A group may hold several meetings (a racing rung: a few policies on each of a few
    meetings): each transcript is prefilled once into its own stream, the answers equal the
    sequential ones, and a later group of the first meeting reuses its transcript."""
    params = SamplingParams(temperature=0.0, max_tokens=24, seed=5)
    other = TRANSCRIPT.replace("Anna", "Dora").replace("website", "shop")
    first = [_prompt(i) for i in INSTRUCTIONS[:2]]
    second = [[Message("user", f"{other}\n{i}")] for i in INSTRUCTIONS[:2]]
    again = [_prompt(i) for i in INSTRUCTIONS[2:4]]
    prompts = [*first, *second]
    sequential = [smollm2.complete(m, params) for m in [*prompts, *again]]
    smollm2.complete_batch(first, params)  # the decoder exists
    smollm2._decoder.close()
    stats = smollm2._decoder.stats
    before = dict(stats)
    batched = smollm2.complete_batch(prompts, params)  # one group of 4, two meetings
    assert stats["groups"] == before["groups"] + 1 and stats["clusters"] == before["clusters"] + 2
    mid = stats["prefix_reused_tokens"]
    batched += smollm2.complete_batch(again, params)
    assert all(_same(a, b) for a, b in zip(batched, sequential, strict=True))
    assert stats["prefix_reused_tokens"] - mid >= smollm2.count_tokens(TRANSCRIPT) - 2


@pytest.mark.slow
@needs_model
def test_a_meeting_alone_in_a_group_keeps_the_sequential_answer():
    """A meeting with one prompt in a mixed group, or two equal prompts, once left the last
    prompt token to a llama_decode of its own; on this AMI meeting (1,024-token cut) seed C's
    greedy answer then flipped at a near-tie. Every prompt now prefills ``MIN_TAIL`` tokens of
    its own, and the answers are the sequential ones."""
    from evotrainer.llm.llamacpp import LlamaCppLLM, smollm2_path
    from evotrainer.tasks.meetings.seeds import seed_policies
    from evotrainer.tasks.meetings.task import MeetingTask
    from tests.support import real_data

    task = MeetingTask(max_input_tokens=1024, truncation="head_tail")
    meetings = {i.id: i for i in task.load(real_data("ami-train.jsonl"))}
    seed_c = seed_policies()[2]
    c, a = (task.render(p.render(), meetings["TS3008d"])[0] for p in (seed_c, seed_policies()[0]))
    other = task.render(seed_c.render(), meetings["ES2002a"])[0]
    llm = LlamaCppLLM(smollm2_path(), n_ctx=4096, n_threads=2, label="smollm2", batch_size=4)
    params = SamplingParams(temperature=0.0, max_tokens=96, seed=0)
    sequential = [llm.complete(m, params) for m in (c, a, other)]
    batched = llm.complete_batch([c, a, other], params)  # TS3008d twice, ES2002a alone
    assert all(_same(x, y) for x, y in zip(batched, sequential, strict=True))
    twice = llm.complete_batch([c, c], params)  # equal prompts: the shared prefix is all but
    assert all(_same(x, sequential[0]) for x in twice)  # their own MIN_TAIL tokens


@pytest.mark.slow
@needs_model
def test_no_prompt_token_is_decoded_alone_in_its_sequence_and_eight_answers_stay_sequential(
    monkeypatch,
):
    """llama.cpp rounds a token's attention differently when it is its sequence's only token
    in a ubatch (benchmarks/logit_identity.py), and cuts a batch of several KV streams into
    ubatches with as many tokens of each; so 8 prompt tails of unequal length decoded together
    left one-token pieces, and at 8 and 16 sequences some answers differed. Every prefill and
    tail decode now holds one sequence and at least two of its tokens; each step one token of
    every sequence in it."""
    from evotrainer.llm.llamacpp import LlamaCppLLM, smollm2_path
    from evotrainer.llm.llamacpp_batch import BatchDecoder

    calls: list[tuple[str, list[tuple[int, int, int, bool]]]] = []
    decode = BatchDecoder._decode

    def record(self, entries, phase):
        calls.append((phase, list(entries)))
        return decode(self, entries, phase)

    monkeypatch.setattr(BatchDecoder, "_decode", record)
    llm = LlamaCppLLM(smollm2_path(), n_ctx=2048, n_threads=2, label="smollm2", batch_size=8)
    params = SamplingParams(temperature=0.0, max_tokens=24, seed=0)
    # own instructions of 1, 2, 3 ... words after the shared transcript: tails one token apart
    words = "Write the minutes and then the action items of this meeting please"
    prompts = [_prompt(" ".join(words.split()[: 2 + k])) for k in range(8)]
    sequential = [llm.complete(m, params) for m in prompts]
    batched = llm.complete_batch(prompts, params)
    assert all(_same(a, b) for a, b in zip(batched, sequential, strict=True))
    assert {phase for phase, _ in calls} == {"prefill", "tails", "steps"}
    for phase, entries in calls:
        seqs = [s for _, _, s, _ in entries]
        if phase == "steps":
            assert len(seqs) == len(set(seqs))
        else:
            assert len(set(seqs)) == 1 and len(seqs) >= MIN_PIECE, (phase, entries)
    assert max(len(e) for phase, e in calls if phase == "steps") == 8


@pytest.mark.slow
@needs_model
def test_a_meeting_back_after_its_stream_was_reused_is_restored_not_prefilled(smollm2):
    """Three meetings of four prompts each take every KV stream in turn; the first meeting,
    back, gets its saved transcript cells copied in (PrefixStore) instead of a prefill, and
    its answers are still the sequential ones."""
    params = SamplingParams(temperature=0.0, max_tokens=16, seed=2)
    long = TRANSCRIPT * 4  # past PREFIX_SAVE_MIN tokens
    meetings = [long, long.replace("Anna", "Dora"), long.replace("Ben", "Emil")]
    prompts = [[[Message("user", f"{t}\n{i}")] for i in INSTRUCTIONS[:4]] for t in meetings]
    order = [*prompts, prompts[0]]
    sequential = [[smollm2.complete(m, params) for m in group] for group in order]
    smollm2.complete_batch(prompts[0][:2], params)  # the decoder exists
    smollm2._decoder.close()
    stats = smollm2._decoder.stats
    batched = [smollm2.complete_batch(group, params) for group in order[:3]]
    before = stats["prefix_restored_tokens"]
    batched.append(smollm2.complete_batch(order[3], params))
    # beyond the chat header the streams still share with it: the transcript came from the copy
    assert stats["prefix_restored_tokens"] - before >= 0.8 * smollm2.count_tokens(long)
    for got, want in zip(batched, sequential, strict=True):
        assert all(_same(a, b) for a, b in zip(got, want, strict=True))
