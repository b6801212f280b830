"""Copies of prefilled prefixes' KV cells for the batched decoder (``llamacpp_batch.py``)."""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

# Prefixes of at least this many prefilled tokens are kept in a PrefixStore of this many bytes
# (a 1,024-token transcript of SmolLM2-135M: ~24 MB of KV cells).
PREFIX_SAVE_MIN = 256
PREFIX_STORE_BYTES = 512 << 20


class PrefixStore:
    """Copies of prefilled prefixes' KV cells (``llama_state_seq_get_data``), least recently
    used first out past ``budget`` bytes. A meeting that comes back after its KV stream was
    reused (the next racing rung, the next generation's validation) is restored with a copy of a
    few megabytes instead of a prefill of its transcript; the cells are the same bytes, so the
    answers are the same."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self._entries: OrderedDict[tuple[int, ...], Any] = OrderedDict()

    def save(self, ctx: Any, seq: int, tokens: Sequence[int]) -> None:
        # lazy: optional dependency (extra local)
        import llama_cpp

        key = tuple(tokens)
        if key in self._entries:
            self._entries.move_to_end(key)
            return
        size = int(llama_cpp.llama_state_seq_get_size(ctx.ctx, seq))
        if size <= 0 or size > self.budget:
            return
        buf = (ctypes.c_uint8 * size)()
        if int(llama_cpp.llama_state_seq_get_data(ctx.ctx, buf, size, seq)) != size:
            return
        while self._entries and self.used + size > self.budget:
            _, old = self._entries.popitem(last=False)
            self.used -= len(old)
        self._entries[key] = buf
        self.used += size

    def restore(self, ctx: Any, seq: int, prefix: Sequence[int], kept: int) -> int | None:
        """Puts into ``seq`` the saved prefix sharing the most with ``prefix``, if that is more
        than ``kept`` (what the stream holds already) by at least PREFIX_SAVE_MIN tokens;
        returns how many of its tokens ``prefix`` shares, 0 if the copy failed (``seq`` is then
        empty), None if nothing was tried (``seq`` untouched)."""
        # lazy: optional dependency (extra local)
        import llama_cpp

        best, best_n = None, kept + PREFIX_SAVE_MIN - 1
        for key in self._entries:
            n = llama_cpp.Llama.longest_token_prefix(key, prefix)
            if n > best_n:
                best, best_n = key, n
        if best is None:
            return None
        buf = self._entries[best]
        self._entries.move_to_end(best)
        llama_cpp.llama_memory_seq_rm(ctx.memory, seq, -1, -1)
        if int(llama_cpp.llama_state_seq_set_data(ctx.ctx, buf, len(buf), seq)) == 0:
            llama_cpp.llama_memory_seq_rm(ctx.memory, seq, -1, -1)
            return 0  # not restored: the caller prefills from the start
        return best_n
