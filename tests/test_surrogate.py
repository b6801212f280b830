"""The surrogate of fitness (issue 12): it learns from children evaluated for real, measures its
held-out rank correlation, screens children it predicts below the elites, explores a share of
them anyway, saves calls in a run, and survives a checkpoint."""

from __future__ import annotations

import random

import pytest

from evotrainer.config import InnerConfig
from evotrainer.evaluation.correlation import spearman
from evotrainer.evaluation.evaluator import PolicyFitness
from evotrainer.evaluation.surrogate import FitnessSurrogate
from evotrainer.loops.inner import PolicyOptimizer
from evotrainer.policy.genome import PolicyGenome
from evotrainer.types import Lineage
from tests.fake_runs import small_config

GOOD = " List every decision with its owner."
BAD = " Be creative and add your own ideas."


def test_spearman():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None and spearman([1, 2], [2, 1]) is None


def _optimizer() -> PolicyOptimizer:
    seeds = [PolicyGenome.from_text(f"Write meeting minutes, style {i}.") for i in range(4)]
    opt = PolicyOptimizer(InnerConfig(population=4, elites=2), seeds, random.Random(0))
    opt.population = seeds
    opt.fitness = {p.id: PolicyFitness(p.id, 0.5 + 0.01 * i, {}, 4, 0) for i, p in enumerate(seeds)}
    return opt


def _children(opt: PolicyOptimizer, rng: random.Random, n: int) -> list[PolicyGenome]:
    out = []
    for _ in range(n):
        parent = rng.choice(opt.population)
        extra = GOOD if rng.random() < 0.5 else BAD
        text = f"{parent.render()}{extra} ({rng.randrange(10**6)})"
        out.append(PolicyGenome.from_text(text, lineage=Lineage((parent.id,), "keyword", 1)))
    return out


def _true_fitness(opt, child) -> float:
    base = opt.fitness[child.lineage.parents[0]].fitness
    return base + (0.2 if GOOD in child.render() else -0.2)


def test_it_learns_screens_and_explores():
    opt = _optimizer()
    sur = FitnessSurrogate(seed=1, min_train=8, min_spearman=0.5, explore=0.25)
    rng = random.Random(3)
    asked: list[str] = []

    def evaluate(cs):
        asked.extend(c.id for c in cs)
        return {c.id: PolicyFitness(c.id, _true_fitness(opt, c), {}, 4, 0) for c in cs}

    for _ in range(6):  # learning: every child evaluated until the model is trusted
        sur.fitness(opt, _children(opt, rng, 6), evaluate)
    assert sur.active and sur.spearman > 0.8
    asked.clear()
    before = sur.summary()
    kids = _children(opt, rng, 40)
    fits = sur.fitness(opt, kids, evaluate, cost_min=2)
    screened = [c for c in kids if c.id not in asked]
    assert screened and all(BAD in c.render() for c in screened)  # only the bad ones
    assert all(fits[c.id].n == 0 and fits[c.id].fitness < 0.55 for c in screened)
    explored = [c for c in kids if BAD in c.render() and c.id in asked]
    assert explored  # a share of what it screens is evaluated anyway (calibration)
    s = sur.summary()
    assert s["screened"] - before["screened"] == len(screened)
    skipped = s["evaluations_skipped_at_least"] - before["evaluations_skipped_at_least"]
    assert skipped == 2 * len(screened)

    twin = FitnessSurrogate(seed=1, min_train=8, min_spearman=0.5, explore=0.25)
    twin.load_state_dict(sur.state_dict())
    assert twin.summary() == s and twin.coef == pytest.approx(sur.coef)


def _keyword_run(cfg, run_dir, observers=(), resume=False):
    """A run whose fake LLM writes better minutes for policies that ask for topics, decisions
    and owners (so fitness depends on the policy text, as with a real model)."""
    from evotrainer.coevolution import CoEvolution
    from evotrainer.llm.fakes import FunctionLLM
    from evotrainer.tasks.meetings.render import SEPARATOR
    from tests.fake_meetings import RecordingMeetingTask, family_llm, honest_minutes

    task = RecordingMeetingTask()
    operator_answer = family_llm(task).fn

    def answer(messages, params):
        content = messages[-1].content
        meeting = task.by_prompt.get(content)
        if meeting is None:
            return operator_answer(messages, params)
        policy = content.split(SEPARATOR)[-1].lower()
        lines = honest_minutes(meeting).splitlines()
        keep = [ln for ln in lines if ln.startswith("#")]
        if "topic" in policy:
            keep += [ln for ln in lines if ":" in ln and not ln.startswith("#")][:3]
        if "decision" in policy:
            keep += [f"- {d}" for d in meeting.decisions]
        if "owner" in policy or "action" in policy:
            keep += [f"- {a.owner}: {a.task}" for a in meeting.action_truth[:3]]
        return "\n".join(keep)

    llm = FunctionLLM(answer, model_id="fake:keywords")
    if resume:
        co, path = CoEvolution.resume(run_dir, task=task, llm=llm, observers=list(observers))
        co.run(path)
    else:
        co = CoEvolution(cfg, task=task, llm=llm, observers=list(observers))
        co.run(run_dir)
    return co


def test_a_run_with_the_surrogate_saves_calls_and_resumes_exactly(tmp_path):
    from tests.fake_runs import Killed, comparable_summary, kill_at

    surrogate = {"enabled": True, "min_train": 4, "min_spearman": -1.0, "explore": 0.2}
    inner = {"generations": 8, "race_first": 0, "population": 6, "elites": 2}
    plain = _keyword_run(small_config(tmp_path / "a.sqlite", inner=inner), tmp_path / "plain")
    cfg = small_config(tmp_path / "b.sqlite", inner=inner, surrogate=surrogate)
    screened = _keyword_run(cfg, tmp_path / "screened")
    s = screened.components.surrogate.summary()
    assert s["screened"] > 0 and s["heldout_pairs"] > 0 and s["heldout_spearman"] is not None
    assert (
        screened.components.budget.llm_calls < plain.components.budget.llm_calls
    )  # screened children cost nothing
    assert comparable_summary(tmp_path / "screened")["surrogate"] == s
    # a kill, then resume: the same result as without the kill
    cfg2 = small_config(tmp_path / "c.sqlite", inner=inner, surrogate=surrogate)
    with pytest.raises(Killed):
        _keyword_run(cfg2, tmp_path / "killed", [kill_at("generation", 6)])
    _keyword_run(None, tmp_path / "killed", resume=True)
    assert comparable_summary(tmp_path / "killed") == comparable_summary(tmp_path / "screened")
