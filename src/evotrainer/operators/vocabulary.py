"""The words the lexical operators know, per task.

The engine's operators are domain-agnostic; a task hands them its vocabulary
(``Task.vocabulary()``): the style phrases the ``keyword`` operator inserts or removes (each
with a topic, so "Be concise." and "Be thorough." never stand together), the phrases seed
variations are made from, and the domain words the ``synonym`` operator may swap on top of the
general instruction words of operators/synonyms.py. The driver puts the task's vocabulary into
every ``OperatorContext``; without one the operators know only the general words and no style
phrases.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from evotrainer.operators.synonym_table import SynonymTable, build_table
from evotrainer.operators.text import normalise


@dataclass(frozen=True, eq=False)
class InstructionVocabulary:
    phrases: Mapping[str, str] = field(default_factory=dict)
    """Style phrase (a whole sentence) -> its topic; phrases of one topic exclude each other."""
    seed_phrases: tuple[str, ...] = ()
    """The phrases initial variations of the seed policies add (SPEC: "rigorous", ...)."""
    synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Domain words and phrases -> synonyms, replaced anywhere outside quotes."""
    verb_synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Domain verbs -> synonyms, replaced only in imperative position."""

    @cached_property
    def table(self) -> SynonymTable:
        """The general synonym table extended by this vocabulary's words."""
        return build_table(self.synonyms, self.verb_synonyms)

    @cached_property
    def phrase_keys(self) -> dict[str, str]:
        """Normalised phrase -> phrase (to find phrases up to case and punctuation)."""
        return {normalise(p): p for p in self.phrases}


GENERAL = InstructionVocabulary()
