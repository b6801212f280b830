"""The Ray runner end to end on a local Ray instance that the test starts (issue 12): workers
build their own backend (here an OpenAI-compatible client of a local latency server whose
answers are honest minutes) from plain data; the cache and the budget stay on the driver, so a
rerun makes no calls and the call cap is exact; the result equals the same run without Ray."""

from __future__ import annotations

import json

import pytest

from evotrainer.coevolution import CoEvolution
from evotrainer.llm.fake_server import LatencyServer
from tests.fake_meetings import RecordingMeetingTask, honest_minutes
from tests.fake_runs import comparable_summary, small_config

ray = pytest.importorskip("ray", reason="the Ray runner needs ray (pip install 'evotrainer[ray]')")
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def minutes_server():
    task = RecordingMeetingTask()

    def answer(body):
        content = body["messages"][-1]["content"]
        meeting = task.by_prompt.get(content)
        return honest_minutes(meeting) if meeting is not None else "Write clear minutes."

    with LatencyServer(latency_s=0.01, answer=answer) as server:
        yield task, server


def _run(tmp_path, name, task, server, runner, concurrency=2):
    cfg = small_config(
        tmp_path / f"{name}.sqlite",
        model={"spec": "openai:m", "base_url": server.url, "concurrency": concurrency},
        runner=runner,
        ray={"workers": 2, "num_cpus": 0.5},
    )
    co = CoEvolution(cfg, task=task)
    co.run(tmp_path / name)
    return co, comparable_summary(tmp_path / name)


def test_the_ray_runner_end_to_end(tmp_path, local_ray, minutes_server, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    task, server = minutes_server
    co, summary = _run(tmp_path, "ray", task, server, "ray")
    pool = co.components.stack.backend
    assert type(pool).__name__ == "RayPoolLLM" and len(pool.workers) == 2
    assert co.components.stack.client.parallel_requests == 4  # 2 workers x model.concurrency 2
    assert summary["stopped"] == "completed" and summary["llm_calls"] > 20
    runtime = json.loads((tmp_path / "ray" / "summary.json").read_text())["runtime"]
    assert runtime["backend_calls"] == summary["llm_calls"] and runtime["llm_errors"] == 0
    pool.close()

    # the same run without Ray (the HTTP client in this process, as wide): the same result
    _, direct = _run(tmp_path, "direct", task, server, "auto", concurrency=4)
    assert direct == summary

    # a rerun on the driver's cache: no call reaches a worker
    before = server.requests
    co2 = CoEvolution(co.components.cfg, task=task)
    co2.run(tmp_path / "rerun")
    assert server.requests == before and co2.components.budget.backend_calls == 0
    assert comparable_summary(tmp_path / "rerun") == summary
    co2.components.stack.backend.close()

    # the call cap holds exactly with 4 requests in flight at a time
    cfg = co.components.cfg.model_copy(deep=True)
    cfg.cache.path = str(tmp_path / "capped.sqlite")
    cfg.budget.max_calls = 30
    cfg.budget.reserve_final = False
    co3 = CoEvolution(cfg, task=task)
    co3.run(tmp_path / "capped")
    assert co3.components.budget.backend_calls == 30 and co3.components.budget.in_flight == 0
    co3.components.stack.backend.close()
