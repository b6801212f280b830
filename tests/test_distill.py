"""LoRA distillation (issue 31): training pairs, the optional extra, LoRA training on the
embedded model, export as a llama.cpp GGUF adapter named by its hash, and serving it with the
embedded backend (sequential and batched).

The slow tests train one tiny adapter per module (a few steps on short sequences, about half a
minute on this 2-core machine including loading the model) and reuse it."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

from evotrainer.distill import extra
from evotrainer.distill.pairs import IGNORE, TrainingPair
from evotrainer.distill.settings import LoraSettings
from evotrainer.errors import ConfigError, DataError, DistillError, MissingExtraError
from evotrainer.llm.adapter_file import (
    adapter_file_name,
    sha256_file,
    store_adapter,
    verified_copy,
    verify_adapter,
)
from evotrainer.llm.base import SamplingParams
from evotrainer.types import Message
from tests.support import needs_model

needs_distill = pytest.mark.skipif(
    not extra.installed() and not os.environ.get("CI"),
    reason="the distill extra is not installed (pip install 'evotrainer[distill]')",
)

TRANSCRIPT = (
    "Meeting transcript:\n"
    "Anna: Let's start. The budget for the new website is 12,000 euros.\n"
    "Ben: I can have the design ready by Friday.\n"
    "Anna: Good. Carla, please check the hosting contract.\n"
    "Carla: Will do. We also need to decide on the launch date.\n"
)
TRAIN_INSTRUCTIONS = (
    "Write the minutes.",
    "List the action items.",
    "Summarise the meeting.",
    "Who does what?",
    "What was decided?",
    "Write short minutes with the tasks.",
)
TARGET = "MINUTES\n- Ben: design by Friday\n- Carla: hosting contract\nEND"
HELD_OUT = (
    "Write the minutes with a title, the topics and the action items.",
    "List the decisions.",
    "Write a one-sentence summary.",
    "Name the people in the meeting.",
)
GREEDY = SamplingParams(max_tokens=24, temperature=0.0, seed=0)
# one thread: the same bytes whatever the load (a busy machine would pick 1, an idle one 2)
SETTINGS = LoraSettings(
    rank=4, alpha=8, learning_rate=2e-3, steps=6, batch_size=2, max_seq_len=160, seed=3, threads=1
)


def _chat(instruction: str) -> list[Message]:
    return [Message("user", f"{TRANSCRIPT}\n{instruction}")]


def _pairs() -> list[TrainingPair]:
    return [
        TrainingPair(tuple(_chat(i)), TARGET, 1.0, f"test {k}")
        for k, i in enumerate(TRAIN_INSTRUCTIONS)
    ]


# -- without the extra ----------------------------------------------------------------------
def test_the_core_package_does_not_import_the_extra():
    code = (
        "import sys, evotrainer.cli.app, evotrainer.distill.serve, evotrainer.distill.pairs, "
        "evotrainer.distill.settings, evotrainer.llm.adapter_file, evotrainer.distill.train;"
        "bad = [m for m in ('torch', 'transformers', 'peft', 'gguf') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_extra_is_a_clear_config_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "peft", None)  # `import peft` raises ImportError
    with pytest.raises(MissingExtraError) as err:
        extra.require()
    assert isinstance(err.value, ConfigError)
    assert "pip install 'evotrainer[distill]'" in str(err.value) and "peft" in str(err.value)
    assert not extra.available()
    train = importlib.import_module("evotrainer.distill.train")
    with pytest.raises(MissingExtraError, match=r"evotrainer\[distill\]"):
        train.train_adapter(_pairs(), SETTINGS, tmp_path)
    assert not list(tmp_path.iterdir())


def test_settings_are_checked():
    assert LoraSettings(rank=16, alpha=32).scale == 2.0
    with pytest.raises(ValueError, match="rank=0"):
        LoraSettings(rank=0)
    with pytest.raises(ValueError, match="target_modules"):
        LoraSettings(target_modules=("lm_head",))
    d = LoraSettings(target_modules=["q_proj", "v_proj"]).to_dict()
    assert d["target_modules"] == ["q_proj", "v_proj"] and d["steps"] is None


def test_pairs_round_trip_and_refuse_nonsense():
    p = TrainingPair(({"role": "user", "content": "hi"},), "hello", 0.5, "ref")
    assert p.messages == (Message("user", "hi"),)
    assert TrainingPair.from_dict(p.to_dict()) == p
    with pytest.raises(ValueError, match="roles"):
        TrainingPair((Message("robot", "x"),), "y")
    with pytest.raises(ValueError, match="weight"):
        TrainingPair((Message("user", "x"),), "y", weight=-1)


@needs_distill
def test_a_pair_weight_scales_its_pull():
    import torch

    from evotrainer.distill.train import weighted_loss

    torch.manual_seed(0)
    logits = torch.randn(2, 5, 11)
    labels = torch.tensor([[IGNORE, IGNORE, 3, 4, 5], [IGNORE, 1, 2, IGNORE, IGNORE]])
    ones = weighted_loss(logits, labels, torch.tensor([1.0, 1.0]))
    ce = torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, 11), labels[:, 1:].reshape(-1), ignore_index=IGNORE
    )
    assert torch.allclose(ones, ce)  # all weights 1: the plain token mean
    half = weighted_loss(logits[:1], labels[:1], torch.tensor([0.5]))
    assert torch.allclose(half, 0.5 * weighted_loss(logits[:1], labels[:1], torch.tensor([1.0])))
    # logits from the position before the first label on (logits_to_keep): the same loss
    row = weighted_loss(logits[:1], labels[:1], torch.tensor([1.0]))
    assert torch.allclose(weighted_loss(logits[:1, 1:], labels[:1], torch.tensor([1.0])), row)


def test_an_adapter_whose_hash_does_not_match_is_refused_before_loading(tmp_path, monkeypatch):
    good = tmp_path / "a.bin"
    good.write_bytes(b"adapter bytes")
    sha = sha256_file(good)
    assert verify_adapter(good, sha) == sha
    stored, same = store_adapter(good, tmp_path / "run")
    assert same == sha and stored.name == adapter_file_name(sha)
    assert verify_adapter(stored) == sha  # checked against its own name
    stored.write_bytes(b"tampered")
    with pytest.raises(DataError, match="expected " + sha):
        verify_adapter(stored)
    with pytest.raises(DataError, match="expected"), verified_copy(good, "0" * 64):
        pass
    with pytest.raises(DataError, match="not found"):
        verify_adapter(tmp_path / "missing.gguf")

    # the embedded backend hashes before llama.cpp sees anything
    llama_cpp = pytest.importorskip("llama_cpp")

    def no_load(*a, **k):
        raise AssertionError("llama.cpp was asked to load a tampered adapter")

    monkeypatch.setattr(llama_cpp, "Llama", no_load)
    from evotrainer.config import ModelConfig
    from evotrainer.distill.serve import embedded_with_adapter
    from evotrainer.errors import ModelSpecError

    with pytest.raises(DataError, match="not loaded"):
        embedded_with_adapter(stored)
    with pytest.raises(DataError, match="not loaded"):
        embedded_with_adapter(good, sha256="f" * 64)
    with pytest.raises(ModelSpecError, match="embedded"):
        embedded_with_adapter(good, model=ModelConfig(spec="fake:echo"))


# -- with the extra and the embedded model ----------------------------------------------------


@pytest.fixture(scope="module")
def trained():
    from evotrainer.distill.train import train_lora

    seen = []
    lora = train_lora(_pairs(), SETTINGS, progress=seen.append)
    return lora, seen


@pytest.fixture(scope="module")
def exported(trained, tmp_path_factory):
    from evotrainer.distill.export import write_adapter

    return write_adapter(trained[0], tmp_path_factory.mktemp("adapters"))


@pytest.fixture(scope="module")
def base_llm():
    from evotrainer.llm.llamacpp import LlamaCppLLM, smollm2_path

    return LlamaCppLLM(smollm2_path(), n_ctx=1024, n_threads=1)


@pytest.mark.slow
@needs_distill
@needs_model
def test_pairs_are_tokenised_as_llama_cpp_sees_them():
    from llama_cpp import Llama

    from evotrainer.distill.base_model import load_tokenizer
    from evotrainer.distill.pairs import encode_pair, prompt_text
    from evotrainer.llm.llamacpp import smollm2_path

    tok = load_tokenizer()
    pair = _pairs()[0]
    enc = encode_pair(tok, pair, 512)
    assert not isinstance(enc, str)
    n = enc.prompt_tokens
    assert enc.labels[:n] == (IGNORE,) * n and enc.labels[n:] == enc.input_ids[n:]
    assert tok.convert_ids_to_tokens(enc.input_ids[-1]) == "<|im_end|>" and not enc.truncated
    llm = Llama(model_path=str(smollm2_path()), vocab_only=True, verbose=False)
    text = prompt_text(tok, pair.messages)
    assert text.endswith("<|im_start|>assistant\n")
    assert llm.tokenize(text.encode(), add_bos=True, special=True) == list(enc.input_ids[:n])
    short = encode_pair(tok, pair, n + 3)
    assert short.truncated and short.completion_tokens == 3
    assert "does not fit" in encode_pair(tok, pair, n)
    assert encode_pair(tok, TrainingPair(pair.messages, "x", weight=0), 512) == "weight 0"


@pytest.mark.slow
@needs_distill
@needs_model
def test_training_reports_progress_and_learns(trained):
    lora, seen = trained
    assert [p.step for p in seen] == list(range(1, SETTINGS.steps + 1))
    assert all(p.steps == SETTINGS.steps and p.tokens_per_s > 0 for p in seen)
    assert seen[-1].eta_s == 0 and seen[0].eta_s > 0
    assert len(lora.losses) == SETTINGS.steps and lora.losses[-1] < lora.losses[0] / 2
    assert lora.pairs_used == len(TRAIN_INSTRUCTIONS) and not lora.pairs_skipped
    assert lora.loss_tokens < lora.tokens


@pytest.mark.slow
@needs_distill
@needs_model
def test_training_is_deterministic_given_the_seed(trained, exported, tmp_path):
    from evotrainer.distill.train import train_adapter

    result = train_adapter(_pairs(), SETTINGS, tmp_path)
    assert result.sha256 == exported[1] and list(result.losses) == trained[0].losses
    assert result.adapter_path == str(tmp_path / adapter_file_name(result.sha256))
    assert sha256_file(result.adapter_path) == result.sha256
    d = result.to_dict()
    assert d["steps"] == SETTINGS.steps and d["settings"]["rank"] == SETTINGS.rank
    assert d["base_model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert d["cpu_seconds"] > 0  # what the training cost, beside its wall seconds


@pytest.mark.slow
@needs_distill
@needs_model
def test_no_pair_that_fits_is_a_distill_error(tmp_path):
    from evotrainer.distill.train import train_adapter

    with pytest.raises(DistillError, match="max_seq_len=16"):
        train_adapter(_pairs(), LoraSettings(max_seq_len=16, steps=1), tmp_path)


@pytest.mark.slow
@needs_distill
@needs_model
def test_an_adapter_read_back_is_the_one_trained_and_a_warm_start_begins_there(
    trained, exported, tmp_path
):
    """distill_warm_start: the exported file read back gives the trained A and B (the rotary
    permutation of q and k undone), and a training started from it begins at its loss, not
    at the base model's."""
    from dataclasses import replace

    from evotrainer.distill.export import (
        load_lora_tensors,
        lora_modules,
        lora_tensors,
        read_gguf_adapter,
    )
    from evotrainer.distill.train import train_adapter

    lora, _ = trained
    config = lora.model.get_base_model().config
    back = read_gguf_adapter(exported[0], config, lora_modules(lora.model))
    want = lora_tensors(lora.model)
    assert sorted(back) == sorted(want)
    for name, (a, b) in want.items():
        np.testing.assert_array_equal(back[name][0], a)
        np.testing.assert_array_equal(back[name][1], b)
    name, (a, b) = next(iter(back.items()))
    with pytest.raises(DistillError, match="another rank"):
        load_lora_tensors(lora.model, {name: (a[:2], b[:, :2])})
    warm = train_adapter(_pairs(), replace(SETTINGS, steps=1), tmp_path, start_from=exported[0])
    assert warm.started_from == exported[0].name
    assert warm.losses[0] < lora.losses[0] / 2  # where the trained adapter ended


