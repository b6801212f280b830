"""Batched multi-sequence decoding for the embedded backend, with llama.cpp's batch API.

P prompts are answered together; those that share a prefix (one meeting's transcript: the
task puts it before the policy text) share its prefill:

1. each prompt is formatted exactly as ``Llama.create_chat_completion`` formats it: the model's
   chat handler runs up to its call of ``create_completion``, whose arguments are captured
   (prompt tokens, stop strings, stopping criteria, sampling settings);
2. consecutive prompts that share most of their tokens form a *cluster* (one meeting); a group
   may hold several clusters, so the few policies a racing rung shows to each of several
   meetings decode together (``clusters``);
3. each cluster's longest common token prefix is prefilled once, in the sequence (KV stream)
   that already holds the longest part of it (a meeting whose transcript an earlier group
   prefilled is not prefilled again), and copied to the cluster's other sequences
   (``llama_memory_seq_cp``);
4. each sequence's remaining prompt tokens are decoded (logits at its last one), in pieces of
   at most ``n_batch`` tokens and never of one token (``pieces``: see ``MIN_PIECE``);
5. then each step decodes one ``llama_batch`` with the last token of every unfinished sequence;
   each sequence has its own sampler chain, the one ``Llama.generate`` builds (greedy at
   temperature 0, the seeded chain otherwise), reading its own row of logits;
6. each answer is assembled by the rules of ``Llama._create_completion`` (EOG, stop strings,
   the multi-byte UTF-8 hold-back, max_tokens, the chat format's stopping criteria), so text,
   finish reason and token counts are those of the sequential path.

The batch runs in a second ``llama_context`` on the same weights whose KV cache is *not
unified*: every sequence has its own KV stream, laid out like the sequential path's (the prefix
in cells 0..L-1, then its own tokens), so each attention sums the same cells in the same order
and greedy answers equal the sequential ones token for token (tests/test_batched_decoding.py;
docs/efficiency.md); prompt-lookup drafts (``draft_tokens`` > 0, off by default) give up that
identity for fewer steps. A request this module cannot reproduce exactly (no seed, a grammar, logit
bias, a logits processor, a prompt that does not fit) is answered by the sequential path.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from evotrainer.llm.prefix_store import PREFIX_SAVE_MIN, PREFIX_STORE_BYTES, PrefixStore
from evotrainer.llm.prompt_lookup import Drafter

UNSUPPORTED = ("logits_processor", "grammar", "logit_bias", "logprobs")
# llama.cpp (built with llamafile, the default) multiplies a sequence's attention with tinyBLAS
# when two or more of its tokens are in one ubatch, and with ggml's vec_dot when one is: the
# two round differently (logits up to ~0.9 apart on ~30; benchmarks/logit_identity.py), while
# how the two-or-more are cut into pieces changes nothing. The sequential path prefills a prompt
# in chunks of several tokens and decodes an answer one token at a time, so the batched path
# prefills in pieces of at least MIN_PIECE tokens of a sequence and decodes one per step. With
# a KV stream per sequence llama.cpp cuts a batch of several sequences into ubatches with the
# same number of tokens of each (split_equal), so unequal prompt tails decoded together would
# leave one-token pieces (P = 8 and 16 then gave 1-4 answers of 24-48 that differed): each
# sequence's tail is decoded on its own.
MIN_PIECE = 2
# Every sequence prefills at least this many of its own prompt tokens after the shared prefix
# (at least MIN_PIECE; 5 of 36 greedy answers flipped when a prompt's last token was left alone).
MIN_TAIL = 8

Entry = tuple[int, int, int, bool]  # a llama_batch entry: token, position, sequence, logits


def pieces(start: int, end: int, size: int) -> list[tuple[int, int]]:
    """[start, end) cut into pieces of at most ``size`` tokens, none of one token unless the
    whole range is one (the last piece borrows a token from the one before it)."""
    cuts = [(a, min(end, a + size)) for a in range(start, end, size)]
    if len(cuts) > 1 and cuts[-1][1] - cuts[-1][0] < MIN_PIECE:
        (a, b), (_, d) = cuts[-2], cuts[-1]
        cuts[-2:] = [(a, b - 1), (b - 1, d)]
    return cuts


class _Captured(Exception):
    def __init__(self, kwargs: dict[str, Any]) -> None:
        super().__init__("captured")
        self.kwargs = kwargs


def capture_completion_args(llm: Any, chat_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments ``llm.create_chat_completion(**chat_kwargs)`` passes to
    ``llm.create_completion`` (nothing is decoded)."""

    def capture(**kwargs: Any) -> Any:
        raise _Captured(kwargs)

    llm.create_completion = capture  # an instance attribute shadows the method
    try:
        llm.create_chat_completion(**chat_kwargs)
    except _Captured as got:
        return got.kwargs
    finally:
        del llm.create_completion
    raise RuntimeError("the chat handler did not call create_completion")


