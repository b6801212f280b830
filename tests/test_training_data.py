"""No validation instance reaches a training signal (issue 15, item 15): not the fitness batches,
not the terminal reward's sample, not the learned reward model's data, even when the terminal
pool file is the validation file itself."""

from __future__ import annotations

import random

from evotrainer.coevolution import CoEvolution
from evotrainer.defences.learned import LearnedDefences
from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.validation import Validator
from evotrainer.tasks.meetings.generator import MeetingGenerator
from evotrainer.tasks.meetings.loader import save_meetings
from tests.fake_meetings import RecordingMeetingTask, family_llm
from tests.fake_runs import small_config


def test_no_validation_instance_reaches_a_training_signal(tmp_path, monkeypatch):
    meetings = MeetingGenerator().sample(6, 0.3, random.Random(11))
    data = tmp_path / "real.jsonl"
    save_meetings(data, [m.payload for m in meetings])  # validation AND terminal pool
    cfg = small_config(
        tmp_path / "c.sqlite",
        validation={"data": str(data), "limit": 3},
        defences={
            "terminal_data": str(data),
            "terminal_share": 0.3,
            "learned_reward": True,
            "discriminator": True,
        },
        inner={"generations": 6},
        outer={"every": 2},
    )
    used: dict[str, set[str]] = {"fitness": set(), "refit": set(), "scored": set()}

    fitness = Evaluator.fitness

    def spy_fitness(self, policy_id, instances, *a, **k):
        used["fitness"].update(i.id for i in instances)
        return fitness(self, policy_id, instances, *a, **k)

    refit = LearnedDefences.refit

    def spy_refit(self, outputs, validated, step):
        for v in validated.values():
            used["refit"].update(r["instance_id"] for r in v.per_instance)
        return refit(self, outputs, validated, step)

    validate = Validator.validate

    def spy_validate(self, policies):
        # everything but the validation set itself (its selection and confirmation parts)
        if not self.source.startswith(str(data)):
            used["scored"].update(i.id for i in self.instances)
        return validate(self, policies)

    monkeypatch.setattr(Evaluator, "fitness", spy_fitness)
    monkeypatch.setattr(LearnedDefences, "refit", spy_refit)
    monkeypatch.setattr(Validator, "validate", spy_validate)
    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=family_llm(task))
    co.run(tmp_path / "run")
    held_out = {i.id for i in co.components.validation_set.instances}
    assert len(held_out) == 3
    assert used["refit"] and used["scored"], "the learned reward and terminal reward never ran"
    for signal, ids in used.items():
        assert not ids & held_out, f"validation meetings reached the {signal} signal"
