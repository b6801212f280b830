"""The engine's parts, each called alone on components built from a small config (the fake
meeting LLM; no run directory, no whole run): the batch, one generation, the start, the
validation after a generation, an outer step, the monitor step, the checkpoint's state, the
outer step's cost, the distillation schedule and the summary."""

from __future__ import annotations

import dataclasses
import json

import pytest

from evotrainer.engine import outer_step as outer
from evotrainer.engine.components import Components, build_components
from evotrainer.engine.distill_step import distill_due_after
from evotrainer.engine.generation import draw_batch, fitness_of, run_generation
from evotrainer.engine.outcome import build_summary, finish
from evotrainer.engine.start import start
from evotrainer.engine.state import RunState, load_state_dict, new_state, state_dict
from evotrainer.engine.validate import validate, validate_generation
from evotrainer.run import events as ev
from tests.fake_meetings import RecordingMeetingTask, family_llm
from tests.fake_runs import small_config


def _parts(tmp_path, **sections) -> tuple[Components, RunState, list[ev.Event]]:
    events: list[ev.Event] = []
    task = RecordingMeetingTask()
    cfg = small_config(tmp_path / "cache.sqlite", **sections)
    c, _ = build_components(cfg, task=task, llm=family_llm(task), observers=[events.append])
    return c, new_state(c), events


def _types(events: list[ev.Event]) -> list[str]:
    return [e.type for e in events]


def test_components_are_frozen_and_a_new_state_holds_only_the_seeds(tmp_path):
    c, s, events = _parts(tmp_path)
    with pytest.raises(AttributeError):
        c.task = None  # type: ignore[misc]
    assert s.inner.generation == 0 and not s.inner.population and s.initial is None
    assert s.drawn == s.harness and s.harness.difficulty == c.base_harness.difficulty
    assert not events and c.budget.snapshot()["llm_calls"] == 0  # building calls nothing


def test_a_batch_is_a_function_of_the_epoch_and_never_holds_a_validation_instance(tmp_path):
    c, s, _ = _parts(tmp_path)
    a = draw_batch(c, s, 3, s.harness)
    b = draw_batch(c, s, 3, s.harness)
    assert [i.id for i in a] == [i.id for i in b]
    assert len(a) == c.cfg.inner.tasks_per_generation
    assert not {i.id for i in a} & c.held_out
    assert s.train_ids == {i.id for i in a}


def test_the_start_scores_the_seeds_and_validates_the_baseline(tmp_path):
    c, s, events = _parts(tmp_path)
    start(c, s)
    assert s.inner.generation == 0 and s.inner.population
    assert s.initial is not None and s.initial[0] in c.validator.memo
    assert c.meta.baseline == s.initial[0]
    assert s.hopt.archive.best() is not None
    types = _types(events)
    assert types[:3] == [ev.RUN_STARTED, ev.VALIDATION_SET, ev.TRAINING_SET]
    assert types.index(ev.ESTIMATE) < types.index(ev.GENERATION) < types.index(ev.VALIDATION)
    assert ev.CHECKPOINT not in types  # the driver checkpoints, not the step


def test_one_generation_alone(tmp_path):
    c, s, events = _parts(tmp_path)
    start(c, s)
    batch = draw_batch(c, s, s.epoch, s.drawn)
    calls = c.budget.snapshot()["llm_calls"]
    events.clear()
    s.epoch = run_generation(c, s, s.inner, batch, s.harness, s.epoch, s.drawn)
    assert s.inner.generation == 1
    assert c.budget.snapshot()["llm_calls"] > calls  # the children met the batch
    assert set(s.inner.fitness) >= {p.id for p in s.inner.population}
    assert not events  # a generation reports through the driver (emit_generation)
    validate_generation(c, s, batch)
    assert any(e.type == ev.VALIDATION and e.data["role"] == "generation" for e in events)


def test_fitness_of_records_every_policy_for_lineage(tmp_path):
    c, s, _ = _parts(tmp_path)
    seeds = s.inner.ask()
    batch = draw_batch(c, s, 0, s.harness)
    fit = fitness_of(c, s, seeds, batch, s.harness)
    assert set(fit) == {p.id for p in seeds} <= set(s.policies)


def test_an_outer_step_alone(tmp_path):
    c, s, events = _parts(tmp_path)
    start(c, s)
    batch = draw_batch(c, s, s.epoch, s.drawn)
    for _ in range(2):
        s.epoch = run_generation(c, s, s.inner, batch, s.harness, s.epoch, s.drawn)
    events.clear()
    out = outer.outer_step(c, s, batch)
    assert s.outer_step == 1 and out
    assert s.trial_generations == c.cfg.outer.trial_generations  # rerank: one trial run
    steps = [e for e in events if e.type == ev.OUTER_STEP]
    assert len(steps) == 1 and steps[0].data["outer_step"] == 1
    assert len(s.hopt.decisions) == 1