@pytest.mark.slow
@needs_distill
@needs_model
def test_exported_file_is_a_llama_cpp_lora_adapter(exported, trained):
    import gguf

    path, sha = exported
    assert path.name == f"{sha}.gguf" and sha256_file(path) == sha
    r = gguf.GGUFReader(str(path))

    def field(key):
        f = r.fields[key]
        return f.contents()

    assert field("general.type") == "adapter" and field("adapter.type") == "lora"
    assert field("general.architecture") == "llama"
    assert field("adapter.lora.alpha") == SETTINGS.alpha
    shapes = {t.name: tuple(int(x) for x in t.shape) for t in r.tensors}  # ggml order: ne
    assert len(shapes) == 2 * 7 * 30
    assert shapes["blk.0.attn_q.weight.lora_a"] == (576, SETTINGS.rank)  # [n_in, rank]
    assert shapes["blk.0.attn_k.weight.lora_b"] == (SETTINGS.rank, 192)  # [rank, n_out]
    assert shapes["blk.29.ffn_down.weight.lora_a"] == (1536, SETTINGS.rank)


def _llama_logits(ids, lora_path=None):
    from llama_cpp import Llama

    from evotrainer.llm.llamacpp import smollm2_path

    kw = {"lora_path": str(lora_path)} if lora_path else {}
    llm = Llama(
        model_path=str(smollm2_path()), n_ctx=512, n_threads=1, logits_all=True, verbose=False, **kw
    )
    llm.eval(ids)
    return np.array(llm.scores[: len(ids)], dtype=np.float64)