@dataclass
class Prepared:
    """One request, ready for batched decoding (what ``_create_completion`` computes first)."""

    tokens: list[int]
    max_tokens: int
    stop: list[bytes]
    seed: int
    sampler: dict[str, Any]
    stopping_criteria: Any = None


def prepare(llm: Any, args: dict[str, Any]) -> Prepared | str:
    """``Prepared`` for captured ``create_completion`` arguments, or the reason the batched
    path cannot reproduce the request exactly (then it goes the sequential way)."""
    prompt = args.get("prompt")
    if not isinstance(prompt, list) or args.get("suffix") is not None:
        return "prompt is not a token list"
    for name in UNSUPPORTED:
        if args.get(name):
            return f"{name} is set"
    if args.get("stream") or args.get("seed") is None or getattr(llm, "draft_model", None):
        return "stream, draft model or no seed"
    n_ctx = llm._n_ctx
    if len(prompt) >= n_ctx:
        return "prompt does not fit the context"  # the sequential path raises the error
    max_tokens = args.get("max_tokens")
    if max_tokens is None or max_tokens <= 0:
        max_tokens = n_ctx - len(prompt)
    if max_tokens + len(prompt) >= n_ctx:
        max_tokens = n_ctx - len(prompt)
    stop = args.get("stop") or []
    stop = stop if isinstance(stop, list) else [stop]
    sampler: dict[str, Any] = {
        k: args[k]
        for k in (
            "top_k",
            "top_p",
            "min_p",
            "typical_p",
            "repeat_penalty",
            "frequency_penalty",
            "presence_penalty",
            "tfs_z",
            "mirostat_mode",
            "mirostat_tau",
            "mirostat_eta",
        )
        if k in args
    }
    sampler["temp"] = args.get("temperature", 0.8)
    return Prepared(
        tokens=list(prompt),
        max_tokens=int(max_tokens),
        stop=[s.encode("utf-8") for s in stop],
        seed=int(args["seed"]),
        sampler=sampler,
        stopping_criteria=args.get("stopping_criteria"),
    )


@dataclass
class Answer:
    """One sequence's answer, assembled token by token like ``Llama._create_completion``."""

    prompt: list[int]
    max_tokens: int
    stop: list[bytes]
    criteria: Any
    detokenize: Callable[..., bytes]
    is_eog: Callable[[int], bool]
    n_vocab: int
    completion: list[int] = field(default_factory=list)
    text: bytes = b""
    finish: str = "length"
    done: bool = False
    multibyte_fix: int = 0

    def stopped_by_criteria(self) -> bool:
        """The chat format's stopping criteria, checked where ``Llama.generate`` checks them:
        after a token is sampled, on the tokens evaluated so far."""
        if self.criteria is None:
            return False
        evaluated = np.asarray(self.prompt + self.completion, dtype=np.intc)
        if self.criteria(evaluated, np.zeros(self.n_vocab, dtype=np.single)):
            self.text = self.detokenize(self.completion, prev_tokens=self.prompt)
            self.finish, self.done = "stop", True
        return self.done

    def feed(self, token: int) -> None:
        if self.is_eog(token):
            self.text = self.detokenize(self.completion, prev_tokens=self.prompt)
            self.finish, self.done = "stop", True
            return
        self.completion.append(token)
        all_text = self.detokenize(self.completion, prev_tokens=self.prompt)
        for k, char in enumerate(all_text[-3:]):  # Llama._create_completion's multi-byte check
            k = 3 - k
            for num, pattern in [(2, 192), (3, 224), (4, 240)]:
                if num > k and pattern & char == pattern:
                    self.multibyte_fix = num - k
        if self.multibyte_fix > 0:
            self.multibyte_fix -= 1
            return
        any_stop = [s for s in self.stop if s in all_text]
        if any_stop:
            self.text = all_text[: all_text.index(any_stop[0])]
            self.finish, self.done = "stop", True
            return
        if len(self.completion) >= self.max_tokens:
            self.text = self.detokenize(self.completion, prev_tokens=self.prompt)
            self.finish, self.done = "length", True