def test_the_monitor_step_validates_without_changing_the_harness(tmp_path):
    c, s, events = _parts(tmp_path, outer={"enabled": False})
    start(c, s)
    harness = s.harness
    history = len(s.hopt.s_val_history)
    outer.monitor_step(c, s)
    assert s.outer_step == 1 and s.harness == harness
    assert len(s.hopt.s_val_history) == history + 1
    assert any(e.type == ev.VALIDATION and e.data["role"] == "incumbent" for e in events)


def test_the_outer_step_cost_is_arithmetic_on_the_config(tmp_path):
    c, s, _ = _parts(tmp_path, outer={"every": 2, "variants": 2, "trials": "rerun"})
    inner, o = c.cfg.inner, c.cfg.outer
    trials = s.hopt.max_variants() + int(o.include_incumbent)
    per_trial = (inner.elites + o.trial_generations * (inner.population - inner.elites)) * (
        inner.tasks_per_generation
    )
    n_val = len(c.validator.instances)
    assert outer.outer_cost(c, s) == trials * per_trial + trials * n_val + n_val


def test_the_checkpoint_state_round_trips_into_fresh_parts(tmp_path):
    c, s, _ = _parts(tmp_path)
    start(c, s)
    saved = json.loads(json.dumps(state_dict(s, 12.5)))  # the RunState alone
    c2, s2, _ = _parts(tmp_path)
    load_state_dict(s2, saved, c2.cfg)
    again = json.loads(json.dumps(state_dict(s2, 12.5)))
    assert again == saved
    assert s2.initial == s.initial and s2.elapsed_before == 12.5
    # restored in place: the fresh components read what the state holds
    assert c2.validator.memo.keys() == c.validator.memo.keys() and c2.validator.memo


ENGINE = ("engine", "coevolution.py")


def test_engine_code_never_assigns_to_a_components_attribute():
    """Issue 49: the components are built once and never re-wired by a step; what a run
    changes is its RunState (a component may fill its own memo, never be assigned from
    outside). Any ``c.x = ...``, ``c.x.y = ...`` or ``self.components....= ...`` in the engine
    is a failure."""
    import ast

    from tests.support import REPO

    src = REPO / "src" / "evotrainer"
    paths = [*sorted((src / "engine").glob("*.py")), src / "coevolution.py"]
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AugAssign | ast.AnnAssign)
                else []
            )
            for t in targets:
                for sub in ast.walk(t):
                    if not isinstance(sub, ast.Attribute):
                        continue
                    root = sub
                    while isinstance(root, ast.Attribute):
                        root = root.value
                    chain = ast.unparse(sub)
                    if (isinstance(root, ast.Name) and root.id in ("c", "components")) or (
                        chain.startswith("self.components.")
                    ):
                        found.append(f"{path.name}:{node.lineno}: {chain} = ...")
    assert found == []


@pytest.mark.parametrize(
    ("after", "every", "max_rounds", "due"),
    [
        (2, 0, 1, [2]),
        (2, 2, 3, [2, 4, 6]),
        (3, 1, 2, [3, 4]),
    ],
)
def test_the_distillation_schedule(tmp_path, after, every, max_rounds, due):
    c, s, _ = _parts(tmp_path)
    cfg = c.cfg.model_copy(
        update={
            "distill": c.cfg.distill.model_copy(
                update={"enabled": True, "after": after, "every": every, "max_rounds": max_rounds}
            )
        }
    )
    c = dataclasses.replace(c, cfg=cfg)
    found = []
    for g in range(1, 9):
        if distill_due_after(c, s, g):
            found.append(g)
            s.distill_rounds += 1
    assert found == due


def test_finish_alone_returns_the_validated_best_and_writes_nothing(tmp_path):
    c, s, events = _parts(tmp_path)
    start(c, s)
    result = finish(c, s, "completed", None)
    assert result.best.id in c.validator.memo
    assert result.summary["stopped"] == "completed"
    assert result.summary == events[-1].data["summary"]
    assert not list(tmp_path.glob("**/summary.json"))
    keys = build_summary(c, s, "completed", result.best, result.best_s_val, None, None)
    assert set(keys) | {"adapter_effect", "per_meeting"} == set(result.summary)


def test_validate_labels_its_events_with_the_role(tmp_path):
    c, s, events = _parts(tmp_path)
    seeds = s.inner.seeds[:2]
    results = validate(c, s, seeds, "seed")
    assert set(results) == {p.id for p in seeds}
    roles = {e.data["role"] for e in events if e.type in (ev.VALIDATION, ev.VALIDATION_STARTED)}
    assert roles == {"seed"}
