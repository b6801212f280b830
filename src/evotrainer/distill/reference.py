"""Greedy answers of the training stack (transformers + peft, float32), to compare with the
serving stack (llama.cpp + the GGUF adapter over the quantised weights).

The two never agree bit for bit: llama.cpp multiplies the Q4_1 weights with activations
quantised to 8 bits, transformers with the dequantised float32 weights. tests/test_distill.py
measures how far greedy answers agree and bounds it; docs/distillation.md has the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evotrainer.distill import extra
from evotrainer.distill.base_model import cpu_threads
from evotrainer.distill.pairs import END_OF_TURN, prompt_ids
from evotrainer.types import Message


def greedy_tokens(
    model: Any,
    tokenizer: Any,
    messages: Sequence[Message],
    max_new_tokens: int,
    threads: int | None = None,
) -> list[int]:
    """Token ids the model generates greedily after the chat template of ``messages``, up to
    and without the end-of-turn token (``threads``: torch threads, default the idle cores).
    Raises MissingExtraError without the extra."""
    extra.require()
    # lazy: optional dependency (extra distill)
    import torch

    ids = torch.tensor([prompt_ids(tokenizer, messages)])
    end = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    with torch.no_grad(), cpu_threads(threads):
        out = model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            eos_token_id=end,
            pad_token_id=end,
        )
    new = out[0, ids.shape[1] :].tolist()
    return new[: new.index(end)] if end in new else new


def greedy_text(
    model: Any, tokenizer: Any, messages: Sequence[Message], max_new_tokens: int
) -> str:
    return tokenizer.decode(greedy_tokens(model, tokenizer, messages, max_new_tokens))


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens two answers share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
