"""LoRA training on CPU: ``train_adapter(pairs, settings, out_dir) -> AdapterResult``.

What happens: the pairs are tokenised with the model's chat template (``pairs.py``; pairs that
do not fit ``max_seq_len`` are left out and reported), the base model is loaded from the
shipped GGUF (``base_model.py``), peft wraps its projections with LoRA (A random from the seed,
B zero, so step 0 is the base model; or, with ``start_from``, the A and B of an earlier adapter
file: a warm start, so step 0 is that adapter), and AdamW trains the LoRA weights on the token mean
of the completions' cross-entropy, each token scaled by its pair's weight. The pair order is
shuffled per epoch from the seed; with the same seed, pairs, settings and thread count, two
trainings give the same adapter bytes. The adapter is then exported as a llama.cpp GGUF LoRA file named by its
sha256 (``export.py``).

Failures: MissingExtraError (a ConfigError) when torch/transformers/peft/gguf are missing;
DistillError when no pair fits, or the loss becomes NaN or infinite. A progress callback may
raise to abort; the exception propagates and nothing is written.
"""

from __future__ import annotations

import math
import random
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotrainer.distill import extra
from evotrainer.distill.base_model import base_gguf, cpu_threads, load_base, load_tokenizer
from evotrainer.distill.export import (
    load_lora_tensors,
    lora_modules,
    read_gguf_adapter,
    write_adapter,
)
from evotrainer.distill.pairs import IGNORE, EncodedPair, TrainingPair, encode_pairs
from evotrainer.distill.settings import LoraSettings
from evotrainer.errors import DistillError


@dataclass(frozen=True)
class TrainProgress:
    """What the console shows after each optimizer step."""

    step: int  # 1-based
    steps: int
    loss: float
    tokens_per_s: float  # tokens (prompt + completion, no padding) per second so far
    eta_s: float  # estimated seconds left
    elapsed_s: float


ProgressFn = Callable[[TrainProgress], None]


@dataclass
class TrainedLora:
    """A trained adapter still in memory (the peft model), before export."""

    model: Any  # peft.PeftModel around the float32 base model, in eval mode
    tokenizer: Any
    settings: LoraSettings
    base_path: Path
    losses: list[float]
    tokens: int  # tokens through forward + backward (no padding)
    loss_tokens: int  # of them, tokens with loss (completions and end tokens)
    seconds: float  # the training loop only (not loading)
    load_seconds: float  # tokenizer and model (their first load in the process), copying it
    threads: int
    pairs_used: int
    pairs_skipped: list[tuple[int, str]] = field(default_factory=list)
    truncated: int = 0


@dataclass(frozen=True)
class AdapterResult:
    """Plain data about one exported adapter (JSON-friendly through ``to_dict``)."""

    adapter_path: str  # <out_dir>/<sha256>.gguf, a llama.cpp LoRA adapter
    sha256: str
    losses: tuple[float, ...]  # one per optimizer step
    tokens_trained: int
    loss_tokens: int
    seconds: float  # training loop
    load_seconds: float  # loading the base model (0 when it was already in memory)
    steps: int
    threads: int
    pairs_used: int
    pairs_skipped: tuple[tuple[int, str], ...]  # (index into pairs, why)
    truncated: int  # pairs whose completion was cut to max_seq_len
    settings: dict[str, Any]
    base_model: str  # file name of the GGUF the adapter belongs to
    cpu_seconds: float = 0.0  # process CPU time of loading, training and export (all threads)
    started_from: str | None = None  # the adapter file whose weights it started from

    def to_dict(self) -> dict[str, Any]:
        return {
            "adapter_path": self.adapter_path,
            "sha256": self.sha256,
            "losses": list(self.losses),
            "tokens_trained": self.tokens_trained,
            "loss_tokens": self.loss_tokens,
            "seconds": self.seconds,
            "load_seconds": self.load_seconds,
            "steps": self.steps,
            "threads": self.threads,
            "pairs_used": self.pairs_used,
            "pairs_skipped": [list(s) for s in self.pairs_skipped],
            "truncated": self.truncated,
            "settings": dict(self.settings),
            "base_model": self.base_model,
            "cpu_seconds": self.cpu_seconds,
            "started_from": self.started_from,
        }


