"""Export a trained LoRA as a llama.cpp GGUF adapter (what llama.cpp's
``convert_lora_to_gguf.py`` writes for a peft adapter of a Llama model), named by its sha256.

The file holds ``general.type = adapter``, ``general.architecture`` of the base model,
``adapter.type = lora``, ``adapter.lora.alpha``, and per adapted projection two float32 tensors
``<base tensor>.lora_a`` (numpy shape [rank, n_in], ggml ne [n_in, rank]) and
``<base tensor>.lora_b`` ([n_out, rank], ne [rank, n_out]), base tensor names as in the GGUF
(``blk.N.attn_q.weight`` ...). llama.cpp adds ``alpha / rank * B @ A @ x``, peft's own scale.

transformers undoes llama.cpp's rotary permutation of the Q and K weights when it loads a GGUF,
so the peft model's q_proj / k_proj are in Hugging Face's row order; the converter permutes
them back, and so do we: the rows of B (the output side) of attn_q and attn_k, A unchanged.

``read_gguf_adapter`` is the inverse, for a warm start (``distill_warm_start``): the tensors of
an adapter file by Hugging Face module name, B's rows of attn_q and attn_k put back in Hugging
Face's order, so ``load_lora_tensors`` can set them into a peft model of the same rank.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from evotrainer.distill import extra
from evotrainer.errors import DistillError
from evotrainer.llm.adapter_file import adapter_file_name, sha256_file

_KEY = re.compile(r"^(?:base_model\.model\.)?(.+)\.lora_([AB])(?:\.default)?\.weight$")


def lora_tensors(peft_model: Any) -> dict[str, tuple[Any, Any]]:
    """{Hugging Face module name (``model.layers.0.self_attn.q_proj``): (A, B)} as float32
    numpy arrays, from the peft model's adapter state. Raises DistillError when a module has
    only one of A and B."""
    # lazy: optional dependency (extra distill)
    from peft import get_peft_model_state_dict

    parts: dict[str, dict[str, Any]] = {}
    for key, value in get_peft_model_state_dict(peft_model, save_embedding_layers=False).items():
        m = _KEY.match(key)
        if m is None:
            raise DistillError(f"unexpected tensor {key!r} in the LoRA state (not lora_A/B)")
        parts.setdefault(m.group(1), {})[m.group(2)] = value.detach().float().cpu().numpy()
    out = {}
    for name, ab in parts.items():
        if set(ab) != {"A", "B"}:
            raise DistillError(f"LoRA module {name} lacks lora_{'B' if 'A' in ab else 'A'}")
        out[name] = (ab["A"], ab["B"])
    return out


def _rope_permute(w: Any, n_head: int) -> Any:
    """llama.cpp's ``LlamaModel.permute`` on the output rows of ``w``."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


class _LlamaNames:
    """A Llama ``config``'s GGUF tensor names and the heads of the rotary permutation, shared
    by the export and the read-back. Raises DistillError for another architecture."""

    def __init__(self, config: Any) -> None:
        # lazy: optional dependency (extra distill)
        import gguf

        if getattr(config, "model_type", None) != "llama":
            raise DistillError(
                f"GGUF LoRA adapters know Llama models only, not "
                f"{getattr(config, 'model_type', '?')}"
            )
        self.names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, int(config.num_hidden_layers))
        self.n_head = int(config.num_attention_heads)
        self.n_kv = int(getattr(config, "num_key_value_heads", None) or self.n_head)

    def base(self, hf_name: str) -> str | None:
        """``model.layers.0.self_attn.q_proj`` -> ``blk.0.attn_q.weight`` (None: no such tensor)."""
        return self.names.get_name(hf_name + ".weight", try_suffixes=(".weight",))

    def rope_heads(self, hf_name: str) -> int | None:
        """The heads B's rows are permuted by (q and k projections), else None."""
        if hf_name.endswith("self_attn.q_proj"):
            return self.n_head
        if hf_name.endswith("self_attn.k_proj"):
            return self.n_kv
        return None


def gguf_tensors(tensors: dict[str, tuple[Any, Any]], config: Any) -> list[tuple[str, Any]]:
    """The (name, array) list to write, in a fixed order, for a Llama ``config`` (transformers'
    LlamaConfig: num_hidden_layers, num_attention_heads, num_key_value_heads). Raises
    DistillError for another architecture or a module with no GGUF name."""
    llama = _LlamaNames(config)
    out = []
    for hf_name in sorted(tensors, key=_natural):
        a, b = tensors[hf_name]
        base = llama.base(hf_name)
        if base is None:
            raise DistillError(f"LoRA module {hf_name} has no tensor in the GGUF model")
        heads = llama.rope_heads(hf_name)
        if heads is not None:
            b = _rope_permute(b, heads)
        out.append((f"{base}.lora_a", np.ascontiguousarray(a, dtype=np.float32)))
        out.append((f"{base}.lora_b", np.ascontiguousarray(b, dtype=np.float32)))
    return out


