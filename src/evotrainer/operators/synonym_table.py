"""The curated synonym table of instruction vocabulary, and what the lexical operators do with it:
find replaceable words, substitute one, compare sentences up to synonyms.

The table here holds general instruction words; a task adds the words of its domain through its
``InstructionVocabulary`` (operators/vocabulary.py), which the operators receive in their
context. Offline and deterministic (no WordNet). Replacements are whole words or phrases, keep the
original's capitalisation, fix "a"/"an" before them, and never touch quoted text (a quoted
output format such as 'Owner: task' is a contract, not wording). Words that are also nouns
("list", "record", "turn") are only replaced where they stand as an imperative verb.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Verbs: replaced only in imperative position (see _verb_position).
VERB_SYNONYMS: dict[str, tuple[str, ...]] = {
    "summarise": ("condense", "recap", "sum up"),
    "summarize": ("condense", "recap", "sum up"),
    "condense": ("summarise", "compress"),
    "list": ("enumerate", "itemise", "set out"),
    "enumerate": ("list", "itemise"),
    "extract": ("pull out", "pick out", "identify"),
    "pick out": ("extract", "single out", "select"),
    "identify": ("pinpoint", "determine", "pick out"),
    "turn": ("convert", "transform"),
    "convert": ("turn", "transform"),
    "write": ("produce", "compose", "draft"),
    "produce": ("write", "create"),
    "include": ("cover", "mention"),
    "mention": ("include", "note"),
    "ensure": ("make sure",),
    "make sure": ("ensure",),
    "highlight": ("emphasise", "stress"),
    "emphasise": ("highlight", "stress"),
    "record": ("note down", "capture"),
    "capture": ("record", "note down"),
    "state": ("specify", "indicate"),
    "specify": ("state", "indicate"),
    "avoid": ("steer clear of", "refrain from"),
    "omit": ("leave out", "skip"),
    "leave out": ("omit", "skip"),
    "group": ("organise", "arrange", "cluster"),
    "organise": ("arrange", "structure"),
    "organize": ("arrange", "structure"),
    "describe": ("explain", "outline"),
    "explain": ("describe", "outline"),
    "outline": ("describe", "sketch"),
    "start": ("begin",),
    "begin": ("start",),
    "provide": ("give", "supply"),
    "invent": ("make up", "fabricate"),
    "fabricate": ("invent", "make up"),
    "check": ("verify", "confirm"),
    "verify": ("check", "confirm"),
    "read": ("go through", "review"),
    "review": ("go through", "examine"),
    "focus on": ("concentrate on", "centre on"),
    "split": ("divide", "separate"),
    "combine": ("merge", "join"),
    "remove": ("drop", "delete"),
    "add": ("append", "include"),
    "respond": ("reply", "answer"),
}

# Nouns, adjectives, adverbs and phrases: replaced anywhere outside quotes.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "key": ("main", "central", "principal"),
    "main": ("key", "principal", "central"),
    "important": ("significant", "essential"),
    "essential": ("crucial", "vital"),
    "crucial": ("essential", "vital"),
    "professional": ("experienced", "skilled", "expert"),
    "experienced": ("professional", "skilled"),
    "strictly": ("carefully", "rigorously"),
    "carefully": ("attentively", "thoroughly"),
    "rigorously": ("strictly", "meticulously"),
    "briefly": ("concisely", "succinctly"),
    "concisely": ("briefly", "succinctly"),
    "clearly": ("plainly", "explicitly"),
    "explicitly": ("clearly", "expressly"),
    "accurately": ("faithfully", "precisely", "correctly"),
    "precisely": ("exactly", "accurately"),
    "finally": ("lastly", "at the end"),
    "then": ("next", "afterwards"),
    "always": ("consistently", "in every case"),
    "rigorous": ("thorough", "meticulous"),
    "thorough": ("rigorous", "meticulous"),
    "concise": ("succinct", "brief"),
    "succinct": ("concise", "brief"),
    "short": ("brief", "compact"),
    "brief": ("short", "concise"),
    "precise": ("exact", "accurate"),
    "accurate": ("precise", "exact", "correct"),
    "faithful": ("accurate", "true"),
    "detailed": ("thorough", "comprehensive"),
    "structured": ("organised", "well-organised"),
    "relevant": ("pertinent", "applicable"),
    "specific": ("concrete", "precise"),
    "irrelevant": ("off-topic", "unrelated"),
    "bullet points": ("bullets", "bulleted items"),
    "details": ("specifics", "particulars"),
    "summary": ("overview", "synopsis", "recap"),
    "overview": ("summary", "synopsis"),
    "title": ("heading", "headline"),
    "heading": ("title", "header"),
    "sections": ("parts",),
    "formatted as": ("written as", "in the format"),
    "at most": ("no more than", "up to"),
    "no more than": ("at most", "up to"),
    "at least": ("no fewer than",),
    "do not": ("never",),
    "that need": ("that require",),
    "that require": ("that need",),
}

# A verb stands in imperative position after one of these words, or at a sentence start.
_VERB_PRECEDERS = frozenset(
    "to then and or first finally also please always must should carefully strictly "  # noqa: SIM905
    "briefly clearly next never not lastly only just explicitly accurately precisely".split()
)
_QUOTED = re.compile(r"(?<!\w)'[^'\n]*'(?!\w)|\"[^\"\n]*\"|“[^”\n]*”|‘[^’\n]*’")


def _pattern(keys: Sequence[str]) -> re.Pattern[str]:
    alts = sorted(keys, key=lambda k: (-len(k), k))
    return re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(k) for k in alts) + r")(?![\w-])", re.I)


def _canonical_map(table: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """Every word or phrase of the table -> one token standing for its synonym group."""
    parent: dict[str, str] = {}

    def find(w: str) -> str:
        while parent.setdefault(w, w) != w:
            w = parent[w]
        return w

    for key, alts in sorted(table.items()):
        for alt in alts:
            a, b = sorted((find(key), find(alt)))
            parent[b] = a
    out = {w: re.sub(r"[^a-z0-9]+", "_", find(w)) for w in parent}
    if "do not" in out:
        out["never"] = out["do not"]  # "Never invent ..." = "Do not invent ..."
    return out


@dataclass(frozen=True, eq=False)
class SynonymTable:
    """The general table plus a task's words, compiled: the replaceable terms and the synonym
    group of every word (for comparing sentences up to synonyms)."""

    synonyms: Mapping[str, tuple[str, ...]]
    verb_synonyms: Mapping[str, tuple[str, ...]]
    pattern: re.Pattern[str]
    canonical: Mapping[str, str]
    terms: re.Pattern[str]


def build_table(
    synonyms: Mapping[str, tuple[str, ...]] | None = None,
    verb_synonyms: Mapping[str, tuple[str, ...]] | None = None,
) -> SynonymTable:
    """The general table extended by ``synonyms`` (replaced anywhere) and ``verb_synonyms``
    (replaced in imperative position)."""
    nouns = {**SYNONYMS, **(synonyms or {})}
    verbs = {**VERB_SYNONYMS, **(verb_synonyms or {})}
    every = {**nouns, **verbs}
    canonical = _canonical_map(every)
    return SynonymTable(nouns, verbs, _pattern(list(every)), canonical, _pattern(list(canonical)))


GENERAL = build_table()
_ARTICLES = frozenset({"a", "an", "the"})


def words_of(text: str) -> list[str]:
    """Lower-case words, hyphenated ones ("off-topic") kept whole."""
    return re.findall(r"[a-z0-9_]+(?:-[a-z0-9_]+)*", text.lower())


def canonical_words(
    sentence: str, drop: frozenset[str] = frozenset(), table: SynonymTable = GENERAL
) -> set[str]:
    """The sentence's words with synonyms (also phrases: "bullet points" = "bulleted items")
    folded into one token each; articles and ``drop`` left out."""
    canonical = table.canonical
    folded = table.terms.sub(lambda m: f" {canonical[m.group(0).lower()]} ", sentence.lower())
    drop = _ARTICLES | drop | {canonical[w] for w in drop if w in canonical}
    return {w for w in words_of(folded) if w not in drop}


def same_meaning(a: str, b: str, threshold: float = 0.7, table: SynonymTable = GENERAL) -> bool:
    """Near-duplicate sentences up to synonyms ("You are a professional secretary." vs
    "You are an expert secretary."): Jaccard similarity of canonical words >= threshold."""
    wa, wb = canonical_words(a, table=table), canonical_words(b, table=table)
    if not wa or not wb:
        return False
    return len(wa & wb) / len(wa | wb) >= threshold


def _verb_position(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    if (
        not before
        or before[-1] in ".!?:;,(\n"
        or re.search(r"(?:^|\n)\s*(?:[-*•]|\d+[.)])$", before)
    ):
        return True
    prev = re.findall(r"[A-Za-z']+", before[-30:])
    return bool(prev) and prev[-1].lower() in _VERB_PRECEDERS


def candidates(text: str, table: SynonymTable = GENERAL) -> list[tuple[int, int, str]]:
    """(start, end, table key) of every replaceable word/phrase in ``text``."""
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    verbs, nouns = table.verb_synonyms, table.synonyms
    out = []
    for m in table.pattern.finditer(text):
        if any(a <= m.start() < b for a, b in quoted):
            continue
        key = m.group(0).lower()
        after = text[m.end() :]
        if after.startswith(":"):  # a label such as "Title:" is format, not wording
            continue
        if key in verbs and re.match(r"\s+of\b", after):  # "List of topics"
            continue
        if key in verbs and key not in nouns and not _verb_position(text, m.start()):
            continue
        out.append((m.start(), m.end(), key))
    return out


def match_case(original: str, replacement: str) -> str:
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def substitute(text: str, start: int, end: int, replacement: str) -> str:
    """Put ``replacement`` (case-matched) at text[start:end] and fix a preceding a/an."""
    new = match_case(text[start:end], replacement)
    before = text[:start]
    art = re.search(r"(?<![\w-])(a|an|A|An)(\s+)$", before)
    if art:
        vowel = new[:1].lower() in "aeiou"
        article = "an" if vowel else "a"
        if art.group(1)[0].isupper():
            article = article.capitalize()
        before = before[: art.start()] + article + art.group(2)
    return before + new + text[end:]


def synonym_choices(key: str, text: str, start: int, table: SynonymTable) -> tuple[str, ...]:
    if key in table.verb_synonyms and _verb_position(text, start):
        return table.verb_synonyms[key] + table.synonyms.get(key, ())
    return table.synonyms.get(key, ())
