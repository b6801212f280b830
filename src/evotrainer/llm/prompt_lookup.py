"""Prompt-lookup drafts for the batched decoder (``llamacpp_batch.py``, ``draft_tokens`` > 0)."""

from __future__ import annotations

from collections.abc import Sequence


class Drafter:
    """Prompt-lookup drafts for one sequence: the tokens that followed the latest earlier
    occurrence of its last ``n`` tokens (n = NGRAM down to 2) in its prompt and answer so far.
    A small model's answers repeat themselves and the transcript (measured on the full demo's
    answers: with drafts of up to 8 tokens from the answer alone, 4.2 tokens a step), so a
    draft verified in the same decoding step often yields several tokens for one step."""

    NGRAM = 3

    def __init__(self, tokens: Sequence[int]) -> None:
        self.tokens: list[int] = []
        self._last: dict[tuple[int, ...], int] = {}  # n-gram -> where its latest copy ended
        for t in tokens:
            self.append(t)

    def append(self, token: int) -> None:
        toks, end = self.tokens, len(self.tokens)
        for n in range(2, self.NGRAM + 1):  # n-grams that now have a continuation
            if end >= n:
                self._last[tuple(toks[end - n : end])] = end
        toks.append(token)

    def draft(self, k: int) -> list[int]:
        toks = self.tokens
        for n in range(self.NGRAM, 1, -1):
            if len(toks) >= n:
                at = self._last.get(tuple(toks[-n:]))
                if at is not None:
                    return toks[at : at + k]
        return []