def _rope_unpermute(w: Any, n_head: int) -> Any:
    """The inverse of ``_rope_permute``."""
    return (
        w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def lora_modules(peft_model: Any) -> dict[str, Any]:
    """{Hugging Face module name: module} of the modules peft gave a LoRA."""
    return {
        name.removeprefix("base_model.model."): m
        for name, m in peft_model.named_modules()
        if hasattr(m, "lora_A") and "default" in getattr(m, "lora_A", {})
    }


def read_gguf_adapter(
    path: str | Path, config: Any, modules: Iterable[str]
) -> dict[str, tuple[Any, Any]]:
    """{Hugging Face module name: (A, B)} of a GGUF LoRA adapter written by
    ``write_gguf_adapter`` for a Llama ``config``, ``modules`` the model's LoRA modules
    (``lora_modules``). Raises DistillError when the file cannot be read or a tensor is not
    a LoRA tensor of one of ``modules``."""
    extra.require("reading a LoRA adapter")
    # lazy: optional dependency (extra distill)
    import gguf

    llama = _LlamaNames(config)
    by_base = {base: m for m in modules if (base := llama.base(m)) is not None}
    try:
        reader = gguf.GGUFReader(str(path))
    except (OSError, ValueError) as exc:
        raise DistillError(f"cannot read the LoRA adapter {path}: {exc}") from exc
    parts: dict[str, dict[str, Any]] = {}
    for t in reader.tensors:
        base, _, side = t.name.rpartition(".lora_")
        hf = by_base.get(base)
        if side not in ("a", "b") or hf is None:
            raise DistillError(f"{path}: tensor {t.name!r} is not a LoRA tensor of this model")
        parts.setdefault(hf, {})[side] = np.array(t.data, dtype=np.float32)
    out = {}
    for hf, ab in parts.items():
        if set(ab) != {"a", "b"}:
            raise DistillError(f"{path}: LoRA module {hf} lacks one of lora_a, lora_b")
        heads = llama.rope_heads(hf)
        out[hf] = (ab["a"], ab["b"] if heads is None else _rope_unpermute(ab["b"], heads))
    return out


def load_lora_tensors(peft_model: Any, tensors: dict[str, tuple[Any, Any]]) -> int:
    """Set the LoRA A and B of ``peft_model``'s modules from ``tensors`` (``lora_tensors``'s
    form); returns how many modules were set. Raises DistillError when a module is missing
    from the model or its shape differs (another rank)."""
    # lazy: optional dependency (extra distill)
    import torch

    modules = lora_modules(peft_model)
    with torch.no_grad():
        for name, (a, b) in tensors.items():
            m = modules.get(name)
            if m is None:
                raise DistillError(f"the model has no LoRA module {name} to start from")
            wa, wb = m.lora_A["default"].weight, m.lora_B["default"].weight
            if tuple(wa.shape) != a.shape or tuple(wb.shape) != b.shape:
                raise DistillError(
                    f"LoRA module {name}: the adapter's shapes {a.shape}, {b.shape} differ from "
                    f"the model's {tuple(wa.shape)}, {tuple(wb.shape)} (another rank?)"
                )
            wa.copy_(torch.from_numpy(a))
            wb.copy_(torch.from_numpy(b))
    return len(tensors)


def _natural(name: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def write_gguf_adapter(
    tensors: dict[str, tuple[Any, Any]],
    alpha: float,
    config: Any,
    out_dir: str | Path,
    arch: str = "llama",
    metadata: dict[str, str] | None = None,
) -> tuple[Path, str]:
    """Write the adapter to ``out_dir/<sha256>.gguf`` (atomic rename of a temporary file) and
    return (path, sha256). The same tensors give the same bytes. Raises DistillError when the
    file cannot be written."""
    extra.require("exporting a LoRA adapter")
    # lazy: optional dependency (extra distill)
    import gguf

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".lora-{os.getpid()}.gguf.part"
    try:
        w = gguf.GGUFWriter(str(tmp), arch)
        w.add_type(gguf.GGUFType.ADAPTER)
        w.add_string(gguf.Keys.Adapter.TYPE, "lora")
        w.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(alpha))
        for key, value in sorted((metadata or {}).items()):
            w.add_string(f"evotrainer.{key}", str(value))
        for name, arr in gguf_tensors(tensors, config):
            w.add_tensor(name, arr)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        sha = sha256_file(tmp)
        path = out_dir / adapter_file_name(sha)
        tmp.replace(path)
    except OSError as exc:
        raise DistillError(f"could not write the LoRA adapter to {out_dir}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return path, sha


def write_adapter(trained: Any, out_dir: str | Path) -> tuple[Path, str]:
    """Export a ``train.TrainedLora`` to ``out_dir/<sha256>.gguf``; returns (path, sha256)."""
    s = trained.settings
    return write_gguf_adapter(
        lora_tensors(trained.model),
        alpha=s.alpha,
        config=trained.model.get_base_model().config,
        out_dir=out_dir,
        metadata={"lora.rank": str(s.rank), "base_model": trained.base_path.name},
    )
