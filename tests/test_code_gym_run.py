"""The code gym end to end on fakes: a co-evolution run with multi-turn rollouts in the real
sandbox, its report, resume-ready run directory, and ``evotrainer run --task code`` against an
OpenAI-compatible fake server. The embedded model's run is in test_real_models.py (slow)."""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.coevolution import CoEvolution
from evotrainer.config import RunConfig, config_from_dict, load_config
from evotrainer.report.build import build_report
from evotrainer.types import Message
from tests.fake_code import code_llm
from tests.support import REPO, needs_sandbox

pytestmark = needs_sandbox


def code_config(tmp_path: Path, **sections: Any) -> RunConfig:
    data: dict[str, Any] = {
        "seed": 2,
        "cache": {"path": str(tmp_path / "cache.sqlite")},
        "task": {"name": "code", "turns": 2},
        "inner": {"population": 4, "elites": 2, "tasks_per_generation": 3, "generations": 4},
        "outer": {"every": 2, "variants": 2},
        "harness": {"difficulty": 0.3},
        "validation": {"data": None, "synthetic_size": 4, "confirm": 0},
    }
    for key, value in sections.items():
        if isinstance(value, dict) and value:
            data.setdefault(key, {}).update(value)
        else:
            data[key] = value
    return config_from_dict(data)


def _events(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def test_the_code_task_takes_its_own_defaults():
    cfg = config_from_dict({"task": {"name": "code"}})
    assert cfg.task.turns == 2 and cfg.task.sandbox == "auto"
    assert "visible_tests" in cfg.harness.weights and "completeness" not in cfg.harness.weights
    assert cfg.outer.s_val_weights == {"pass_at_1": 0.5, "tests_passed": 0.5}
    assert cfg.validation.data.endswith("code/humaneval-dev.jsonl")
    assert cfg.defences.terminal_share == 0.2
    meetings = RunConfig()
    assert "completeness" in meetings.harness.weights and meetings.task.name == "meetings"


def test_configs_code_yaml_is_valid():
    cfg = load_config(REPO / "configs" / "code.yaml")
    assert cfg.task.name == "code"


def test_a_code_gym_run_end_to_end_on_a_fake(tmp_path):
    cfg = code_config(tmp_path)
    co = CoEvolution(cfg, llm=code_llm())
    result = co.run(tmp_path / "run")
    summary = result.summary
    assert summary["stopped"] == "completed" and summary["generations"] == 4
    assert summary["validation"]["synthetic"] is True
    assert set(summary["final_aggregates"]) >= {"pass_at_1", "tests_passed"}
    assert 0.0 < result.best_s_val <= 1.0
    events = _events(tmp_path / "run")
    gens = [e for e in events if e["type"] == "generation"]
    assert "visible_tests" in gens[-1]["best_components"]
    assert any(e["type"] == "outer_step" for e in events)
    assert co.components.task.sandbox.executions > 0
    # multi-turn episodes were played (the stub answers fail their examples and are revised)
    turns = [
        len(rec.rollout.turns)
        for rec in co.components.evaluator.store.values()
        if rec.rollout.turns
    ]
    assert turns and max(turns) == 2
    page = build_report(tmp_path / "run").read_text()
    assert "visible_tests" in page and "pass_at_1" in page
    assert "best policy&#x27;s code" in page or "best policy's code" in page
    assert "Best policy on validation problems" in page
    saved = json.loads((tmp_path / "run" / "best" / "validation.json").read_text())
    assert saved


def test_a_code_gym_run_resumes(tmp_path):
    from tests.fake_runs import Killed, kill_at

    cfg = code_config(tmp_path)
    with contextlib.suppress(Killed):
        CoEvolution(cfg, llm=code_llm(), observers=[kill_at("generation", 3)]).run(tmp_path / "run")
    co, path = CoEvolution.resume(tmp_path / "run", llm=code_llm())
    result = co.run(path)
    assert result.summary["generations"] == 4


class _CodeServer(BaseHTTPRequestHandler):
    llm = code_llm()

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        messages = [Message(m["role"], m["content"]) for m in body["messages"]]
        text = self.llm.fn(messages, None)
        data = json.dumps(
            {
                "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_evotrainer_run_task_code_on_a_fake_server(tmp_path):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _CodeServer)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        sets = [
            "inner.population=4",
            "inner.elites=2",
            "inner.tasks_per_generation=2",
            "inner.generations=2",
            "outer.every=1",
            "outer.variants=1",
            "validation.data=null",
            "validation.synthetic_size=3",
            "validation.confirm=0",
            f"cache.path={tmp_path / 'c.sqlite'}",
        ]
        argv = ["run", "--task", "code", "--model", "openai:fake", "--base-url", url]
        argv += [x for s in sets for x in ("--set", s)] + ["--run-dir", str(tmp_path / "run")]
        res = CliRunner().invoke(app, argv)
        assert res.exit_code == 0, res.output
        assert "final" in res.output.lower()
        assert (tmp_path / "run" / "report" / "index.html").is_file()
        saved = load_config(tmp_path / "run" / "config.yaml")
        assert saved.task.name == "code" and saved.task.turns == 2
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_same_seed_same_code_gym_run(tmp_path):
    """Determinism (principle 6) with the sandbox in the loop: two runs with the same seed and
    the same scripted model end with the same summary."""
    from tests.fake_runs import comparable_summary

    for name in ("a", "b"):
        cfg = code_config(tmp_path / name, report=False)
        CoEvolution(cfg, llm=code_llm()).run(tmp_path / name / "run")
    assert comparable_summary(tmp_path / "a" / "run") == comparable_summary(tmp_path / "b" / "run")


def test_a_call_cap_still_leaves_the_final_validation_its_turns(tmp_path):
    """budget.reserve_final holds back a validation's calls, counted with the task's turns (a
    multi-turn rollout makes up to task.turns calls)."""
    cfg = code_config(
        tmp_path,
        budget={"max_calls": 70},
        inner={"population": 4, "elites": 2, "tasks_per_generation": 3, "generations": 20},
    )
    co = CoEvolution(cfg, llm=code_llm())
    assert co.components.budget.reserve == 2 * len(co.components.validation_set.selection)
    result = co.run(tmp_path / "run")
    assert result.summary["stopped"] == "budget"
    assert result.summary["last_best_s_val"] is not None
    assert co.components.budget.snapshot()["backend_calls"] <= 70


def test_evotrainer_eval_task_code_reports_pass_at_1(tmp_path):
    """`evotrainer eval --task code` on a problem file (here generated problems written in the
    loader's format), with the code task's seeds by name."""
    import random

    from evotrainer.tasks.code.generator import CodeGenerator

    data = tmp_path / "problems.jsonl"
    problems = CodeGenerator().sample(3, 0.3, random.Random(0))
    data.write_text("".join(json.dumps(i.payload.to_json()) + "\n" for i in problems))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _CodeServer)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        out = tmp_path / "eval.json"
        argv = ["eval", "--task", "code", "--data", str(data), "--prompt", "seed:A"]
        argv += ["--prompt", "seed:B", "--model", "openai:fake", "--base-url", url]
        argv += ["--set", f"cache.path={tmp_path / 'c.sqlite'}", "--out", str(out)]
        res = CliRunner().invoke(app, argv)
        assert res.exit_code == 0, res.output
        assert "pass_at_1" in res.output
        doc = json.loads(out.read_text())
        assert [p["label"] for p in doc["policies"]] == ["seed:A", "seed:B"]
        assert all(0.0 <= p["pass_at_1"] <= 1.0 for p in doc["policies"])
    finally:
        httpd.shutdown()
        httpd.server_close()
