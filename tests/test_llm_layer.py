"""The LLM layer: fakes, cache, budget, spec errors, the HTTP client's retries."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evotrainer.config import CacheConfig, ModelConfig
from evotrainer.errors import BudgetExceeded, ContextOverflowError, LLMError, ModelSpecError
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.budget import Budget
from evotrainer.llm.fakes import FunctionLLM, ScriptedLLM
from evotrainer.llm.openai_http import OpenAICompatibleLLM
from evotrainer.llm.spec import build_backend, build_stack
from evotrainer.types import Message

MSG = [Message("user", "hello")]


def test_cached_rerun_makes_zero_backend_calls(tmp_path):
    fake = FunctionLLM(lambda m, p: f"answer to {m[-1].content} t={p.temperature}")
    cfg = CacheConfig(path=str(tmp_path / "c.sqlite"))
    stack = build_stack(fake, cfg, Budget())
    prompts = [[Message("user", f"q{i}")] for i in range(5)]
    first = [stack.client.complete(m, SamplingParams(seed=1)) for m in prompts]
    assert fake.calls == 5
    # a new stack over the same cache file = a rerun in a new process
    stack2 = build_stack(fake, cfg, Budget())
    second = [stack2.client.complete(m, SamplingParams(seed=1)) for m in prompts]
    assert fake.calls == 5, "a cached rerun must not call the backend"
    assert [c.text for c in first] == [c.text for c in second]
    assert all(c.cached for c in second)
    assert stack2.budget.cache_hits == 5 and stack2.budget.backend_calls == 0
    assert stack2.budget.llm_calls == 5  # requests are still counted
    # a different seed is a different request
    stack2.client.complete(prompts[0], SamplingParams(seed=2))
    assert fake.calls == 6


def test_errors_are_not_cached(tmp_path):
    state = {"fail": True}

    def fn(m, p):
        if state["fail"]:
            raise LLMError("server down")
        return "ok"

    fake = FunctionLLM(fn)
    stack = build_stack(fake, CacheConfig(path=str(tmp_path / "c.sqlite")), Budget())
    with pytest.raises(LLMError):
        stack.client.complete(MSG, SamplingParams())
    state["fail"] = False
    assert stack.client.complete(MSG, SamplingParams()).text == "ok"
    assert stack.budget.llm_errors == 1


def test_budget_cap_stops_with_clear_message():
    stack = build_stack(
        ScriptedLLM(["a"], cycle=True), CacheConfig(enabled=False), Budget(max_calls=2)
    )
    stack.client.complete(MSG, SamplingParams())
    stack.client.complete(MSG, SamplingParams())
    with pytest.raises(BudgetExceeded, match="max_calls=2"):
        stack.client.complete(MSG, SamplingParams())


def test_token_cap_is_never_passed():
    """A call is refused when it could pass the cap: its prompt bound plus max_tokens."""
    budget = Budget(max_tokens=150)
    stack = build_stack(FunctionLLM(lambda m, p: "x" * 40), CacheConfig(enabled=False), budget)
    params = SamplingParams(max_tokens=16)
    with pytest.raises(BudgetExceeded, match="max_tokens=150"):
        for _ in range(100):
            stack.client.complete(MSG, params)
    assert budget.backend_calls == 5 and budget.backend_tokens == 55 <= 150
    assert budget.in_flight == 0 and budget.in_flight_tokens == 0


def test_budget_snapshot_restore_roundtrip():
    b = Budget()
    b.llm_calls, b.prompt_tokens, b.llm_seconds = 3, 100, 1.5
    c = Budget()
    c.restore(b.snapshot())
    assert c.snapshot() == b.snapshot()


@pytest.mark.parametrize("spec", ["nonsense", "local:", "openai:", "local:/tmp/model.bin", "hf:x"])
def test_bad_model_spec_lists_valid_forms(spec):
    with pytest.raises(ModelSpecError, match="local:smollm2"):
        build_backend(ModelConfig(spec=spec))


def test_unknown_requantized_format_names_the_valid_ones(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTRAINER_CACHE_DIR", str(tmp_path))
    with pytest.raises(ModelSpecError, match="smollm2-q4_0"):
        build_backend(ModelConfig(spec="local:smollm2-q3"))
    assert not (tmp_path / "models").exists()


def test_missing_gguf_names_the_file():
    with pytest.raises(ModelSpecError, match="/no/such/model.gguf"):
        build_backend(ModelConfig(spec="local:/no/such/model.gguf"))


def test_scripted_llm_runs_out():
    s = ScriptedLLM(["one"])
    assert s.complete(MSG, SamplingParams()).text == "one"
    with pytest.raises(LLMError):
        s.complete(MSG, SamplingParams())


# -- HTTP client against a local stub server ------------------------------------------------
class _Stub(BaseHTTPRequestHandler):
    script: list[tuple[int, str]] = []
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Stub.seen.append(body)
        status, text = _Stub.script.pop(0) if _Stub.script else (200, "fallback")
        if status == 200 and text != "GARBAGE":
            payload = {
                "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3},
            }
            data = json.dumps(payload).encode()
        else:
            data = text.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def stub_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Stub.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_http_retries_on_503_and_garbage(stub_server):
    _Stub.script = [(503, "busy"), (200, "GARBAGE"), (200, "done")]
    llm = OpenAICompatibleLLM("m", base_url=stub_server, backoff_s=0.01, max_retries=3)
    c = llm.complete(MSG, SamplingParams(seed=5, max_tokens=9))
    assert c.text == "done" and c.prompt_tokens == 7 and c.completion_tokens == 3
    assert len(_Stub.seen) == 3
    assert _Stub.seen[-1]["seed"] == 5 and _Stub.seen[-1]["max_tokens"] == 9


def test_http_gives_up_naming_the_endpoint(stub_server):
    _Stub.script = [(500, "boom")] * 3
    llm = OpenAICompatibleLLM("m", base_url=stub_server, backoff_s=0.01, max_retries=2)
    with pytest.raises(LLMError, match=stub_server):
        llm.complete(MSG, SamplingParams())


def test_http_context_overflow_is_not_retried(stub_server):
    _Stub.script = [(400, '{"error": "This model\'s maximum context length is 2048 tokens"}')]
    llm = OpenAICompatibleLLM("m", base_url=stub_server, backoff_s=0.01)
    with pytest.raises(ContextOverflowError):
        llm.complete(MSG, SamplingParams())
    assert len(_Stub.seen) == 1


def test_http_server_down():
    llm = OpenAICompatibleLLM("m", base_url="http://127.0.0.1:9/v1", backoff_s=0.01, max_retries=1)
    with pytest.raises(LLMError, match="127.0.0.1:9"):
        llm.complete(MSG, SamplingParams())


def test_http_async_path(stub_server):
    import asyncio

    _Stub.script = [(429, "slow down"), (200, "async ok")]
    llm = OpenAICompatibleLLM("m", base_url=stub_server, backoff_s=0.01)
    assert asyncio.run(llm.acomplete(MSG, SamplingParams())).text == "async ok"


def test_env_base_url(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1234/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    llm = OpenAICompatibleLLM("m")
    assert llm.base_url == "http://127.0.0.1:1234/v1" and llm.api_key == "k"


def test_http_extra_body_is_sent_but_cannot_override_run_fields(stub_server):
    _Stub.script = [(200, "ok")]
    cfg = ModelConfig(
        spec="openai:m",
        base_url=stub_server,
        extra_body={"repeat_penalty": 1.0, "max_tokens": 9999},
    )
    llm = build_backend(cfg)
    llm.complete(MSG, SamplingParams(max_tokens=9))
    sent = _Stub.seen[-1]
    assert sent["repeat_penalty"] == 1.0 and sent["max_tokens"] == 9
    plain = OpenAICompatibleLLM("m", base_url=stub_server)
    assert llm.model_id != plain.model_id  # other sampling fields: separate cache entries


def test_http_sends_a_policys_penalties_and_they_win_over_extra_body(stub_server):
    """The decoding genes reach a server: OpenAI's penalties as themselves, the repetition
    penalty as llama.cpp's server and vLLM name it; model.extra_body cannot override them, and
    a penalty that is off is not sent (OpenAI itself rejects unknown fields)."""
    _Stub.script = [(200, "ok"), (200, "ok")]
    cfg = ModelConfig(spec="openai:m", base_url=stub_server, extra_body={"repeat_penalty": 1.0})
    llm = build_backend(cfg)
    params = SamplingParams(repeat_penalty=1.15, frequency_penalty=0.2, presence_penalty=0.3)
    llm.complete(MSG, params)
    sent = _Stub.seen[-1]
    assert sent["repeat_penalty"] == 1.15 and sent["repetition_penalty"] == 1.15
    assert sent["frequency_penalty"] == 0.2 and sent["presence_penalty"] == 0.3
    OpenAICompatibleLLM("m", base_url=stub_server).complete(MSG, SamplingParams())
    plain = _Stub.seen[-1]
    assert not {"repeat_penalty", "repetition_penalty", "frequency_penalty"} & set(plain)
