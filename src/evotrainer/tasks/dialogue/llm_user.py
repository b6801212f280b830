"""The LLM-played customer (tau-bench's user), an option for server models
(``task.user_model``): a model voices what the agenda-based customer decided to say. It is told
its persona, its reason for calling, what it knows (its constraints), what it does not know and
wants to find out (the slots it will ask for), the conversation so far, and the content of its
next message; it writes that message in its own words. The decisions (and so the rewards) stay
the agenda's: the customer's state is tracked exactly, and a conversation replays without a
model call; the model only changes the words the clerk reads.

Its calls go through the client the engine binds (``HasEnvironmentModel``: the run's budget and
response cache), at temperature 0 with the conversation's seed, so a rerun answers from the
cache. A failed call (an LLMError) falls back to the agenda's own words; BudgetExceeded stops
the episode like any call the budget refuses.

Hook for issue 49 (harness genes as a table): ``voices`` maps each persona to the sentence that
tells the model how to sound (personas.py's ``voice``). Evolved persona genes replace that
mapping (and the personas' numbers); nothing else here changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evotrainer.errors import BudgetExceeded, LLMError
from evotrainer.llm.base import LLMClient, SamplingParams
from evotrainer.tasks.dialogue.conversation import DialogueGoal
from evotrainer.tasks.dialogue.ontology import phrase_slots
from evotrainer.tasks.dialogue.personas import PERSONAS
from evotrainer.tasks.dialogue.render import conversation_text
from evotrainer.types import Message

SAY = "In your next message, say this and nothing more:"
MAX_TOKENS = 80


def default_voices() -> dict[str, str]:
    return {name: p.voice for name, p in PERSONAS.items()}


def user_messages(
    payload: DialogueGoal,
    history: Sequence[tuple[str, str]],
    content: str,
    voice: str,
) -> list[Message]:
    goal = payload.goal
    known = "; ".join(
        f"{d.domain}: " + ", ".join(f"{k} {v}" for k, v in d.info) for d in goal.domains
    )
    unknown = (
        "; ".join(f"{d.domain}: {phrase_slots(d.reqt)}" for d in goal.domains if d.reqt)
        or "nothing in particular"
    )
    convo = conversation_text(history) or "(you speak first)"
    text = (
        "You are role-playing a customer talking to the clerk at Cambridge tourist "
        f"information.\nHow you sound: {voice}.\nWhy you are calling: {goal.describe()}\n"
        f"What you know and want: {known}.\nWhat you do not know and want to find out: "
        f'{unknown}.\n\nConversation so far:\n{convo}\n\n{SAY} "{content}"\n'
        "Write only the customer's next message, in your own words and in character, in one "
        "or two sentences."
    )
    return [Message("user", text)]


def customer_line(output: str) -> str:
    """The customer's message in a completion: without a leading "Customer:" or quotes, up to
    the next speaker's line."""
    text = output.strip().strip('"').strip()
    for prefix in ("Customer:", "customer:", "Me:"):
        text = text.removeprefix(prefix).strip()
    for stop in ("\nClerk:", "\nclerk:", "\nCustomer:"):
        text = text.split(stop)[0]
    return " ".join(text.split()).strip('"')


class LLMUser:
    """Voices the agenda customer's messages with ``client``."""

    def __init__(
        self,
        client: LLMClient,
        voices: Mapping[str, str] | None = None,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        self.client = client
        self.voices = dict(voices or default_voices())
        self.max_tokens = max_tokens

    def say(self, payload: DialogueGoal, history: Sequence[tuple[str, str]], content: str) -> str:
        voice = self.voices.get(payload.persona, "yourself")
        params = SamplingParams(
            temperature=0.0, max_tokens=self.max_tokens, seed=payload.seed % 2**31
        )
        try:
            text = customer_line(
                self.client.complete(user_messages(payload, history, content, voice), params).text
            )
        except BudgetExceeded:
            raise
        except LLMError:
            return content
        return text or content
