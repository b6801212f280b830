"""The dialogue task plug-in (SPEC: "a dialogue agent facing a simulated user whose interests and
mood evolve"): a Cambridge tourist-information clerk.

The policy is the clerk's prompt. The environment is a conversation with a simulated customer
(conversation.py: the agenda-based customer of simulator.py, optionally voiced by a model,
llm_user.py) in which the clerk is shown the database rows that fit what the customer has
asked so far. The episode (``rollout``) runs until the customer says goodbye, leaves, or
``max_turns`` replies are spent; the reward components and the metric judge the whole episode
(``parse_episode``, the optional ``ParsesEpisodes`` protocol). The generator draws customers
whose persona mix and difficulty the outer loop evolves; real customers have the goals of the
MultiWOZ validation dialogues (``load_training``); the validation set is the human reply turns
of those dialogues (``load``, items.py), or with ``validate_on="goals"`` conversations with a
fixed cooperative customer (the second objective).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from evotrainer.errors import BudgetExceeded, ConfigError, EvoTrainerError
from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.operators.base import FeedbackEdit
from evotrainer.operators.vocabulary import InstructionVocabulary
from evotrainer.policy.genome import PolicyGenome
from evotrainer.tasks.base import (
    BaseTask,
    HarnessHints,
    RewardComponent,
    TaskGenerator,
    ValidationMetric,
    single_turn,
)
from evotrainer.tasks.dialogue.conversation import Conversation, DialogueGoal
from evotrainer.tasks.dialogue.database import Database
from evotrainer.tasks.dialogue.episode import Episode
from evotrainer.tasks.dialogue.generator import DialogueGenerator
from evotrainer.tasks.dialogue.items import ReplyItem, synthetic_items
from evotrainer.tasks.dialogue.llm_user import LLMUser
from evotrainer.tasks.dialogue.loader import (
    dialogue_of,
    is_items_file,
    item_instance,
    load_goals,
    load_items,
    read_items,
)
from evotrainer.tasks.dialogue.metric import DialogueMetric
from evotrainer.tasks.dialogue.personas import PATIENCE
from evotrainer.tasks.dialogue.render import CLERK, CUSTOMER, clerk_messages, clerk_reply
from evotrainer.tasks.dialogue.rewards import component_registry
from evotrainer.tasks.dialogue.scoring import Episodes
from evotrainer.tasks.dialogue.style import EDITS, TEMPLATES, VOCABULARY, seed_policies
from evotrainer.types import GeneSpec, Instance, Message, Rollout, Trajectory, Turn

HINTS = HarnessHints(
    proxies={"requests": ("request_recall", 0.5), "inform": ("inform_match", 0.5)},
    shape=("brevity",),
    receivers=("grounded", "requests"),
)
VALIDATE_ON = ("items", "goals")


class DialogueTask(BaseTask):
    """``max_turns``: clerk replies per conversation; ``max_rows``: database rows shown;
    ``user_model``: None (the agenda's own words), "agent" (the agent's model voices the
    customer) or a model spec; ``validate_on``: what ``load`` reads from a MultiWOZ file
    (items = the human reply turns; goals = conversations with a cooperative customer);
    ``persona_mix``: "harness" (the harness's task mix draws the personas) or "uniform" (every
    persona alike, whatever the harness says: the benchmark's ablation)."""

    name = "dialogue"

    def __init__(
        self,
        db: Database,
        max_turns: int = 8,
        max_rows: int = 5,
        user_model: str | None = None,
        validate_on: str = "items",
        persona_mix: str = "harness",
    ) -> None:
        if not 1 <= int(max_turns) <= 30:
            raise ConfigError(f"task.max_turns must be between 1 and 30, got {max_turns}")
        if validate_on not in VALIDATE_ON:
            raise ConfigError(f"task.validate_on must be one of {VALIDATE_ON}, got {validate_on!r}")
        self.db = db
        self.max_turns = int(max_turns)
        self.max_rows = int(max_rows)
        self.user_model = user_model or None
        self.validate_on = validate_on
        if persona_mix not in ("harness", "uniform"):
            raise ConfigError(f"task.persona_mix must be harness or uniform, got {persona_mix!r}")
        self.persona_mix = persona_mix
        self.episodes = Episodes(db, self.max_rows)
        self.user_client: LLMClient | None = None

    def __repr__(self) -> str:
        return (
            f"DialogueTask(db={self.db.source!r}, max_turns={self.max_turns}, "
            f"user_model={self.user_model!r}, validate_on={self.validate_on!r})"
        )

    def harness_genes(self) -> list[GeneSpec]:
        """The persona gene the outer loop evolves (personas.py: PATIENCE)."""
        return [PATIENCE]

    def generator(self) -> TaskGenerator:
        return DialogueGenerator(self.db, follow_mix=self.persona_mix == "harness")

    # -- the environment -----------------------------------------------------------------
    def environment_model(self) -> str | None:
        return self.user_model

    def bind_environment(self, client: LLMClient) -> None:
        self.user_client = client

    def render(self, instructions: str, instance: Instance) -> tuple[list[Message], bool]:
        payload = instance.payload
        if isinstance(payload, ReplyItem):
            view = payload.view(self.db, self.max_rows).text()
            return clerk_messages(payload.context, view, instructions), False
        conv = Conversation(_goal(instance), self.db, self.max_rows)
        opening = conv.opening().text
        return clerk_messages([(CUSTOMER, opening)], conv.view().text(), instructions), False

    def rollout(
        self,
        instructions: str,
        instance: Instance,
        llm: LLMClient,
        sampling: SamplingParams,
    ) -> Trajectory:
        """A reply item: one answer. A conversation: reply, let the customer answer, until it
        is done or ``max_turns`` replies are spent. A failed later call ends the episode."""
        if isinstance(instance.payload, ReplyItem):
            return single_turn(self, instructions, instance, llm, sampling)
        payload = _goal(instance)
        conv = Conversation(payload, self.db, self.max_rows)
        voice = self._voice(llm)
        first = conv.opening()
        history = [(CUSTOMER, voice.say(payload, [], first.text) if voice else first.text)]
        turns: list[Turn] = []
        for k in range(self.max_turns):
            messages = clerk_messages(history, conv.view().text(), instructions)
            try:
                c = llm.complete(messages, sampling)
            except BudgetExceeded:
                raise
            except EvoTrainerError as exc:
                if not turns:
                    raise
                last = turns[-1]
                turns[-1] = replace(last, observation=f"{last.observation}\n(turn {k + 1}: {exc})")
                break
            reply = clerk_reply(c.text)
            said = conv.step(reply)
            history.append((CLERK, reply))
            text = voice.say(payload, history, said.text) if voice and not said.done else said.text
            turns.append(
                Turn(c.text, text, c.prompt_tokens, c.completion_tokens, c.latency_s, c.cached)
            )
            if said.done:
                break
            history.append((CUSTOMER, text))
        return Trajectory(tuple(turns))

    def _voice(self, llm: LLMClient) -> LLMUser | None:
        if self.user_model is None:
            return None
        return LLMUser(self.user_client or llm)

    def max_calls_per_rollout(self) -> int:
        return self.max_turns

    # -- reading an episode --------------------------------------------------------------
    def parse(self, output: str) -> str:
        return clerk_reply(output)

    def parse_episode(self, instance: Instance, rollout: Rollout) -> Episode:
        """The whole episode: the conversation replayed over the rollout's replies (no model
        call), or the one reply to a human context."""
        outputs = [t.output for t in rollout.turns] or [rollout.output]
        return self.episodes.from_replies(instance, outputs)

    def reward_components(self) -> dict[str, RewardComponent]:
        return component_registry(self.episodes)

    def validation_metric(self) -> ValidationMetric:
        return DialogueMetric(self.episodes)

    # -- data ----------------------------------------------------------------------------
    def load(self, path: str | Path) -> list[Instance]:
        """The validation view of a MultiWOZ file: its items, or (``validate_on="goals"``) its
        goals with a cooperative customer."""
        if is_items_file(path):
            return read_items(path)
        if self.validate_on == "goals":
            return load_goals(path, self.db, personas="cooperative")
        return load_items(path, self.db)

    def load_training(self, path: str | Path, held_out: Collection[str]) -> list[Instance]:
        """A MultiWOZ file's goals as real customers (personas mixed), none from a dialogue
        that a held-out validation instance comes from; an items file's items."""
        if is_items_file(path):  # a file of items trains on its items (the labels themselves)
            return read_items(path)
        return load_goals(path, self.db, "mixed", {dialogue_of(i) for i in held_out})

    def synthetic_validation(self, n: int, seed: int) -> list[Instance]:
        """``n`` held-out items made from the database (seed stream training never uses)."""
        rng = random.Random(f"validation-{seed}")
        return [item_instance(i, "synthetic") for i in synthetic_items(self.db, n, rng)]

    def seed_policies(self) -> list[PolicyGenome]:
        return seed_policies()

    # -- the structural search space and the domain's words -----------------------------------
    def output_templates(self) -> Sequence[str]:
        return TEMPLATES

    def feedback_edits(self) -> Mapping[str, Sequence[FeedbackEdit]]:
        return EDITS

    def vocabulary(self) -> InstructionVocabulary:
        return VOCABULARY

    def harness_hints(self) -> HarnessHints:
        return HINTS

    def input_text(self, instance: Instance) -> str:
        payload = instance.payload
        if isinstance(payload, ReplyItem):
            return "\n".join(f"{who}: {text}" for who, text in payload.context)
        return _goal(instance).goal.describe()

    def reference_text(self, instance: Instance) -> str | None:
        """The human clerk's reply to a validation item."""
        payload = instance.payload
        return payload.human_reply or None if isinstance(payload, ReplyItem) else None

    def reference_example(self, instance: Instance) -> str | None:
        return self.reference_text(instance)

    def constitution_rules(self) -> frozenset[str]:
        # a clerk's job is to give the phone numbers it is shown: the private-data rule (no
        # phone number from the input in the output) does not apply; the others do
        return frozenset({"harmful_content", "copies_example"})


def _goal(instance: Instance) -> DialogueGoal:
    p = instance.payload
    if not isinstance(p, DialogueGoal):
        raise TypeError(
            f"instance {instance.id!r}: payload is neither a ReplyItem nor a DialogueGoal"
        )
    return p
