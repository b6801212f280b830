"""llama.cpp's threads from what is really free (issue 35, item 11): a short CPU-usage sample of
the cores (/proc/stat, read twice), never the lagging load average; re-decided between
generations (``retune_threads``) on the model and on the batched decoder's context; the console
and the report say how many were used. Every sample here is a fake /proc/stat: nothing is timed.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from evotrainer.llm import llamacpp
from evotrainer.llm.llamacpp import auto_threads, cpu_busy
from tests.support import needs_model

HEADER = "cpu  {t} 0 0 0 0 0 0 0 0 0\n"


def _stat(cores: list[tuple[int, int]]) -> str:
    """A /proc/stat whose cpuN lines have (busy jiffies as user time, idle jiffies)."""
    total = sum(b for b, _ in cores)
    lines = [HEADER.format(t=total)]
    for i, (busy, idle) in enumerate(cores):
        lines.append(f"cpu{i} {busy} 0 0 {idle} 0 0 0 0 0 0\n")
    lines.append("intr 1 2 3\nctxt 42\nbtime 1\n")
    return "".join(lines)


def _sampler(tmp_path: Path, first: str, second: str):
    """A /proc/stat file that holds ``first`` and turns into ``second`` during the sleep."""
    path = tmp_path / "stat"
    path.write_text(first)
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        path.write_text(second)

    return path, sleep, slept


def test_busy_cores_from_two_samples(tmp_path):
    # cpu0: 100 of 100 jiffies busy; cpu1: 5 of 100 busy
    path, sleep, slept = _sampler(
        tmp_path, _stat([(1000, 5000), (1000, 5000)]), _stat([(1100, 5000), (1005, 5095)])
    )
    busy = cpu_busy(path, interval=0.3, sleep=sleep, cpus=[0, 1])
    assert slept == [0.3]
    assert busy == pytest.approx(1.05)


def test_idle_machine_with_a_high_load_average_gets_every_core(tmp_path, monkeypatch):
    """The issue's case: right after `make` the 1-minute load average still says 1.9 on an idle
    2-core machine; the CPU sample says idle, so both cores are used."""
    monkeypatch.setattr(llamacpp.os, "getloadavg", lambda: (1.9, 1.5, 1.0), raising=False)
    path, sleep, _ = _sampler(tmp_path, _stat([(10, 10), (10, 10)]), _stat([(11, 109), (12, 108)]))
    assert auto_threads(path, sleep=sleep, cpus=[0, 1]) == 2


def test_one_core_busy_elsewhere_leaves_one_thread(tmp_path):
    path, sleep, _ = _sampler(tmp_path, _stat([(0, 0), (0, 0)]), _stat([(97, 3), (4, 96)]))
    assert auto_threads(path, sleep=sleep, cpus=[0, 1]) == 1


def test_a_lightly_used_core_still_counts_as_free(tmp_path):
    # 20% of one core is below the quarter-core tolerance: both cores
    path, sleep, _ = _sampler(tmp_path, _stat([(0, 0), (0, 0)]), _stat([(20, 80), (0, 100)]))
    assert auto_threads(path, sleep=sleep, cpus=[0, 1]) == 2


def test_only_the_cores_this_process_may_use_count(tmp_path):
    # 4 cores on the machine, this process may run on cpu2 and cpu3; cpu0/1 are busy elsewhere
    path, sleep, _ = _sampler(
        tmp_path,
        _stat([(0, 0)] * 4),
        _stat([(100, 0), (100, 0), (0, 100), (1, 99)]),
    )
    assert auto_threads(path, sleep=sleep, cpus=[2, 3]) == 2
    path, sleep, _ = _sampler(
        tmp_path,
        _stat([(0, 0)] * 4),
        _stat([(100, 0), (100, 0), (0, 100), (1, 99)]),
    )
    assert auto_threads(path, sleep=sleep, cpus=[0, 1, 2, 3]) == 2


def test_everything_busy_still_one_thread(tmp_path):
    path, sleep, _ = _sampler(tmp_path, _stat([(0, 0), (0, 0)]), _stat([(100, 0), (100, 0)]))
    assert auto_threads(path, sleep=sleep, cpus=[0, 1]) == 1


def test_unreadable_stat_falls_back_to_the_load_average(tmp_path, monkeypatch):
    monkeypatch.setattr(llamacpp.os, "getloadavg", lambda: (0.1, 0.1, 0.1), raising=False)
    assert cpu_busy(tmp_path / "missing", sleep=lambda s: None, cpus=[0, 1]) is None
    assert auto_threads(tmp_path / "missing", sleep=lambda s: None, cpus=[0, 1]) == 2
    (tmp_path / "garbage").write_text("cpu0 x y z\n")
    assert cpu_busy(tmp_path / "garbage", sleep=lambda s: None, cpus=[0]) is None


# -- retuning a loaded model ---------------------------------------------------------------------


class _FakeLlama:
    def __init__(self, n: int) -> None:
        self.n_threads = self.n_threads_batch = n
        self.context_params = SimpleNamespace(n_threads=n, n_threads_batch=n)
        self._ctx = SimpleNamespace(ctx="sequential-ctx")


def _embedded(n: int, fixed: bool = False) -> llamacpp.LlamaCppLLM:
    """A LlamaCppLLM around a fake Llama (no model is loaded)."""
    import threading

    llm = object.__new__(llamacpp.LlamaCppLLM)
    llm._llm = _FakeLlama(n)
    llm.n_threads = n
    llm.fixed_threads = fixed
    llm._lock = threading.Lock()
    llm._decoder = None
    return llm


def test_retune_sets_threads_on_every_context(monkeypatch):
    llama_cpp = pytest.importorskip("llama_cpp")
    calls: list[tuple[object, int, int]] = []
    monkeypatch.setattr(
        llama_cpp, "llama_set_n_threads", lambda ctx, n, nb: calls.append((ctx, n, nb))
    )
    monkeypatch.setattr(llamacpp, "auto_threads", lambda **kw: 2)
    llm = _embedded(1)
    llm._decoder = SimpleNamespace(_ctx=SimpleNamespace(ctx="batch-ctx"))
    assert llm.retune_threads() == 2
    assert calls == [("sequential-ctx", 2, 2), ("batch-ctx", 2, 2)]
    fake = llm._llm
    assert (fake.n_threads, fake.n_threads_batch) == (2, 2)
    # a batch context made later copies these parameters
    assert (fake.context_params.n_threads, fake.context_params.n_threads_batch) == (2, 2)
    assert llm.n_threads == 2
    calls.clear()
    assert llm.retune_threads() == 2  # unchanged: nothing is set
    assert calls == []


def test_retune_keeps_threads_the_config_fixed(monkeypatch):
    monkeypatch.setattr(llamacpp, "auto_threads", lambda **kw: pytest.fail("sampled"))
    llm = _embedded(3, fixed=True)
    assert llm.retune_threads() == 3


# -- the engine: re-checked between generations, said on the console and in the report ----------


class _Retunable:
    """A fake backend that reports threads like the embedded one."""

    def __init__(self, inner, plan: list[int]) -> None:
        self.inner = inner
        self.plan = list(plan)
        self.n_threads = self.plan.pop(0)
        self.model_id = inner.model_id

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def complete(self, messages, params):
        return self.inner.complete(messages, params)

    def describe(self):
        return {**self.inner.describe(), "threads": self.n_threads}

    def retune_threads(self) -> int:
        if self.plan:
            self.n_threads = self.plan.pop(0)
        return self.n_threads


def test_engine_retunes_between_generations_and_reports_it(tmp_path):
    from evotrainer.coevolution import CoEvolution
    from evotrainer.config import config_from_dict
    from evotrainer.report.build import build_report
    from evotrainer.report.data import load_run
    from evotrainer.run.console import ConsoleProgress
    from evotrainer.terminal import SafeConsole
    from tests.fake_meetings import RecordingMeetingTask, family_llm

    cfg = config_from_dict(
        {
            "seed": 1,
            "cache": {"path": str(tmp_path / "c.sqlite")},
            "inner": {"population": 3, "elites": 1, "tasks_per_generation": 2, "generations": 3},
            "outer": {"enabled": False, "every": 5},
            "harness": {"real_data": None},
            "validation": {"data": None, "synthetic_size": 2, "confirm": 0},
        }
    )
    task = RecordingMeetingTask()
    backend = _Retunable(family_llm(task), [1, 1, 2, 2])
    out = io.StringIO()
    console = ConsoleProgress(SafeConsole(file=out, width=200))
    CoEvolution(cfg, task=task, llm=backend, observers=[console]).run(tmp_path / "run")
    events = [json.loads(x) for x in (tmp_path / "run" / "events.jsonl").read_text().splitlines()]
    gens = {e["generation"]: e["threads"] for e in events if e["type"] == "generation"}
    assert gens == {0: 1, 1: 1, 2: 2, 3: 2}
    changes = [e for e in events if e["type"] == "threads"]
    assert [(e["previous"], e["threads"], e["generation"]) for e in changes] == [(1, 2, 2)]
    text = out.getvalue()
    assert "1 thread" in text and "threads: 1 -> 2" in text
    run = load_run(tmp_path / "run")
    assert run.threads_used() == [(0, 1), (2, 2)]
    page = build_report(tmp_path / "run").read_text()
    assert "1 thread (generations 0-1), 2 threads (generations 2-3)" in page


# -- the real embedded model (slow): other threads, the same answers ------------------------------


@pytest.mark.slow
@needs_model
def test_changing_threads_on_a_loaded_model_keeps_answers(monkeypatch):
    from evotrainer.llm.base import SamplingParams
    from evotrainer.llm.llamacpp import LlamaCppLLM, smollm2_path
    from evotrainer.types import Message

    monkeypatch.setattr(llamacpp, "auto_threads", lambda **kw: 1)
    llm = LlamaCppLLM(smollm2_path(), n_ctx=1024, batch_size=2)
    asks = [
        [Message("user", "Name three colours, one per line.")],
        [Message("user", "Name three animals, one per line.")],
    ]
    params = SamplingParams(max_tokens=16, seed=0)
    one = [llm.complete(m, params).text for m in asks]
    batched = [c.text for c in llm.complete_batch(asks, params)]
    monkeypatch.setattr(llamacpp, "auto_threads", lambda **kw: 2)
    assert llm.retune_threads() == 2
    import llama_cpp

    assert llama_cpp.llama_n_threads(llm._llm._ctx.ctx) == 2
    assert llama_cpp.llama_n_threads_batch(llm._decoder._ctx.ctx) == 2
    assert [llm.complete(m, params).text for m in asks] == one
    assert [c.text for c in llm.complete_batch(asks, params)] == batched