def common_prefix(prompts: Sequence[Sequence[int]]) -> int:
    """Length of the longest common token prefix, leaving every prompt at least one token."""
    n = min(len(p) for p in prompts) - 1
    first = prompts[0]
    for i in range(max(0, n)):
        if any(p[i] != first[i] for p in prompts[1:]):
            return i
    return max(0, n)


def clusters(prompts: Sequence[Sequence[int]], share: float = 0.5) -> list[list[int]]:
    """Consecutive prompts grouped by meeting: a prompt joins the previous one's cluster when
    their common prefix is at least ``share`` of the shorter (prompts of one meeting share the
    transcript, most of their tokens; two meetings share only the chat header). A wrong split
    costs a prefill, never a different answer. Returns the clusters' prompt indices."""
    out: list[list[int]] = []
    for i, p in enumerate(prompts):
        if out:
            q = prompts[i - 1]
            if common_prefix([q, p]) >= share * min(len(q), len(p)):
                out[-1].append(i)
                continue
        out.append([i])
    return out


class DecoderStats(TypedDict):
    """``BatchDecoder.stats``: counters over the decoder's groups."""

    groups: int
    sequences: int
    clusters: int
    prefix_tokens: int
    prefix_reused_tokens: int
    prefix_restored_tokens: int
    decode_calls: int
    seconds: dict[str, float]
    tokens: dict[str, int]
    step_rows: dict[int, int]
    drafted: int
    accepted: int


