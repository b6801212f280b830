"""The optional episode protocol (tasks/base.py ``ParsesEpisodes``): a multi-turn task whose
reward components and validation metric judge the whole episode gets its ``parse_episode`` in
the evaluator, in validation and in the rank judgement, instead of ``parse(last output)``."""

from __future__ import annotations

from evotrainer.evaluation.evaluator import Evaluator
from evotrainer.evaluation.runner import SerialRunner
from evotrainer.evaluation.validation import Validator
from evotrainer.llm.base import SamplingParams
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import BaseTask, ParsesEpisodes, parse_rollout
from evotrainer.types import ComponentScore, Instance, Message, Rollout, Trajectory, Turn

POLICY = PolicyGenome.from_text("Answer.", name="A")


class TwoTurns(BaseTask):
    """Answers twice; its component and metric count what the episode parse saw."""

    name = "two-turns"

    def render(self, instructions, instance):
        return [Message("user", instance.payload)], False

    def rollout(self, instructions, instance, llm, sampling):
        first = llm.complete(self.render(instructions, instance)[0], sampling).text
        second = llm.complete([Message("user", "again")], sampling).text
        return Trajectory((Turn(first, "try again"), Turn(second)))

    def max_calls_per_rollout(self):
        return 2

    def parse(self, output):
        return {"turns": 1}

    def parse_episode(self, instance, rollout):
        return {"turns": len(rollout.turns), "first": rollout.turns[0].output}

    def reward_components(self):
        class Turns:
            name, description = "turns", "turns seen"

            def score(self, instance, output, parsed):
                return ComponentScore("turns", parsed["turns"] / 2, parsed["first"])

        return {"turns": Turns()}

    def validation_metric(self):
        class Seen:
            keys = ("seen",)

            def score(self, instance, output, parsed):
                return {"seen": parsed["turns"] / 2}

            def aggregate(self, rows):
                return {"seen": sum(r["seen"] for r in rows) / len(rows)}

        return Seen()


def test_the_evaluator_and_validation_hand_components_the_whole_episode():
    task = TwoTurns()
    assert isinstance(task, ParsesEpisodes)
    llm = FunctionLLM(lambda m, p: "first" if m[-1].content != "again" else "second")
    ev = Evaluator(task, llm, SamplingParams(), SerialRunner())
    inst = Instance("i1", "question")
    rec = ev.evaluate([POLICY], [inst])[(POLICY.id, "i1")]
    assert rec.vector["turns"] == 1.0 and rec.vector.feedback()["turns"] == "first"
    assert rec.rollout.output == "second"  # the last answer; the parse saw both
    res = Validator(task, ev, [inst], {"seen": 1.0}, "test").validate([POLICY])[POLICY.id]
    assert res.s_val == 1.0


def test_a_failed_rollout_is_not_parsed_and_a_single_turn_task_parses_its_output():
    task = TwoTurns()
    failed = Rollout("p", "i1", "", error="LLMError: down")
    assert parse_rollout(task, Instance("i1", "q"), failed) is None

    plain = BaseTask()
    plain.parse = lambda output: output.upper()  # type: ignore[attr-defined]
    assert not isinstance(plain, ParsesEpisodes)
    assert parse_rollout(plain, Instance("i1", "q"), Rollout("p", "i1", "ok")) == "OK"
