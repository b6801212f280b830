"""Shared plumbing of the benchmark scripts: data splits, model backends (embedded, an
OpenAI-compatible llama.cpp server, or a zero-latency fake), per-method LLM stacks with their own
budget and cache, the machine description and JSON output."""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from evotrainer.config import CacheConfig, ModelConfig, RunConfig
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.from_config import evaluator_from_config
from evotrainer.llm.base import LLMClient
from evotrainer.llm.budget import Budget
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.llm.spec import LLMStack, build_backend, build_stack
from evotrainer.run.validation_set import spread  # noqa: F401 - the engine's, used as C.spread
from evotrainer.tasks.meetings.fake import minutes_llm, plausible_minutes  # noqa: F401
from evotrainer.tasks.meetings.render import estimate_tokens
from evotrainer.tasks.meetings.task import MeetingTask
from evotrainer.types import Instance

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
WORK = RESULTS / "tmp"  # git-ignored: caches, server logs, run directories
DEFAULT_TRAIN = "../shared/data/meetings/ami-train.jsonl"
DEFAULT_TEST = "../shared/data/meetings/ami-dev.jsonl"
DEFAULT_ICSI = "../shared/data/meetings/icsi.jsonl"
S_VAL_WEIGHTS = {"rougeL": 0.5, "action_item_f1": 0.5}  # the engine's default s_val
FAKE_SPEC = "fake:minutes"


def resolve(path: str | os.PathLike[str] | None) -> Path | None:
    """A data path; relative paths are taken relative to the repository root."""
    if path is None or str(path) == "":
        return None
    p = Path(path)
    return p if p.is_absolute() else (REPO / p).resolve()


# -- data ---------------------------------------------------------------------------------
def count_lines(path: str | None, default: int) -> int:
    """Non-empty lines of a JSONL file (its number of meetings), ``default`` when absent."""
    p = resolve(path)
    if p is None or not p.is_file():
        return default
    with p.open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())


@dataclass
class Split:
    instances: list[Instance]
    info: dict[str, Any]


def load_split(
    task: MeetingTask,
    path: str | None,
    n: int,
    *,
    name: str,
    synthetic_seed: int,
    exclude: set[str] | frozenset[str] = frozenset(),
    offset: int = 0,
    with_action_items: bool = False,
) -> Split:
    """``n`` meetings from a JSONL file (spread over the file, skipping ``exclude``; only those
    whose reference lists at least one action item if ``with_action_items``), or, when the file
    is absent, ``n`` held-out synthetic meetings (and the info says so)."""
    p = resolve(path)
    if p is not None and p.is_file():
        pool = [i for i in task.load(p) if i.id not in exclude]
        if with_action_items:
            pool = [i for i in pool if getattr(i.payload, "action_items", ())]
        chosen = spread(pool, n, offset)
        synthetic = False
        source = str(path)
        message = f"{name}: {len(chosen)} of {len(pool)} meetings from {path}" + (
            " (those with reference action items)" if with_action_items else ""
        )
    else:
        chosen = task.synthetic_validation(n, synthetic_seed)
        synthetic = True
        source = "synthetic (held out)"
        message = (
            f"{name}: data file {path!r} not found; falling back to {n} held-out SYNTHETIC "
            "meetings: the numbers are then NOT measured on real, human-annotated data"
        )
    truncated = 0
    tokens = []
    for inst in chosen:
        _, cut = task.render("x", inst)
        truncated += bool(cut)
        full = "\n".join(f"{t.speaker}: {t.text}" for t in inst.payload.transcript)
        tokens.append(estimate_tokens(full))
    info = {
        "source": source,
        "synthetic": synthetic,
        "n": len(chosen),
        "ids": [i.id for i in chosen],
        "with_action_items_only": with_action_items and not synthetic,
        "truncated": truncated,
        "transcript_tokens_est": {
            "min": min(tokens, default=0),
            "median": int(statistics.median(tokens)) if tokens else 0,
            "max": max(tokens, default=0),
        },
        "message": message,
    }
    return Split(chosen, info)


# -- a zero-latency fake LLM that writes plausible minutes (fake:minutes, in the package) ----
def fake_llm() -> FunctionLLM:
    return minutes_llm()


# -- backends -----------------------------------------------------------------------------
def model_config(spec: str, n_ctx: int, n_threads: int | None, base_url: str | None = None):
    return ModelConfig(spec=spec, n_ctx=n_ctx, n_threads=n_threads, base_url=base_url)


def make_backend(
    spec: str, n_ctx: int, n_threads: int | None, base_url: str | None = None
) -> LLMClient:
    if spec == FAKE_SPEC:
        return fake_llm()
    return build_backend(model_config(spec, n_ctx, n_threads, base_url), seed=0)


