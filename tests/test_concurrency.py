"""Concurrency and batching (issue 12): the caps hold under many workers, a stop in the middle of
a batch keeps the finished rollouts, prompts sharing an instance reach a batching backend as one
group, the async path against a latency server, one request per pair in flight."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from evotrainer.config import CacheConfig
from evotrainer.errors import BudgetExceeded
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.runner import AsyncRunner, SerialRunner, ThreadRunner, runner_for
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.budget import Budget, MeteredLLM
from evotrainer.llm.fake_server import LatencyServer
from evotrainer.llm.fakes import BatchingLLM, ConcurrentLLM, FunctionLLM
from evotrainer.llm.openai_http import OpenAICompatibleLLM
from evotrainer.llm.spec import build_stack
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.meetings.seeds import seed_policies
from evotrainer.types import Message
from tests.fake_meetings import RecordingMeetingTask, family_llm

MSG = [Message("user", "hello")]


# -- the budget ---------------------------------------------------------------------------
def test_call_and_token_caps_hold_with_many_threads():
    fake = FunctionLLM(lambda m, p: (time.sleep(0.002), "x" * 40)[1])
    budget = Budget(max_calls=60, max_tokens=3000)
    client = MeteredLLM(fake, budget)
    params = SamplingParams(max_tokens=16)  # bound 97 tokens a call, costs 11
    stopped = []

    def worker():
        try:
            while True:
                client.complete(MSG, params)
        except BudgetExceeded:
            stopped.append(1)

    threads = [threading.Thread(target=worker) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(stopped) == 32
    assert fake.calls == budget.backend_calls <= 60 and budget.backend_tokens <= 3000
    assert budget.in_flight == 0 and budget.in_flight_tokens == 0


@pytest.mark.parametrize("cap", [{"max_calls": 40}, {"max_tokens": 1500}])
def test_caps_hold_for_many_coroutines(cap):
    fake = ConcurrentLLM(lambda m, p: "x" * 40, parallel_requests=200, latency_s=0.005)
    budget = Budget(**cap)
    client = MeteredLLM(fake, budget)
    params = SamplingParams(max_tokens=16)

    async def all_at_once():
        return await asyncio.gather(
            *(client.acomplete(MSG, params) for _ in range(200)), return_exceptions=True
        )

    results = asyncio.run(all_at_once())
    ok = [r for r in results if not isinstance(r, BaseException)]
    assert all(isinstance(r, BudgetExceeded) for r in results if isinstance(r, BaseException))
    assert fake.max_active > 10  # they really were in flight together
    assert len(ok) == fake.calls == budget.backend_calls
    assert budget.backend_calls <= cap.get("max_calls", 10**9)
    assert budget.backend_tokens <= cap.get("max_tokens", 10**9)
    assert budget.in_flight == 0 and budget.in_flight_tokens == 0


def test_a_batch_is_cut_where_the_budget_ends():
    fake = BatchingLLM(lambda m, p: "x" * 40, batch_size=10)
    budget = Budget(max_tokens=300)  # 3 prompts of bound 97 fit
    client = MeteredLLM(fake, budget)
    results = client.complete_batch([MSG] * 10, SamplingParams(max_tokens=16))
    assert [type(r).__name__ for r in results] == ["Completion"] * 3 + ["BudgetExceeded"] * 7
    assert fake.batches == [3] and budget.backend_tokens <= 300 and budget.in_flight == 0


# -- the evaluator ------------------------------------------------------------------------
def _setup(kind: str, max_calls: int | None = None, cache: CacheConfig | None = None):
    task = RecordingMeetingTask()
    answer = family_llm(task).fn
    if kind == "batched":
        llm = BatchingLLM(answer, batch_size=4)
    elif kind in ("threads", "async"):
        llm = ConcurrentLLM(answer, parallel_requests=4, latency_s=0.005)
    else:
        llm = FunctionLLM(answer)
    stack = build_stack(llm, cache or CacheConfig(enabled=False), Budget(max_calls=max_calls))
    runner = {"threads": ThreadRunner(4), "async": AsyncRunner(4)}.get(kind, SerialRunner())
    ev = Evaluator(task, stack.client, SamplingParams(), runner)
    return task, llm, stack, ev


def _policies(n: int) -> list[PolicyGenome]:
    seeds = seed_policies()
    return [PolicyGenome.from_text(f"{seeds[i % 3].render()} (variant {i})") for i in range(n)]


@pytest.mark.parametrize("kind", ["serial", "threads", "async", "batched"])
def test_a_stop_mid_batch_keeps_the_finished_rollouts(kind):
    task, llm, stack, ev = _setup(kind, max_calls=7)
    instances = task.synthetic_validation(4, 1)
    with pytest.raises(BudgetExceeded):
        ev.evaluate(_policies(3), instances)  # 12 jobs, 7 calls allowed
    assert len(ev.store) == stack.budget.backend_calls == llm.calls == 7
    assert all(rec.rollout.error is None and rec.rollout.output for rec in ev.store.values())
    # what the cap stopped is asked again later, nothing twice
    stack.budget.max_calls = None
    ev.evaluate(_policies(3), instances)
    assert len(ev.store) == 12 and llm.calls == 12


@pytest.mark.parametrize(
    ("n_policies", "n_instances", "batches"),
    [
        (6, 3, [4, 4, 4, 3, 3]),  # 18 prompts, batch_size 4: split evenly over 5 groups
        (2, 3, [3, 3]),  # a racing rung: 2 policies on 3 meetings fill groups across meetings
        (1, 1, []),  # one prompt goes the one-at-a-time way
    ],
)
def test_prompts_reach_a_batching_backend_in_full_groups(n_policies, n_instances, batches):
    task, llm, stack, ev = _setup("batched")
    instances = task.synthetic_validation(n_instances, 2)
    records = ev.evaluate(_policies(n_policies), instances)
    assert llm.batches == batches
    serial_task, _, _, serial = _setup("serial")
    expected = serial.evaluate(
        _policies(n_policies), serial_task.synthetic_validation(n_instances, 2)
    )
    assert {k: r.vector for k, r in records.items()} == {k: r.vector for k, r in expected.items()}


def test_groups_keep_each_instances_jobs_side_by_side():
    from types import SimpleNamespace as NS

    from evotrainer.evaluation.dispatch import units

    jobs = [(NS(id=f"p{p}"), NS(id=f"m{m}")) for p in range(3) for m in range(2)]  # policy-major
    groups = units(jobs, 4)
    assert [len(g) for g in groups] == [3, 3]
    flat = [(j[1].id, j[0].id) for g in groups for j in g]
    assert flat == [(m, p) for m in ("m0", "m1") for p in ("p0", "p1", "p2")]
    assert [len(g) for g in units(jobs, 1)] == [1] * 6


def test_a_budget_stop_in_a_batch_counts_like_one_at_a_time(tmp_path):
    snapshots = []
    for kind in ("serial", "batched"):
        cache = CacheConfig(path=str(tmp_path / f"{kind}.sqlite"))
        task, _, stack, ev = _setup(kind, cache=cache)
        instances = task.synthetic_validation(3, 4)
        ev.evaluate(_policies(2), instances[:1])  # cached answers for the first instance
        task, _, stack, ev = _setup(kind, max_calls=5, cache=cache)
        with pytest.raises(BudgetExceeded):
            ev.evaluate(_policies(4), task.synthetic_validation(3, 4))
        snap = stack.budget.snapshot()
        snap.pop("llm_seconds")
        snapshots.append((snap, sorted(ev.store)))
    assert snapshots[0] == snapshots[1]


def test_one_request_per_pair_when_two_threads_evaluate_it():
    task, llm, stack, ev = _setup("threads")
    llm.latency_s = 0.02
    instances = task.synthetic_validation(3, 5)
    policies = _policies(4)
    threads = [threading.Thread(target=ev.evaluate, args=(policies, instances)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ev.store) == 12 and llm.calls == 12


def test_the_async_path_against_a_latency_server():
    task = RecordingMeetingTask()
    with LatencyServer(latency_s=0.05) as server:
        llm = OpenAICompatibleLLM("fake", base_url=server.url, concurrency=8)
        stack = build_stack(llm, CacheConfig(enabled=False), Budget())
        runner = runner_for(stack.client)
        assert isinstance(runner, AsyncRunner) and runner.concurrency == 8
        ev = Evaluator(task, stack.client, SamplingParams(), runner)
        ev.evaluate(_policies(4), task.synthetic_validation(6, 6))
    # requests overlapped (timings are benchmarks/concurrency.py's business, not a test's)
    assert server.requests == 24 and 1 < server.max_active <= 8
    assert all(rec.rollout.error is None for rec in ev.store.values())


# -- the engine on a backend that serves parallel requests ---------------------------------
def _concurrent_run(tmp_path, name: str, width: int, **sections):
    from evotrainer.coevolution import CoEvolution
    from tests.fake_runs import comparable_summary, small_config

    task = RecordingMeetingTask()
    answer = family_llm(task).fn
    operator = {"active": 0, "max": 0}
    lock = threading.Lock()

    def fn(messages, params):
        if messages[-1].content in task.by_prompt:
            return answer(messages, params)
        with lock:  # an operator call: slow, so that overlapping calls show
            operator["active"] += 1
            operator["max"] = max(operator["max"], operator["active"])
        time.sleep(0.02)
        with lock:
            operator["active"] -= 1
        return answer(messages, params)

    llm = ConcurrentLLM(fn, parallel_requests=width, latency_s=0.002)
    cfg = small_config(tmp_path / f"{name}.sqlite", **sections)
    events = []
    co = CoEvolution(cfg, task=task, llm=llm, observers=[events.append])
    co.run(tmp_path / name)
    return comparable_summary(tmp_path / name), llm, operator, events


@pytest.mark.parametrize("surrogate", [False, True])
def test_operators_and_trials_run_concurrently_with_the_same_result(tmp_path, surrogate):
    ops = {"llm_paraphrase": 3.0, "llm_merge": 1.0, "synonym": 1.0}
    sur = {"enabled": surrogate, "min_train": 3, "min_spearman": -1.0}
    # rerun: a trial run per variant, run concurrently (rerank has one trial run per step)
    kw = {"inner": {"operators": ops}, "surrogate": sur, "outer": {"trials": "rerun"}}
    a, llm, operator, events = _concurrent_run(tmp_path, "w4", 4, **kw)
    b, _, _, _ = _concurrent_run(tmp_path, "w8", 8, **kw)
    assert a == b  # the result does not depend on how many requests run at once
    assert a["stopped"] == "completed" and a["outer_steps"] >= 1
    assert llm.max_active > 1 and operator["max"] > 1  # evaluations and operator calls overlapped
    kinds = [(e.type, e.data.get("trial")) for e in events if e.type.startswith("trial_")]
    first_finish = next(i for i, k in enumerate(kinds) if k[0] == "trial_finished")
    assert sum(1 for k in kinds[:first_finish] if k[0] == "trial_started") >= 2  # overlapped
