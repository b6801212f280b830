"""The policy's decoding genes: how its model samples an answer (SPEC: "adjusting parameters" is
one of the mutations). They are part of the policy's id, the ``decoding`` operator mutates them
(operators/decoding.py), checkpoints and resume keep them, and every backend honours them: the
embedded one (one at a time and batched: the same answers), and an OpenAI-compatible server
(``frequency_penalty`` and ``presence_penalty`` are OpenAI fields; ``repeat_penalty`` is sent as
``repeat_penalty`` for llama.cpp's server and ``repetition_penalty`` for vLLM and SGLang, only
when it is not 1.0).

- ``repeat_penalty``: llama.cpp's repetition penalty over the last 64 tokens (1.0 = off);
- ``frequency_penalty`` / ``presence_penalty``: OpenAI's penalties (0 = off);
- ``max_tokens``: the longest answer (None: ``model.max_tokens``);
- ``stop``: strings that end the answer.

DRY ("don't repeat yourself") sampling is not among them: llama-cpp-python 0.3.x has no
high-level parameter for it, and adding it to its sampler chain means rebuilding that chain
on both decoding paths (docs/readability.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# gene -> (lowest, highest): what the operator and a config may set
BOUNDS: dict[str, tuple[float, float]] = {
    "repeat_penalty": (1.0, 1.5),
    "frequency_penalty": (0.0, 1.5),
    "presence_penalty": (0.0, 1.5),
    "max_tokens": (16, 4096),
}
NUMERIC = ("repeat_penalty", "frequency_penalty", "presence_penalty")
MAX_STOPS = 4


@dataclass(frozen=True)
class DecodingGenes:
    """See the module docstring; the defaults change nothing in a request."""

    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    max_tokens: int | None = None
    stop: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for name in NUMERIC:
            lo, hi = BOUNDS[name]
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise ValueError(f"decoding.{name} must be in [{lo}, {hi}], got {value}")
            object.__setattr__(self, name, round(float(value), 4))
        if self.max_tokens is not None:
            lo, hi = BOUNDS["max_tokens"]
            if not lo <= self.max_tokens <= hi:
                raise ValueError(
                    f"decoding.max_tokens must be in [{lo}, {hi}], got {self.max_tokens}"
                )
        stop = tuple(self.stop)
        if len(stop) > MAX_STOPS or any(not isinstance(s, str) or not s for s in stop):
            raise ValueError(
                f"decoding.stop is at most {MAX_STOPS} non-empty strings, got {stop!r}"
            )
        object.__setattr__(self, "stop", stop)

    @property
    def is_default(self) -> bool:
        return self == DecodingGenes()

    def overrides(self) -> dict[str, Any]:
        """The sampling fields these genes set (``dataclasses.replace`` on SamplingParams)."""
        out: dict[str, Any] = {
            "repeat_penalty": self.repeat_penalty,
            "frequency_penalty": self.frequency_penalty,
            "presence_penalty": self.presence_penalty,
        }
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.stop:
            out["stop"] = self.stop
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in NUMERIC}
        out["max_tokens"] = self.max_tokens
        out["stop"] = list(self.stop)
        return out

    @classmethod
    def from_json(cls, data: Any, where: str = "decoding") -> DecodingGenes:
        """Validated genes from JSON; ValueError naming the field on a wrong type or value."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where} must be an object, got {type(data).__name__}")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown}")
        kw: dict[str, Any] = {}
        for name in NUMERIC:
            if name in data:
                v = data[name]
                if isinstance(v, bool) or not isinstance(v, int | float):
                    raise ValueError(f"{where}.{name} must be a number, got {v!r}")
                kw[name] = float(v)
        if data.get("max_tokens") is not None:
            v = data["max_tokens"]
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{where}.max_tokens must be an integer or null, got {v!r}")
            kw["max_tokens"] = v
        if "stop" in data:
            v = data["stop"]
            if not isinstance(v, list | tuple) or not all(isinstance(s, str) for s in v):
                raise ValueError(f"{where}.stop must be a list of strings, got {v!r}")
            kw["stop"] = tuple(v)
        try:
            return cls(**kw)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from exc