def total_steps(n_pairs: int, settings: LoraSettings) -> int:
    """Optimizer steps a training takes: ``settings.steps``, else epochs x batches per epoch."""
    if settings.steps is not None:
        return settings.steps
    per_epoch = math.ceil(n_pairs / settings.batch_size)
    return max(1, math.ceil(settings.epochs * per_epoch))


def _batches(encoded: list[EncodedPair], settings: LoraSettings, steps: int):
    """``steps`` lists of pairs: each epoch a fresh seeded shuffle, cut into batches (the last
    batch of an epoch may be short)."""
    rng = random.Random(settings.seed)
    made = 0
    while True:
        order = list(range(len(encoded)))
        rng.shuffle(order)
        for k in range(0, len(order), settings.batch_size):
            yield [encoded[i] for i in order[k : k + settings.batch_size]]
            made += 1
            if made == steps:
                return


def _tensors(batch: list[EncodedPair], pad_id: int):
    # lazy: optional dependency (extra distill)
    import torch

    width = max(len(p.input_ids) for p in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    weights = torch.tensor([p.weight for p in batch], dtype=torch.float32)
    for i, p in enumerate(batch):
        n = len(p.input_ids)
        ids[i, :n] = torch.tensor(p.input_ids)
        labels[i, :n] = torch.tensor(p.labels)
        mask[i, :n] = 1
    return ids, labels, mask, weights


def first_label(batch: list[EncodedPair]) -> int:
    """The first position with a label in any row (the shortest prompt)."""
    return min(p.prompt_tokens for p in batch)


def weighted_loss(logits: Any, labels: Any, weights: Any) -> Any:
    """Mean over the tokens with a label of ``weights[i]`` x next-token cross-entropy (pair i's
    tokens): a weight scales its pair's pull (0.5 pulls half as hard, also alone in a batch),
    and with all weights 1 it is the plain token mean. ``logits`` may cover only the last k positions
    (transformers' ``logits_to_keep``): the prompt needs no vocabulary projection (21% of the
    forward pass per position), which saves about a sixth of the compute at 512 tokens with a
    quarter of them completion."""
    # lazy: optional dependency (extra distill)
    import torch.nn.functional as F

    k = logits.shape[1]
    logits = logits[:, :-1, :]
    target = labels[:, labels.shape[1] - k + 1 :]
    ce = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(),
        target.reshape(-1),
        ignore_index=IGNORE,
        reduction="none",
    ).view(target.shape)
    has_label = (target != IGNORE).float()
    return (ce * has_label * weights[:, None]).sum() / has_label.sum().clamp_min(1.0)


def attach_lora(model: Any, settings: LoraSettings) -> Any:
    """Wrap ``model`` with peft LoRA per ``settings`` (A from torch's global generator, which the
    caller seeds; B zero)."""
    # lazy: optional dependency (extra distill)
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(
        r=settings.rank,
        # peft annotates lora_alpha int; it only scales by alpha / r, so a float works
        lora_alpha=settings.alpha,  # type: ignore[arg-type]
        lora_dropout=settings.dropout,
        target_modules=list(settings.target_modules),
        bias="none",
        task_type="CAUSAL_LM",
    )
    with warnings.catch_warnings():  # peft asks transformers a question it has deprecated
        warnings.filterwarnings(
            "ignore", message=".*is_gradient_checkpointing", category=FutureWarning
        )
        return get_peft_model(model, cfg)


def _progress(step: int, steps: int, loss: float, tokens: int, start: float) -> TrainProgress:
    elapsed = time.perf_counter() - start
    return TrainProgress(
        step=step,
        steps=steps,
        loss=loss,
        tokens_per_s=tokens / elapsed if elapsed > 0 else 0.0,
        eta_s=elapsed / step * (steps - step),
        elapsed_s=elapsed,
    )