def gguf_path(spec: str) -> Path:
    """The GGUF file behind a ``local:`` spec."""
    rest = spec.partition(":")[2]
    if rest == "smollm2":
        from evotrainer.llm.llamacpp import smollm2_path

        return smollm2_path()
    return Path(rest).expanduser()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """``python -m llama_cpp.server`` on 127.0.0.1 serving one GGUF file as an OpenAI-compatible
    endpoint; started on demand, stopped by ``close()``."""

    def __init__(self, model: Path, n_ctx: int, n_threads: int, log: Path) -> None:
        self.model = model
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.log = log
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s = 0.0

    @property
    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads),
            "--model_alias",
            "smollm2",
        ]

    def start(self, timeout_s: float = 180.0) -> LlamaServer:
        import httpx

        self.log.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        with self.log.open("wb") as fh:
            self.proc = subprocess.Popen(self.command, stdout=fh, stderr=subprocess.STDOUT)
        while time.perf_counter() - t0 < timeout_s:
            if self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"llama_cpp.server exited with {self.proc.returncode}: {tail}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/models", timeout=2).status_code == 200:
                    self.startup_s = time.perf_counter() - t0
                    return self
            time.sleep(0.5)
        self.close()
        raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s:.0f} s")

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


class LlamaServerClient:
    """Factory of an OpenAI-compatible client for our own llama_cpp.server that decodes exactly
    like the embedded backend: the server's defaults differ from ``Llama.create_chat_completion``
    (repeat_penalty 1.1 instead of 1.0), which changes even greedy outputs."""

    SAME_AS_EMBEDDED = {"repeat_penalty": 1.0, "top_k": 40, "min_p": 0.05}

    @classmethod
    def make(cls, base_url: str, n_ctx: int) -> LLMClient:
        from evotrainer.llm.openai_http import OpenAICompatibleLLM

        return OpenAICompatibleLLM(
            "smollm2",
            base_url=base_url,
            timeout_s=900,
            max_retries=1,
            concurrency=1,
            context_size=n_ctx,
            extra_body=cls.SAME_AS_EMBEDDED,
        )


def method_stack(
    backend: LLMClient, work: Path | None, name: str, seed: int, max_calls: int | None
) -> LLMStack:
    """A fresh budget and a fresh cache (its own SQLite file) for one method and seed, so a
    method never profits from another's calls; ``work=None`` disables the cache."""
    budget = Budget(max_calls=max_calls)
    if work is None:
        return build_stack(backend, CacheConfig(enabled=False), budget)
    path = work / "cache" / f"{name}-seed{seed}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return build_stack(backend, CacheConfig(enabled=True, path=str(path)), budget)


def evaluator(task: Any, client: LLMClient, max_tokens: int, seed: int = 0) -> Evaluator:
    """The library's evaluator (``evotrainer eval``'s: ``evaluator_from_config``) for a
    benchmark's scoring: greedy answers of ``max_tokens``, one request at a time (the prefix
    reuse of instance-major order), no error-rate stop (a failed answer scores 0 and counts as
    an error, for every policy alike)."""
    cfg = RunConfig.model_validate(
        {
            "seed": seed,
            "model": {"temperature": 0.0, "max_tokens": max_tokens},
            "runner": "serial",
            "budget": {"max_error_rate": None},
        }
    )
    return evaluator_from_config(cfg, task, client)


def usage(budget: Budget) -> dict[str, Any]:
    b = budget.snapshot()
    return {
        "calls": b["backend_calls"],
        "requests": b["llm_calls"],
        "prompt_tokens": b["prompt_tokens"],
        "completion_tokens": b["completion_tokens"],
        "tokens": b["backend_tokens"],
        "llm_seconds": b["llm_seconds"],
        "cache_hits": b["cache_hits"],
        "llm_errors": b["llm_errors"],
    }


# -- numbers and output --------------------------------------------------------------------
def mean_std(values: Sequence[float | None]) -> dict[str, Any]:
    """Mean and sample standard deviation (n-1) over the finite values."""
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not xs:
        return {"mean": None, "std": None, "n": 0}
    return {
        "mean": round(statistics.fmean(xs), 4),
        "std": round(statistics.stdev(xs), 4) if len(xs) > 1 else 0.0,
        "n": len(xs),
    }


def fmt(ms: Mapping[str, Any] | None, digits: int = 3) -> str:
    if not ms or ms.get("mean") is None:
        return "n/a"
    return f"{ms['mean']:.{digits}f} ± {ms['std']:.{digits}f}"


def clean_json(obj: Any) -> Any:
    """NaN/inf -> None, recursively (strict JSON)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {str(k): clean_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean_json(v) for v in obj]
    return obj


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(clean_json(data), indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split("\n")[0].split()[1])
        mem = round(kb / 1024**2, 1)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem,
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": {
            d: _version(d)
            for d in ("evotrainer", "llama_cpp_python", "gepa", "promptolution", "rouge-score")
        },
    }


@contextlib.contextmanager
def timer() -> Iterator[dict[str, float]]:
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        yield out
    finally:
        out["s"] = time.perf_counter() - t0


def log(msg: str) -> None:
    print(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] {msg}", flush=True)


def rng_for(*parts: Any) -> random.Random:
    return random.Random("-".join(str(p) for p in parts))
