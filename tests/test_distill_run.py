"""Distillation as a step of the run (issue 31), with fakes: a fake training that writes an
adapter file, and a fake model that answers better when a policy carries the adapter. The real
training and serving stacks are tested in tests/test_distill.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evotrainer.coevolution import CoEvolution
from evotrainer.config import config_from_dict
from evotrainer.distill import extra
from evotrainer.engine import distill_step
from evotrainer.errors import ConfigError
from evotrainer.llm.fakes import FunctionLLM
from tests.fake_meetings import RecordingMeetingTask, honest_minutes, write_corpus
from tests.fake_runs import Killed


def weak_llm(task: RecordingMeetingTask) -> FunctionLLM:
    """Half-minutes for every policy (the base model)."""

    def answer(messages, params):
        meeting = task.by_prompt.get(messages[-1].content)
        if meeting is None:
            return "Write the minutes with the decisions and owners."
        lines = honest_minutes(meeting).splitlines()
        return "\n".join(lines[: max(3, len(lines) // 3)])

    return FunctionLLM(answer, model_id="fake:weak")


def strong_llm(task: RecordingMeetingTask) -> FunctionLLM:
    """Whole minutes (the adapter's model)."""

    def answer(messages, params):
        meeting = task.by_prompt.get(messages[-1].content)
        return honest_minutes(meeting) if meeting is not None else "Write the minutes."

    return FunctionLLM(answer, model_id="fake:strong")


class _Calls(list):
    def __init__(self) -> None:
        super().__init__()
        self.starts: list[str | None] = []


@pytest.fixture()
def fake_training(monkeypatch):
    """train_adapter writes a file of the pairs' text, named by its hash; records the calls
    (the pairs' count) and, in ``calls.starts``, the sha256 of the adapter each started from."""
    calls = _Calls()

    def train(pairs, settings, out_dir, progress=None, start_from=None):
        data = json.dumps([p.to_dict() for p in pairs]).encode()
        sha = hashlib.sha256(data).hexdigest()
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / f"{sha}.gguf").write_bytes(data)
        calls.append(len(pairs))
        # the bytes it started from, by their hash (the engine hands it a verified copy)
        calls.starts.append(
            None
            if start_from is None
            else hashlib.sha256(Path(start_from).read_bytes()).hexdigest()
        )
        if progress is not None:
            progress(type("P", (), {"step": 1, "steps": 1, "loss": 1.0, "tokens_per_s": 1.0,
                                    "eta_s": 0.0})())  # fmt: skip
        return type("R", (), {"sha256": sha, "to_dict": lambda self: {"sha256": sha}})()

    import evotrainer.distill.train as train_module

    monkeypatch.setattr(train_module, "train_adapter", train)
    monkeypatch.setattr(extra, "installed", lambda: True)
    return calls


def config(tmp_path, **distill):
    corpus = write_corpus(tmp_path / "train.jsonl", 10, seed=5)
    val = write_corpus(tmp_path / "val.jsonl", 8, seed=6)
    return config_from_dict(
        {
            "seed": 3,
            "cache": {"path": str(tmp_path / "cache.sqlite")},
            "report": False,
            "inner": {"population": 4, "elites": 2, "tasks_per_generation": 3, "generations": 5},
            "outer": {"enabled": False},
            "harness": {"real_data": str(corpus)},
            "validation": {"data": str(val), "confirm": 3},
            "distill": {"enabled": True, "after": 2, "min_pairs": 2, **distill},
        }
    )


def run(tmp_path, cfg, name="run", adapter_llm=strong_llm):
    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=weak_llm(task))
    better = adapter_llm(task)
    co._adapter_client = lambda sha: better  # noqa: SLF001 - the fake serving stack
    co.components.evaluator.adapters = co._adapter_client
    return co, co.run(tmp_path / name)


def events(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]


def test_a_distilled_adapter_that_validates_better_is_carried_by_the_population(
    tmp_path, fake_training
):
    co, result = run(tmp_path, config(tmp_path))
    assert fake_training, "an adapter was trained"
    (record,) = result.summary["distillations"]
    assert record["kept"] and record["adapter"] and record["pairs"]["pairs"] >= 2
    assert record["validation"]["with_adapter"]["s_val"] > record["validation"]["without"]["s_val"]
    assert all(p.adapter == record["adapter"] for p in co.state.inner.population)
    assert result.best.adapter == record["adapter"]
    assert any(p.lineage.operator == "distill" for p in co.state.inner.population)
    types = [e["type"] for e in events(tmp_path / "run")]
    assert types.index("distill_started") < types.index("distill_progress")
    assert types.index("distill_progress") < types.index("distill_finished")
    best = json.loads((tmp_path / "run" / "best" / "policy.json").read_text())
    assert best["adapter"] == record["adapter"]
    effect = result.summary["adapter_effect"]  # the same text with and without its adapter
    assert effect["adapter"] == record["adapter"]
    for part in ("selection", "confirmation"):
        assert effect[part]["with"] > effect[part]["without"]


def test_the_report_shows_the_distillation(tmp_path, fake_training):
    from evotrainer.report.build import build_report

    run(tmp_path, config(tmp_path))
    index = build_report(tmp_path / "run")
    html = index.read_text()
    assert "Distillation: the adapter the population carries" in html
    assert "with and without its adapter" in html and "kept when the harness ranks it high" in html
    assert (index.parent / "distill_loss.png").is_file()