class BatchDecoder:
    """Decodes groups of prepared requests in its own non-unified llama_context (made on first
    use, and again larger when a group needs longer sequences)."""

    def __init__(self, llm: Any, max_sequences: int, draft_tokens: int = 0) -> None:
        self.llm = llm
        self.max_sequences = max(1, max_sequences)
        self.draft_tokens = max(0, draft_tokens)
        self.n_batch = int(llm.n_batch)
        self._ctx: Any = None
        self._batch: Any = None
        self.seq_ctx = 0
        # per sequence: tokens its KV stream holds at positions 0.. (kept between groups)
        self._cells: list[list[int]] = [[] for _ in range(self.max_sequences)]
        self._last_use = [0] * self.max_sequences  # group number; 0: never used
        self.stats: DecoderStats = {
            "groups": 0,
            "sequences": 0,
            "clusters": 0,
            "prefix_tokens": 0,
            "prefix_reused_tokens": 0,
            "prefix_restored_tokens": 0,
            "decode_calls": 0,
            # wall seconds by phase: transcript prefill, PrefixStore restore and save, each
            # sequence's own prompt tokens (tails), decoding steps, sampling and assembling
            "seconds": dict.fromkeys(("prefill", "store", "tails", "steps", "sampling"), 0.0),
            "tokens": dict.fromkeys(("prefill", "tails", "steps"), 0),  # decoded, by phase
            "step_rows": {},  # rows per decoding step -> steps
            "drafted": 0,  # draft tokens decoded (``draft_tokens`` > 0)
            "accepted": 0,  # of them, those the model's own choice confirmed
        }
        self.store = PrefixStore(PREFIX_STORE_BYTES)

    def _context(self, seq_ctx: int) -> None:
        # lazy: optional dependency (extra local)
        import llama_cpp
        from llama_cpp import _internals as internals

        if self._ctx is not None and self.seq_ctx >= seq_ctx:
            return
        self.close()
        seq_ctx = -(-seq_ctx // 256) * 256
        src = self.llm.context_params
        params = llama_cpp.llama_context_params.from_buffer_copy(src)
        params.n_seq_max = self.max_sequences
        params.n_ctx = seq_ctx * self.max_sequences
        params.kv_unified = False  # a KV stream per sequence: the sequential path's layout
        # a step decodes a few tokens: as many threads as one-token decoding (model.n_threads or
        # the idle cores), not llama-cpp-python's default for batches (every core)
        params.n_threads_batch = params.n_threads
        self._ctx = internals.LlamaContext(model=self.llm._model, params=params, verbose=False)
        adapter = getattr(self.llm, "_lora_adapter", None)
        if adapter is not None:  # the sequential context's LoRA adapter, on this context too
            adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(adapter)
            scales = (ctypes.c_float * 1)(self.llm.lora_scale)
            if llama_cpp.llama_set_adapters_lora(self._ctx.ctx, adapters, 1, scales):
                self.close()
                raise RuntimeError("could not set the LoRA adapter on the batch context")
        n_tokens = max(self.n_batch, self.max_sequences * (1 + self.draft_tokens))
        self._batch = internals.LlamaBatch(n_tokens=n_tokens, embd=0, n_seq_max=1, verbose=False)
        self.seq_ctx = seq_ctx

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()
        if self._ctx is not None:
            self._ctx.close()
        self._ctx = self._batch = None
        self.seq_ctx = 0
        self._cells = [[] for _ in range(self.max_sequences)]
        self._last_use = [0] * self.max_sequences
        self.store = PrefixStore(PREFIX_STORE_BYTES)  # KV data belongs to this context's layout

    # -- one llama_batch ---------------------------------------------------------------------
    def _decode(self, entries: list[Entry], phase: str) -> None:
        """entries: (token, position, sequence, wants logits)."""
        start = time.perf_counter()
        b = self._batch.batch
        b.n_tokens = len(entries)
        for i, (token, pos, seq, logits) in enumerate(entries):
            b.token[i] = token
            b.pos[i] = pos
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = logits
        self._ctx.decode(self._batch)
        self.stats["decode_calls"] += 1
        self.stats["seconds"][phase] += time.perf_counter() - start
        self.stats["tokens"][phase] += len(entries)

    def run(self, requests: Sequence[Prepared]) -> list[tuple[Answer, int]]:
        """Answers (and prompt lengths) for at most ``max_sequences`` requests."""
        # lazy: optional dependency (extra local)
        import llama_cpp

        llm = self.llm
        n = len(requests)
        assert 0 < n <= self.max_sequences
        self._context(max(len(r.tokens) + r.max_tokens + 8 for r in requests))
        vocab = llm._model.vocab
        answers = [
            Answer(
                prompt=r.tokens,
                max_tokens=r.max_tokens,
                stop=r.stop,
                criteria=r.stopping_criteria,
                detokenize=llm.detokenize,
                is_eog=lambda t: bool(llama_cpp.llama_vocab_is_eog(vocab, t)),
                n_vocab=llm._n_vocab,
            )
            for r in requests
        ]
        samplers = []
        for r in requests:  # the chain Llama.generate builds, seeded as _create_completion does
            llm.set_seed(r.seed)
            samplers.append(llm._init_sampler(**r.sampler))
        try:
            self._generate(requests, answers, samplers)
        finally:
            for s in samplers:
                s.close()
        self.stats["groups"] += 1
        self.stats["sequences"] += n
        return [(a, len(r.tokens)) for a, r in zip(answers, requests, strict=True)]

    def _place(self, prefixes: list[list[int]], sizes: list[int]) -> list[list[int]]:
        """Sequences for each cluster (its shared prefix and its number of prompts), the first
        of each its root: the free sequence whose KV stream holds the longest part of the prefix
        (the rule the sequential path reuses its prefix by). The root keeps that part, the rest
        of the prefix is prefilled into it and copied to the cluster's other sequences. So a
        meeting is prefilled once across groups while its stream survives, as the sequential
        path's prefix reuse does (the kept cells are the same prefill's: the same values)."""
        # lazy: optional dependency (extra local)
        import llama_cpp

        # least recently used first: a tie (nothing worth keeping) or a copy overwrites the
        # stream the longest unused, so a meeting a later group needs again is likelier kept
        free = sorted(range(self.max_sequences), key=lambda s: (self._last_use[s], s))
        roots: list[tuple[int, int]] = []  # (root, kept)
        for prefix in prefixes:
            kept, root = max(
                ((llama_cpp.Llama.longest_token_prefix(self._cells[s], prefix), s) for s in free),
                key=lambda x: x[0],  # the first (least recently used) of the longest
            )
            roots.append((root, kept))
            free.remove(root)
        mem = self._ctx.memory
        seqs = []
        for (root, kept), prefix, size in zip(roots, prefixes, sizes, strict=True):
            self._cells[root] = []  # until the prefix is in place: a failed decode leaves nothing
            start = time.perf_counter()
            restored = self.store.restore(self._ctx, root, prefix, kept)
            self.stats["seconds"]["store"] += time.perf_counter() - start
            if restored is not None:  # a saved copy put in (or, if that failed, an empty stream)
                self.stats["prefix_restored_tokens"] += max(0, restored - kept)
                kept = restored
            if len(prefix) - kept == 1:  # not one token alone (MIN_PIECE)
                kept -= 1
            llama_cpp.llama_memory_seq_rm(mem, root, kept, -1)
            self.stats["prefix_reused_tokens"] += kept
            for a, b in pieces(kept, len(prefix), self.n_batch):  # the rest, as the root
                self._decode([(prefix[i], i, root, False) for i in range(a, b)], "prefill")
            self._cells[root] = list(prefix)
            if len(prefix) - kept >= PREFIX_SAVE_MIN:  # a transcript prefilled: keep a copy
                start = time.perf_counter()
                self.store.save(self._ctx, root, prefix)
                self.stats["seconds"]["store"] += time.perf_counter() - start
            members = [free.pop(0) for _ in range(size - 1)]
            for s in members:
                llama_cpp.llama_memory_seq_rm(mem, s, -1, -1)
                self._cells[s] = []
                if prefix:
                    self._ctx.kv_cache_seq_cp(root, s, -1, -1)
                    self._cells[s] = list(prefix)
            seqs.append([root, *members])
        for s in (s for group in seqs for s in group):
            self._last_use[s] = self.stats["groups"] + 1
        return seqs

    def _generate(
        self, requests: Sequence[Prepared], answers: list[Answer], samplers: Sequence[Any]
    ) -> None:
        prompts = [r.tokens for r in requests]
        seq_of, start_of = self._lay_out(prompts)  # request -> its sequence, its own tokens' start
        answer_of = {s: answers[i] for i, s in seq_of.items()}
        sampler_of = {s: samplers[i] for i, s in seq_of.items()}
        nxt = self._prefill_tails(prompts, seq_of, start_of, samplers)  # sequence -> next token
        pos = {seq_of[i]: len(p) for i, p in enumerate(prompts)}
        # prompt-lookup drafts, verified in the same step: a draft token is kept only where the
        # sampler, reading the row of the token before it, chose that very token, and the
        # sampler is called once per kept token as without drafts. The logits are not the
        # sequential path's: llama.cpp rounds a token differently when tokens before it in its
        # sequence are in the same step, so answers with drafts differ (docs/efficiency.md)
        drafters = (
            {seq_of[i]: Drafter(p) for i, p in enumerate(prompts)} if self.draft_tokens else {}
        )
        seconds, rows = self.stats["seconds"], self.stats["step_rows"]
        while nxt:
            start = time.perf_counter()
            step, drafts = self._step_entries(nxt, pos, answer_of, drafters)
            nxt = {}
            seconds["sampling"] += time.perf_counter() - start
            if step:
                self._decode(step, "steps")
                rows[len(step)] = rows.get(len(step), 0) + 1
                start = time.perf_counter()
                for s, (row, d) in drafts.items():
                    token = self._verify(s, row, d, answer_of[s], sampler_of[s], drafters, pos)
                    if not answer_of[s].done:
                        nxt[s] = token
                seconds["sampling"] += time.perf_counter() - start

    def _lay_out(self, prompts: list[list[int]]) -> tuple[dict[int, int], dict[int, int]]:
        """Each request's sequence and where its own tokens start: the prompts clustered by
        meeting, each cluster's shared prefix placed and prefilled (``_place``)."""
        groups = clusters(prompts)
        lcps = [  # each cluster's shared prefix, leaving every prompt MIN_TAIL own tokens
            max(
                0,
                min(
                    common_prefix([prompts[i] for i in g]), *(len(prompts[i]) - MIN_TAIL for i in g)
                ),
            )
            for g in groups
        ]
        self.stats["clusters"] += len(groups)
        self.stats["prefix_tokens"] += sum(lcps)
        placed = self._place(
            [list(prompts[g[0]][:n]) for g, n in zip(groups, lcps, strict=True)],
            [len(g) for g in groups],
        )
        seq_of: dict[int, int] = {}  # request -> its sequence
        start_of: dict[int, int] = {}  # request -> where its own tokens start
        for g, n, seqs in zip(groups, lcps, placed, strict=True):
            for i, s in zip(g, seqs, strict=True):
                seq_of[i], start_of[i] = s, n
        return seq_of, start_of

    def _prefill_tails(
        self,
        prompts: list[list[int]],
        seq_of: dict[int, int],
        start_of: dict[int, int],
        samplers: Sequence[Any],
    ) -> dict[int, int]:
        """Every sequence's own prompt tokens, a sequence at a time (MIN_PIECE), logits at its
        last one; returns each sequence's first sampled token."""
        nxt: dict[int, int] = {}  # sequence -> its next token
        for i, p in enumerate(prompts):
            s, cuts = seq_of[i], pieces(start_of[i], len(p), self.n_batch)
            for lo, hi in cuts:
                self._decode([(p[k], k, s, k == len(p) - 1) for k in range(lo, hi)], "tails")
            nxt[s] = samplers[i].sample(self._ctx, len(p) - 1 - cuts[-1][0])  # the last piece
        return nxt

    def _step_entries(
        self,
        nxt: dict[int, int],
        pos: dict[int, int],
        answer_of: dict[int, Answer],
        drafters: dict[int, Drafter],
    ) -> tuple[list[Entry], dict[int, tuple[int, list[int]]]]:
        """One decoding step: each sequence's next token fed to its answer and, if that goes
        on, put in the step (with its draft after it); advances ``pos``. Returns the step's
        entries and, by sequence, (the row of its next token, its draft)."""
        step: list[Entry] = []
        drafts: dict[int, tuple[int, list[int]]] = {}  # sequence -> (its row, its draft)
        for s in sorted(nxt):
            a = answer_of[s]
            if a.stopped_by_criteria():
                continue
            a.feed(nxt[s])
            if not a.done and pos[s] < self.seq_ctx:
                row, d = len(step), []
                step.append((nxt[s], pos[s], s, True))
                pos[s] += 1
                if s in drafters:
                    drafters[s].append(nxt[s])
                    room = min(
                        self.draft_tokens,
                        a.max_tokens - len(a.completion) - 1,
                        self.seq_ctx - pos[s],
                    )
                    d = drafters[s].draft(room) if room > 0 else []
                    step.extend((t, pos[s] + j, s, True) for j, t in enumerate(d))
                drafts[s] = (row, d)
            elif not a.done:  # out of room (cannot happen within max_tokens)
                a.text = a.detokenize(a.completion, prev_tokens=a.prompt)
                a.done = True
        return step, drafts

    def _verify(
        self,
        s: int,
        row: int,
        d: list[int],
        a: Answer,
        sampler: Any,
        drafters: dict[int, Drafter],
        pos: dict[int, int],
    ) -> int:
        """Samples sequence ``s``'s token at ``row`` and keeps the draft ``d`` (its rows after
        ``row``) as far as the sampler confirms it; returns the token sampled last."""
        # lazy: optional dependency (extra local)
        import llama_cpp

        token = sampler.sample(self._ctx, row)
        kept = 0
        while kept < len(d) and token == d[kept]:
            # the draft token is what the sampler chose: take it as the next
            # round would (criteria, then feed); its row holds the following logits
            if a.stopped_by_criteria():
                break
            a.feed(token)
            drafters[s].append(token)
            pos[s] += 1
            kept += 1
            if a.done:
                break
            token = sampler.sample(self._ctx, row + kept)
        self.stats["drafted"] += len(d)
        self.stats["accepted"] += kept
        if kept < len(d):  # the rejected draft's cells leave the KV stream
            llama_cpp.llama_memory_seq_rm(self._ctx.memory, s, pos[s], -1)
        return token
