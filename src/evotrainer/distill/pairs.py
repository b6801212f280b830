"""Training pairs and their tokenisation.

A pair is what the agent saw (the chat messages exactly as the task renders them for the
model) and what it should have answered (the target completion), with a weight and a note of
where it came from (e.g. ``"policy p17 on ami-train/ES2002a, reward 0.81"`` or
``"human reference"``).

Tokens are laid out as the serving stack sees them: the prompt is the tokenizer's own chat
template (``apply_chat_template(messages, add_generation_prompt=True)``, SmolLM2's ChatML with
its default system line when the messages have none) tokenised as one text, then the
completion tokenised alone and the end-of-turn token ``<|im_end|>``. llama.cpp tokenises the
same template text the same way at inference and generates after it, so the model learns the
exact continuation it will be asked for. The loss covers the completion's tokens (and the end
token) only: the prompt's labels are -100.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evotrainer.types import Message

IGNORE = -100  # label of a token without loss (torch's cross_entropy ignore_index)
END_OF_TURN = "<|im_end|>"


@dataclass(frozen=True)
class TrainingPair:
    """One example: ``messages`` as the agent sees them, ``completion`` the target answer.

    Raises ValueError at construction for an empty message list, a role other than
    system/user/assistant, or a negative weight."""

    messages: tuple[Message, ...]
    completion: str
    weight: float = 1.0
    source: str = ""

    def __post_init__(self) -> None:
        msgs = tuple(
            m if isinstance(m, Message) else Message(str(m["role"]), str(m["content"]))
            for m in self.messages
        )
        object.__setattr__(self, "messages", msgs)
        if not msgs:
            raise ValueError("TrainingPair: no messages")
        roles = {m.role for m in msgs} - {"system", "user", "assistant"}
        if roles:
            raise ValueError(f"TrainingPair: unknown roles {sorted(roles)}")
        if not self.weight >= 0:
            raise ValueError(f"TrainingPair: weight must be >= 0, got {self.weight!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "completion": self.completion,
            "weight": self.weight,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TrainingPair:
        return cls(
            messages=tuple(d["messages"]),
            completion=str(d["completion"]),
            weight=float(d.get("weight", 1.0)),
            source=str(d.get("source", "")),
        )


@dataclass(frozen=True)
class EncodedPair:
    """Token ids and labels of one pair (labels are IGNORE on the prompt)."""

    input_ids: tuple[int, ...]
    labels: tuple[int, ...]
    weight: float
    source: str
    prompt_tokens: int
    completion_tokens: int  # tokens with loss (the completion as kept, plus the end token)
    truncated: bool  # the completion was cut to fit max_seq_len (no end token then)


def prompt_text(tokenizer: Any, messages: Sequence[Message]) -> str:
    """The chat template's text for ``messages`` up to the assistant's turn (what llama.cpp's
    chat completion renders from the same GGUF template)."""
    return tokenizer.apply_chat_template(
        [{"role": m.role, "content": m.content} for m in messages],
        add_generation_prompt=True,
        tokenize=False,
    )


def prompt_ids(tokenizer: Any, messages: Sequence[Message]) -> list[int]:
    return list(tokenizer(prompt_text(tokenizer, messages), add_special_tokens=False)["input_ids"])


def encode_pair(tokenizer: Any, pair: TrainingPair, max_seq_len: int) -> EncodedPair | str:
    """Tokenise one pair, or return the reason it cannot be used (a string): its weight is 0,
    or its prompt leaves no room for a completion token within ``max_seq_len``. A completion
    too long for the room left is cut at the end (``truncated``; it then has no end token)."""
    if pair.weight == 0:
        return "weight 0"
    prompt = prompt_ids(tokenizer, pair.messages)
    end = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    completion = list(tokenizer(pair.completion, add_special_tokens=False)["input_ids"]) + [end]
    room = max_seq_len - len(prompt)
    if room < 1:
        return f"prompt of {len(prompt)} tokens does not fit max_seq_len {max_seq_len}"
    truncated = len(completion) > room
    completion = completion[:room]
    return EncodedPair(
        input_ids=tuple(prompt + completion),
        labels=tuple([IGNORE] * len(prompt) + completion),
        weight=float(pair.weight),
        source=pair.source,
        prompt_tokens=len(prompt),
        completion_tokens=len(completion),
        truncated=truncated,
    )


def encode_pairs(
    tokenizer: Any, pairs: Sequence[TrainingPair], max_seq_len: int
) -> tuple[list[EncodedPair], list[tuple[int, str]]]:
    """Encode every pair; return (the usable ones, [(index, why) for those left out])."""
    kept: list[EncodedPair] = []
    skipped: list[tuple[int, str]] = []
    for i, pair in enumerate(pairs):
        enc = encode_pair(tokenizer, pair, max_seq_len)
        if isinstance(enc, str):
            skipped.append((i, enc))
        else:
            kept.append(enc)
    return kept, skipped
