"""The clerk's prompt and how its answer is read.

Layout: ONE user message, the conversation and the database first and the policy after them
(backends that reuse a shared prefix prefill the conversation once for every policy)::

    <HEADER>
    Customer: ...
    Clerk: ...
    Customer: ...

    Database (restaurant; the customer asked for: area=centre, food=italian): 3 match.
    - name: ... | food: ... | area: ... | phone: ...
    Booking desk: ...
    <SEPARATOR>
    <the policy's instructions>

    <ASK>

The same layout serves a simulated conversation and a validation item (a human context), so a
policy meets both the same way. ``clerk_reply`` reads the clerk's reply out of a completion: a
leading "Clerk:" is dropped and the text stops where the model starts writing the customer's
next line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotrainer.types import Message

HEADER = "A customer is talking with the clerk at Cambridge tourist information.\n\nConversation:"
SEPARATOR = "---"
ASK = "Write the clerk's next reply, and nothing else."
CUSTOMER, CLERK = "Customer", "Clerk"
_SPEAKER_LINE = re.compile(
    r"^\s*(?:customer|user|clerk|assistant)\s*:", re.IGNORECASE | re.MULTILINE
)


def conversation_text(history: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"{who}: {' '.join(text.split())}" for who, text in history)


def clerk_messages(
    history: Sequence[tuple[str, str]], database: str, instructions: str
) -> list[Message]:
    content = (
        f"{HEADER}\n{conversation_text(history)}\n\n{database}\n{SEPARATOR}\n"
        f"{instructions.strip()}\n\n{ASK}"
    )
    return [Message("user", content)]


def clerk_reply(output: str) -> str:
    """The clerk's reply in a completion: without a leading "Clerk:", up to the next line a
    speaker starts (a model that goes on to write the customer's part)."""
    text = output.strip()
    text = re.sub(r"^\s*(?:clerk|assistant)\s*:\s*", "", text, flags=re.IGNORECASE)
    m = _SPEAKER_LINE.search(text)
    if m is not None:
        text = text[: m.start()]
    return " ".join(text.split())


def split_prompt(content: str) -> tuple[list[tuple[str, str]], list[str], str] | None:
    """(conversation turns, database lines, instructions) of a clerk prompt, or None when the
    text is not one (the reference clerk reads its prompt with it)."""
    if not content.startswith(HEADER) or f"\n{SEPARATOR}\n" not in content:
        return None
    body, _, instructions = content[len(HEADER) :].partition(f"\n{SEPARATOR}\n")
    convo, _, database = body.strip("\n").partition("\n\n")
    turns = []
    for line in convo.splitlines():
        who, sep, text = line.partition(": ")
        if sep and who in (CUSTOMER, CLERK):
            turns.append((who, text))
    return turns, database.splitlines(), instructions.removesuffix(ASK).strip()