def train_lora(
    pairs: Sequence[TrainingPair],
    settings: LoraSettings,
    progress: ProgressFn | None = None,
    base_path: str | Path | None = None,
    start_from: str | Path | None = None,
) -> TrainedLora:
    """Train a LoRA adapter in memory (see the module docstring); ``export.write_adapter`` or
    ``train_adapter`` write it out. ``start_from``: a GGUF LoRA adapter of the same rank whose
    A and B the training starts from instead of the fresh A and zero B (a warm start).
    Raises MissingExtraError or DistillError."""
    extra.require()
    # lazy: optional dependency (extra distill)
    import torch

    t0 = time.perf_counter()
    tok = load_tokenizer(base_path)
    encoded, skipped = encode_pairs(tok, pairs, settings.max_seq_len)
    if not encoded:
        why = "; ".join(f"#{i}: {r}" for i, r in skipped[:5]) or "no pairs given"
        raise DistillError(
            f"no training pair fits max_seq_len={settings.max_seq_len} ({len(pairs)} given; {why})"
        )
    with cpu_threads(settings.threads) as threads:
        base, tok = load_base(base_path)
        load_seconds = time.perf_counter() - t0
        torch.manual_seed(settings.seed)
        model = attach_lora(base, settings)
        if start_from is not None:
            tensors = read_gguf_adapter(start_from, base.config, lora_modules(model))
            load_lora_tensors(model, tensors)
        model.train()
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(
            params, lr=settings.learning_rate, weight_decay=settings.weight_decay
        )
        steps = total_steps(len(encoded), settings)
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        losses: list[float] = []
        tokens = loss_tokens = 0
        start = time.perf_counter()
        for step, batch in enumerate(_batches(encoded, settings, steps), 1):
            ids, labels, mask, weights = _tensors(batch, pad_id)
            # logits from the position before the first label on: predictions of labels only
            keep = ids.shape[1] - first_label(batch) + 1
            out = model(input_ids=ids, attention_mask=mask, logits_to_keep=keep)
            loss = weighted_loss(out.logits, labels, weights)
            if not torch.isfinite(loss):
                raise DistillError(f"LoRA training: loss became {loss.item()} at step {step}")
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, settings.max_grad_norm)
            opt.step()
            losses.append(float(loss.item()))
            tokens += int(mask.sum())
            loss_tokens += sum(p.completion_tokens for p in batch)
            if progress is not None:
                progress(_progress(step, steps, losses[-1], tokens, start))
        seconds = time.perf_counter() - start
        model.eval()
    return TrainedLora(
        model=model,
        tokenizer=tok,
        settings=settings,
        base_path=base_gguf(base_path),
        losses=losses,
        tokens=tokens,
        loss_tokens=loss_tokens,
        seconds=seconds,
        load_seconds=load_seconds,
        threads=threads,
        pairs_used=len(encoded),
        pairs_skipped=skipped,
        truncated=sum(p.truncated for p in encoded),
    )


def train_adapter(
    pairs: Sequence[TrainingPair],
    settings: LoraSettings,
    out_dir: str | Path,
    progress: ProgressFn | None = None,
    base_path: str | Path | None = None,
    start_from: str | Path | None = None,
) -> AdapterResult:
    """Train a LoRA adapter on ``pairs`` and write it to ``out_dir/<sha256>.gguf`` (a llama.cpp
    LoRA adapter for ``base_path``, default the embedded SmolLM2). Returns plain data about
    it. ``start_from``: the adapter file it starts from (``train_lora``). Raises
    MissingExtraError (the extra is missing) or DistillError (nothing to train on, NaN loss,
    export failed, an adapter to start from of another shape); nothing is left in ``out_dir``
    on failure."""
    cpu0 = time.process_time()
    trained = train_lora(
        pairs, settings, progress=progress, base_path=base_path, start_from=start_from
    )
    path, sha = write_adapter(trained, out_dir)
    return AdapterResult(
        adapter_path=str(path),
        sha256=sha,
        losses=tuple(trained.losses),
        tokens_trained=trained.tokens,
        loss_tokens=trained.loss_tokens,
        seconds=trained.seconds,
        load_seconds=trained.load_seconds,
        steps=len(trained.losses),
        threads=trained.threads,
        pairs_used=trained.pairs_used,
        pairs_skipped=tuple(trained.pairs_skipped),
        truncated=trained.truncated,
        settings=settings.to_dict(),
        base_model=trained.base_path.name,
        cpu_seconds=round(time.process_time() - cpu0, 1),
        started_from=Path(start_from).name if start_from is not None else None,
    )