@pytest.mark.slow
@needs_distill
@needs_model
def test_serving_applies_the_same_weight_change_as_training(trained, exported):
    """The strong check of the export (shapes, names, the Q/K row permutation, the scale):
    over every position of a held-out prompt, the change the adapter makes to the logits in
    llama.cpp (Q4_1 weights, GGUF adapter) correlates with the change it makes in
    transformers + peft (float32), at the same size."""
    import torch

    from evotrainer.distill.base_model import cpu_threads
    from evotrainer.distill.pairs import prompt_ids

    lora, _ = trained
    ids = prompt_ids(lora.tokenizer, _chat(HELD_OUT[0]))
    with torch.no_grad(), cpu_threads(1):
        hf_lora = lora.model(input_ids=torch.tensor([ids])).logits[0].double().numpy()
        with lora.model.disable_adapter():
            hf_base = lora.model(input_ids=torch.tensor([ids])).logits[0].double().numpy()
    cpp_lora, cpp_base = _llama_logits(ids, exported[0]), _llama_logits(ids)
    d_hf, d_cpp = (hf_lora - hf_base).ravel(), (cpp_lora - cpp_base).ravel()
    corr = float(np.corrcoef(d_hf, d_cpp)[0, 1])
    ratio = float(np.linalg.norm(d_cpp) / np.linalg.norm(d_hf))
    assert corr > 0.9, corr
    assert 0.8 < ratio < 1.25, ratio


