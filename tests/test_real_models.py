"""End-to-end against real models: the embedded SmolLM2 and a real OpenAI-compatible server
(``python -m llama_cpp.server`` serving the same GGUF on 127.0.0.1)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import pytest

from evotrainer.config import CacheConfig, ModelConfig
from evotrainer.errors import ContextOverflowError
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.budget import Budget
from evotrainer.llm.llamacpp import smollm2_path
from evotrainer.llm.openai_http import OpenAICompatibleLLM
from evotrainer.llm.spec import build_backend, build_stack
from evotrainer.types import Message
from tests.support import needs_model, needs_sandbox

pytestmark = [pytest.mark.slow, needs_model]
Q = [Message("user", "Name three colours, one per line.")]


@pytest.fixture(scope="module")
def embedded():
    return build_backend(ModelConfig(spec="local:smollm2", n_ctx=2048))


def test_embedded_model_answers(embedded, tmp_path):
    stack = build_stack(embedded, CacheConfig(path=str(tmp_path / "c.sqlite")), Budget())
    c = stack.client.complete(Q, SamplingParams(max_tokens=24, seed=0))
    assert c.text.strip() and c.completion_tokens > 0 and c.prompt_tokens > 0
    again = stack.client.complete(Q, SamplingParams(max_tokens=24, seed=0))
    assert again.cached and again.text == c.text
    assert stack.budget.backend_calls == 1


def test_requantized_weights_are_made_once_and_answer(tmp_path, monkeypatch):
    """local:smollm2-q4_0: the shipped Q4_1 file requantized offline, kept in the cache
    directory and reused; its own model id, so its answers never mix with the Q4_1 ones."""
    monkeypatch.setenv("EVOTRAINER_CACHE_DIR", str(tmp_path))
    llm = build_backend(ModelConfig(spec="local:smollm2-q4_0", n_ctx=1024, n_threads=1))
    made = list((tmp_path / "models").glob("*.gguf"))
    assert [p.name for p in made] == ["SmolLM2-135M-Instruct.Q4_1-requantized.Q4_0.gguf"]
    assert made[0].stat().st_size < smollm2_path().stat().st_size  # no min per block
    assert "smollm2-q4_0" in llm.model_id
    c = llm.complete(Q, SamplingParams(max_tokens=16, seed=0))
    assert c.text.strip() and c.completion_tokens > 0
    stamp = made[0].stat().st_mtime_ns
    build_backend(ModelConfig(spec="local:smollm2-q4_0", n_ctx=1024, n_threads=1))
    assert made[0].stat().st_mtime_ns == stamp  # reused, not made again
    assert not list((tmp_path / "models").glob("*.part"))


def test_embedded_context_overflow_is_a_clear_error(embedded):
    long = [Message("user", "word " * 5000)]
    with pytest.raises(ContextOverflowError, match="context"):
        embedded.complete(long, SamplingParams(max_tokens=8))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server():
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]")
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(smollm2_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--model_alias",
            "smollm2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not come up within 120 s")
    yield base
    proc.terminate()
    proc.wait(timeout=30)


def test_real_openai_compatible_server(llama_server):
    llm = OpenAICompatibleLLM("smollm2", base_url=llama_server, concurrency=2)
    assert any(m.get("id") == "smollm2" for m in llm.list_models())
    c = llm.complete(Q, SamplingParams(max_tokens=24, seed=0))
    assert c.text.strip() and c.completion_tokens > 0
    spec = build_backend(ModelConfig(spec="openai:smollm2", base_url=llama_server))
    assert spec.complete(Q, SamplingParams(max_tokens=8)).text.strip()


@needs_sandbox
def test_code_gym_runs_on_the_embedded_model(tmp_path):
    """``evotrainer run --task code`` on SmolLM2: every answer runs in the sandbox; a 135M
    model solves little, so this checks the pipeline, not the score."""
    from evotrainer.coevolution import CoEvolution
    from evotrainer.config import config_from_dict

    cfg = config_from_dict(
        {
            "cache": {"path": str(tmp_path / "c.sqlite")},
            "model": {"spec": "local:smollm2", "n_ctx": 2048, "max_tokens": 128},
            "task": {"name": "code", "turns": 2},
            "inner": {"population": 3, "elites": 1, "tasks_per_generation": 2, "generations": 1},
            "validation": {"limit": 2, "confirm": 0},
            "defences": {"terminal_share": 0.0},
        }
    )
    co = CoEvolution(cfg)
    result = co.run(tmp_path / "run")
    assert result.summary["stopped"] == "completed"
    assert "pass_at_1" in result.summary["final_aggregates"]
    assert co.components.task.sandbox.executions > 0
    from evotrainer.report.build import build_report

    assert build_report(tmp_path / "run").is_file()  # the report renders a code-task run


def test_the_async_path_against_llama_cpp_server(llama_server):
    """The evaluator's async path (AsyncRunner, pooled AsyncOpenAI, 2 requests in flight)
    against the real server: every answer comes back, equal to the sync client's."""
    import asyncio

    from evotrainer.evaluation.evaluator import Evaluator
    from evotrainer.evaluation.runner import AsyncRunner, runner_for
    from evotrainer.tasks.meetings.seeds import seed_policies
    from evotrainer.tasks.meetings.task import MeetingTask

    same_as_embedded = {"repeat_penalty": 1.0, "top_k": 40, "min_p": 0.05}
    llm = OpenAICompatibleLLM(
        "smollm2", base_url=llama_server, concurrency=2, extra_body=same_as_embedded
    )
    params = SamplingParams(max_tokens=16, seed=0)

    async def three():
        return await asyncio.gather(*(llm.acomplete(Q, params) for _ in range(3)))

    answers = asyncio.run(three())
    assert len({a.text for a in answers}) == 1 and answers[0].text == llm.complete(Q, params).text
    task = MeetingTask(max_input_tokens=256)
    stack = build_stack(llm, CacheConfig(enabled=False), Budget())
    runner = runner_for(stack.client)
    assert isinstance(runner, AsyncRunner)
    ev = Evaluator(task, stack.client, params, runner)
    records = ev.evaluate(seed_policies(), task.synthetic_validation(2, 3))
    assert len(records) == 6 and all(r.rollout.error is None for r in records.values())
    assert stack.budget.backend_calls == 6