def test_an_adapter_that_does_not_validate_better_is_set_aside(tmp_path, fake_training):
    co, result = run(tmp_path, config(tmp_path), adapter_llm=weak_llm)
    (record,) = result.summary["distillations"]
    assert not record["kept"] and "set aside" in record["why"]
    assert all(p.adapter is None for p in co.state.inner.population)


def test_pairs_are_the_best_rewarded_answers_and_say_why(tmp_path, fake_training):
    _, result = run(tmp_path, config(tmp_path, keep_share=0.5, fresh_instances=4))
    pairs = result.summary["distillations"][0]["pairs"]
    kept, dropped = pairs["kept"], pairs["dropped"]
    assert kept and dropped and len(kept) == pairs["from_policies"]
    # ranked against the answers scored on the same reward components (synthetic meetings
    # have no reference to be scored on)
    for scale in {tuple(r["scale"]) for r in dropped}:
        same = [k["reward"] for k in kept if tuple(k["scale"]) == scale]
        assert min(same) >= max(d["reward"] for d in dropped if tuple(d["scale"]) == scale)
    assert all("below" in d["why"] for d in dropped)
    assert pairs["references"] >= 1  # the real pool carries references: its share joined


def test_a_distillation_the_calls_left_cannot_pay_for_is_skipped_and_says_so(
    tmp_path, fake_training, monkeypatch
):
    """Under a call budget, a distillation costing more than is left trains nothing (an
    adapter nobody could validate), records why, and the run goes on to its last generation;
    an outer step due after the same generation leaves the distillation its calls."""
    from evotrainer.engine import outer_step

    for module in (distill_step, outer_step):
        monkeypatch.setattr(module, "distill_cost", lambda c, s=None: 10**6)
    cfg = config(tmp_path)
    cfg = cfg.model_copy(
        update={
            "budget": cfg.budget.model_copy(update={"max_calls": 5000}),
            "outer": cfg.outer.model_copy(update={"enabled": True, "every": 2}),
        }
    )
    co, result = run(tmp_path, cfg)
    assert not fake_training, "no adapter trained"
    (record,) = result.summary["distillations"]
    assert not record["kept"] and record["adapter"] is None
    assert record["why"].startswith("skipped: a distillation may cost 1000000 LLM calls")
    assert result.summary["generations"] == cfg.inner.generations
    skipped = [e for e in events(tmp_path / "run") if e["type"] == "outer_step_skipped"]
    assert [e["generation"] for e in skipped] == [2]  # the distillation's generation only


def test_a_distillation_within_the_budget_runs(tmp_path, fake_training):
    cfg = config(tmp_path)
    cfg = cfg.model_copy(update={"budget": cfg.budget.model_copy(update={"max_calls": 5000})})
    _, result = run(tmp_path, cfg)
    assert fake_training and result.summary["distillations"][0]["adapter"]


def test_a_run_killed_during_training_resumes_and_trains_it_again(tmp_path, fake_training):
    cfg = config(tmp_path)
    first = len(fake_training)
    original = distill_step.DistillStep._train_adapter

    def killed(self, choice):
        raise Killed()

    distill_step.DistillStep._train_adapter = killed
    try:
        with pytest.raises(Killed):
            run(tmp_path, cfg, "killed")
    finally:
        distill_step.DistillStep._train_adapter = original
    task = RecordingMeetingTask()
    co, _ = CoEvolution.resume(tmp_path / "killed", task=task, llm=weak_llm(task))
    better = strong_llm(task)
    co._adapter_client = lambda sha: better  # noqa: SLF001
    co.components.evaluator.adapters = co._adapter_client
    result = co.run(tmp_path / "killed")
    assert len(fake_training) == first + 1  # trained after the resume
    assert result.summary["distillations"][0]["kept"]
    assert result.best.adapter is not None  # the genome with its adapter survived the resume


def test_distillation_without_the_extra_is_a_clear_start_up_error(tmp_path, monkeypatch):
    monkeypatch.setattr(extra, "installed", lambda: False)
    monkeypatch.setattr(
        extra.importlib, "import_module", lambda name: (_ for _ in ()).throw(ImportError(name))
    )
    with pytest.raises(ConfigError, match=r"pip install 'evotrainer\[distill\]'"):
        CoEvolution(config(tmp_path), task=RecordingMeetingTask(), llm=weak_llm(None))


def test_a_population_carrying_an_adapter_survives_a_kill_and_resume(
    tmp_path, fake_training, monkeypatch
):
    """The adapter is served from the run directory's adapters/ (verified by hash) when the
    resume re-reads the population, and is not trained again."""
    import evotrainer.distill.serve as serve
    from tests.fake_runs import kill_at

    task = RecordingMeetingTask()
    served: list[str] = []

    def embedded_with_adapter(path, sha, model=None, seed=0):
        from evotrainer.llm.adapter_file import verify_adapter

        served.append(verify_adapter(path, sha))
        return strong_llm(task)

    monkeypatch.setattr(serve, "embedded_with_adapter", embedded_with_adapter)
    cfg = config(tmp_path)
    co = CoEvolution(
        cfg, task=task, llm=weak_llm(task), observers=[kill_at("generation", generation=3)]
    )
    with pytest.raises(Killed):
        co.run(tmp_path / "run")
    resumed, _ = CoEvolution.resume(tmp_path / "run", task=task, llm=weak_llm(task))
    assert resumed.state.distillations and resumed.state.distillations[0]["kept"]
    sha = resumed.state.distillations[0]["adapter"]
    assert all(p.adapter == sha for p in resumed.state.inner.population)  # from the checkpoint
    result = resumed.run(tmp_path / "run")
    assert result.best.adapter == sha and len(fake_training) == 1  # not trained again
    assert set(served) == {sha}
