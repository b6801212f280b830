"""The simulated customers' personas: how much a customer reveals per turn, how patient it is,
how its mood moves, whether it chats off topic or changes its mind. The harness's task mix is
the mix of these kinds (``DialogueGenerator.kinds``), so the outer loop decides which customers
the clerk trains against.

Each row is plain data. Besides the mix of personas and L, the harness evolves one persona
gene (harness/genes.py's table: ``PATIENCE``, declared by the task): every customer's patience
scaled, so the outer loop can make the customers the clerk trains against more or less
forgiving. The other columns and the LLM user's ``voice`` stay fixed per persona.
"""

from __future__ import annotations

from dataclasses import dataclass

from evotrainer.types import GeneSpec

# the harness gene the task declares (DialogueTask.harness_genes; DialogueGenerator reads it)
PATIENCE = GeneSpec(
    "patience",
    1.0,
    0.6,
    1.6,
    step=0.1,
    description="every simulated customer's patience, scaled (1: the persona's own)",
)


@dataclass(frozen=True)
class Persona:
    name: str
    reveal: int  # constraints stated per turn (unasked)
    patience: float  # clerk turns allowed, as a multiple of the fewest a good clerk needs
    mood: float  # mood at the start, 0..1
    mood_drop: float  # mood lost on a turn without progress
    max_words: int  # replies longer than this annoy the customer (mood)
    requests_at_once: bool  # asks for every slot in one message
    answers_questions: bool  # tells a constraint the clerk asks for
    chatter: int  # off-topic sentences per message
    changes_mind: bool  # changes one constraint after the first offer
    voice: str  # how the LLM-played user is told to sound


PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in (
        Persona(
            "cooperative", 2, 1.8, 0.8, 0.1, 80, True, True, 0, False,
            "friendly and clear; you say what you need and answer questions",
        ),
        Persona(
            "terse", 1, 1.8, 0.7, 0.1, 40, False, True, 0, False,
            "curt: a few words per message, never more than you must",
        ),
        Persona(
            "impatient", 9, 1.2, 0.6, 0.25, 35, True, False, 0, False,
            "in a hurry and easily annoyed; you want answers at once",
        ),
        Persona(
            "indecisive", 1, 2.0, 0.8, 0.08, 80, False, True, 0, True,
            "unsure; you hesitate and change your mind once",
        ),
        Persona(
            "chatty", 2, 2.2, 0.9, 0.05, 120, True, True, 2, False,
            "talkative; you wander off topic with small talk",
        ),
    )
}  # fmt: skip
KINDS = tuple(PERSONAS)
COOPERATIVE = "cooperative"

CHATTER = (
    "My sister visited last spring and would not stop talking about the punting.",
    "The weather has been lovely this week, hasn't it?",
    "I'm only in town for a few days for a conference.",
    "Sorry, my phone battery is nearly dead.",
    "I used to live near here years ago, it has changed so much.",
    "My friend says the market square is worth a look.",
    "I hope the trains are running on time today.",
    "I nearly got lost walking from the station.",
)


def patience_turns(persona: Persona, ideal: int, difficulty: float) -> int:
    """Clerk turns the customer waits before leaving: the persona's multiple of the fewest a
    good clerk needs (``ideal``), the multiple shrinking as L rises (by a quarter at L 1), plus
    one turn of slack."""
    return 1 + max(ideal, round(persona.patience * ideal * (1.0 - 0.25 * difficulty)))