@pytest.mark.slow
@needs_distill
@needs_model
def test_adapter_round_trip_changes_answers_deterministically(exported, base_llm):
    from evotrainer.config import ModelConfig
    from evotrainer.distill.serve import embedded_with_adapter

    path, sha = exported
    cfg = ModelConfig(n_ctx=1024, n_threads=1, batch_size=1)
    first = embedded_with_adapter(path, sha, model=cfg)
    assert first.model_id.endswith(f"+lora:{sha}") and first.model_id != base_llm.model_id
    assert first.describe()["lora_sha256"] == sha
    answers = [first.complete(_chat(q), GREEDY).text for q in HELD_OUT]
    del first
    again = embedded_with_adapter(path, model=cfg)  # a second load, verified by its name
    assert [again.complete(_chat(q), GREEDY).text for q in HELD_OUT] == answers
    base = [base_llm.complete(_chat(q), GREEDY).text for q in HELD_OUT]
    assert all(a != b for a, b in zip(answers, base, strict=True)), (answers, base)
    assert sum(a.startswith("MINUTES") for a in answers) >= 3, answers


@pytest.mark.slow
@needs_distill
@needs_model
def test_batched_decoding_keeps_the_adapter(exported):
    from evotrainer.llm.llamacpp import LlamaCppLLM, smollm2_path

    path, sha = exported
    llm = LlamaCppLLM(smollm2_path(), n_ctx=1024, n_threads=1, batch_size=4, lora_path=path)
    prompts = [_chat(q) for q in HELD_OUT]
    batched = llm.complete_batch(prompts, GREEDY)
    assert llm._decoder is not None and llm._decoder.stats["groups"] >= 1  # really batched
    sequential = [llm.complete(p, GREEDY) for p in prompts]
    assert [b.text for b in batched] == [s.text for s in sequential]


@pytest.mark.slow
@needs_distill
@needs_model
def test_greedy_answers_agree_between_training_and_serving(trained, exported, base_llm):
    """Greedy answers with the adapter, transformers + peft (float32) against llama.cpp (Q4_1
    + GGUF adapter), on held-out prompts. They cannot be identical in general (llama.cpp
    quantises activations to 8 bits for the Q4_1 products), so the bound is the one the base
    model itself meets: the answers share their first tokens on most prompts.
    docs/distillation.md has the measured agreement."""
    from evotrainer.config import ModelConfig
    from evotrainer.distill.reference import common_prefix, greedy_tokens
    from evotrainer.distill.serve import embedded_with_adapter

    lora, _ = trained
    tok = lora.tokenizer
    served = embedded_with_adapter(exported[0], model=ModelConfig(n_ctx=1024, n_threads=1))
    n = GREEDY.max_tokens
    shared = []
    for q in HELD_OUT:
        hf = greedy_tokens(lora.model, tok, _chat(q), n, threads=1)
        cpp = tok(served.complete(_chat(q), GREEDY).text, add_special_tokens=False)["input_ids"]
        shared.append(common_prefix(hf, cpp) / max(1, min(len(hf), n)))
    assert sum(s >= 0.5 for s in shared) >= len(HELD_OUT) - 1, shared
