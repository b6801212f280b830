"""The knobs of one LoRA training run, as a small frozen dataclass (plain data: it goes into
lineage and checkpoints as ``asdict``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# every linear projection of a Llama block (what peft calls them in transformers' Llama)
ALL_PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class LoraSettings:
    """One training's settings. ``steps`` (optimizer steps) wins over ``epochs`` when set.

    Raises ValueError at construction when a value is out of range, naming the field."""

    rank: int = 8
    alpha: float = 16.0
    dropout: float = 0.0
    target_modules: tuple[str, ...] = field(default=ALL_PROJECTIONS)
    learning_rate: float = 2e-4
    steps: int | None = None
    epochs: float = 1.0
    max_seq_len: int = 512
    batch_size: int = 1
    seed: int = 0
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    threads: int | None = None  # torch CPU threads; None = the cores not already busy

    def __post_init__(self) -> None:
        checks = {
            "rank": self.rank >= 1,
            "alpha": self.alpha > 0,
            "dropout": 0.0 <= self.dropout < 1.0,
            "target_modules": bool(self.target_modules)
            and set(self.target_modules) <= set(ALL_PROJECTIONS),
            "learning_rate": self.learning_rate > 0,
            "steps": self.steps is None or self.steps >= 1,
            "epochs": self.epochs > 0,
            "max_seq_len": self.max_seq_len >= 16,
            "batch_size": self.batch_size >= 1,
            "weight_decay": self.weight_decay >= 0,
            "max_grad_norm": self.max_grad_norm > 0,
            "threads": self.threads is None or self.threads >= 1,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ValueError(
                f"LoraSettings: invalid {', '.join(f'{k}={getattr(self, k)!r}' for k in bad)}"
                f" (target_modules must be among {', '.join(ALL_PROJECTIONS)})"
            )
        object.__setattr__(self, "target_modules", tuple(self.target_modules))

    @property
    def scale(self) -> float:
        """The factor on B @ A in both stacks (peft's lora_alpha / r; llama.cpp's alpha / rank)."""
        return self.alpha / self.rank

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["target_modules"] = list(self.target_modules)
        return d
