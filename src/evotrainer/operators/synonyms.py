"""Synonym substitution from a curated table of instruction vocabulary.

Offline and deterministic (no WordNet). Replacements are whole words or phrases, keep the
original's capitalisation, fix "a"/"an" before them, and never touch quoted text (a quoted
output format such as 'Owner: task' is a contract, not wording). Words that are also nouns
("list", "record", "turn") are only replaced where they stand as an imperative verb.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotrainer.operators.base import BaseOperator, OperatorContext, quote
from evotrainer.policy.genome import PolicyGenome

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
    "dialogue": ("conversation", "discussion", "transcript"),
    "conversation": ("dialogue", "discussion"),
    "discussion": ("conversation", "dialogue"),
    "transcript": ("dialogue", "record"),
    "meeting minutes": ("meeting notes", "minutes of the meeting"),
    "meeting notes": ("meeting minutes",),
    "key points": ("main points", "essentials"),
    "statements": ("remarks", "points"),
    "remarks": ("statements", "comments"),
    "decisions": ("resolutions", "agreed outcomes"),
    "topics": ("subjects", "themes", "agenda items"),
    "subjects": ("topics", "themes"),
    "tasks": ("assignments", "jobs"),
    "action items": ("follow-up tasks", "action points", "to-do items"),
    "action item": ("follow-up task", "action point", "to-do item"),
    "to-do items": ("action items", "follow-up tasks"),
    "to-do item": ("action item", "follow-up task"),
    "action points": ("action items",),
    "bullet points": ("bullets", "bulleted items"),
    "secretary": ("minute-taker", "note-taker"),
    "participants": ("attendees",),
    "attendees": ("participants",),
    "speaker": ("participant",),
    "details": ("specifics", "particulars"),
    "summary": ("overview", "synopsis", "recap"),
    "overview": ("summary", "synopsis"),
    "title": ("heading", "headline"),
    "heading": ("title", "header"),
    "sections": ("parts",),
    "deadline": ("due date",),
    "due date": ("deadline",),
    "responsible": ("accountable",),
    "discussed": ("covered", "addressed"),
    "agreed": ("decided", "settled"),
    "assigned": ("allocated", "given"),
    "developed": ("evolved", "unfolded", "progressed"),
    "formatted as": ("written as", "in the format"),
    "small talk": ("chit-chat", "off-topic chatter"),
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


_ALL = {**SYNONYMS, **VERB_SYNONYMS}
_PATTERN = _pattern(list(_ALL))


def _canonical_map() -> dict[str, str]:
    """Every word or phrase of the table -> one token standing for its synonym group."""
    parent: dict[str, str] = {}

    def find(w: str) -> str:
        while parent.setdefault(w, w) != w:
            w = parent[w]
        return w

    for key, alts in sorted(_ALL.items()):
        for alt in alts:
            a, b = sorted((find(key), find(alt)))
            parent[b] = a
    out = {w: re.sub(r"[^a-z0-9]+", "_", find(w)) for w in parent}
    out["never"] = out["do not"]  # "Never invent ..." = "Do not invent ..."
    return out


CANONICAL = _canonical_map()
_TERMS = _pattern(list(CANONICAL))
_ARTICLES = frozenset({"a", "an", "the"})


def words_of(text: str) -> list[str]:
    """Lower-case words, hyphenated ones ("off-topic") kept whole."""
    return re.findall(r"[a-z0-9_]+(?:-[a-z0-9_]+)*", text.lower())


def canonical_words(sentence: str, drop: frozenset[str] = frozenset()) -> set[str]:
    """The sentence's words with synonyms (also phrases: "bullet points" = "bulleted items")
    folded into one token each; articles and ``drop`` left out."""
    folded = _TERMS.sub(lambda m: f" {CANONICAL[m.group(0).lower()]} ", sentence.lower())
    drop = _ARTICLES | drop | {CANONICAL[w] for w in drop if w in CANONICAL}
    return {w for w in words_of(folded) if w not in drop}


def same_meaning(a: str, b: str, threshold: float = 0.7) -> bool:
    """Near-duplicate sentences up to synonyms ("You are a professional secretary." vs
    "You are an expert secretary."): Jaccard similarity of canonical words >= threshold."""
    wa, wb = canonical_words(a), canonical_words(b)
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


def candidates(text: str) -> list[tuple[int, int, str]]:
    """(start, end, table key) of every replaceable word/phrase in ``text``."""
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    out = []
    for m in _PATTERN.finditer(text):
        if any(a <= m.start() < b for a, b in quoted):
            continue
        key = m.group(0).lower()
        after = text[m.end() :]
        if after.startswith(":"):  # a label such as "Title:" is format, not wording
            continue
        if key in VERB_SYNONYMS and re.match(r"\s+of\b", after):  # "List of topics"
            continue
        if key in VERB_SYNONYMS and key not in SYNONYMS and not _verb_position(text, m.start()):
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


def _choices(key: str, text: str, start: int) -> tuple[str, ...]:
    if key in VERB_SYNONYMS and _verb_position(text, start):
        return VERB_SYNONYMS[key] + SYNONYMS.get(key, ())
    return SYNONYMS.get(key, ())


class SynonymOperator(BaseOperator):
    """Replace one (sometimes two) words or phrases with a curated synonym."""

    name = "synonym"
    arity = 1
    uses_llm = False
    targets = ("system", "examples", "template")

    def __init__(self, max_edits: int = 2) -> None:
        self.max_edits = max_edits

    def _apply(self, parents: list[PolicyGenome], ctx: OperatorContext) -> PolicyGenome | None:
        parent = parents[0]
        component = self.pick_component(parent, ctx.rng)
        text, edits = self.rewrite(parent.components[component], ctx)
        if not edits:
            return None
        note = f"{component}: " + ", ".join(f"{quote(a, 20)}->{quote(b, 20)}" for a, b in edits)
        return self.child(parents, {**parent.components, component: text}, ctx, note)

    def rewrite(self, text: str, ctx: OperatorContext) -> tuple[str, list[tuple[str, str]]]:
        edits: list[tuple[str, str]] = []
        n = (
            1
            if self.max_edits <= 1 or ctx.rng.random() < 0.7
            else ctx.rng.randint(2, self.max_edits)
        )
        for _ in range(n):
            found = candidates(text)
            # Not a word we already replaced (would undo or stack edits).
            found = [c for c in found if all(text[c[0] : c[1]] != new for _, new in edits)]
            if not found:
                break
            start, end, key = ctx.rng.choice(found)
            options = [o for o in _choices(key, text, start) if o != key]
            if not options:
                break
            replacement = ctx.rng.choice(options)
            original = text[start:end]
            text = substitute(text, start, end, replacement)
            edits.append((original, match_case(original, replacement)))
        return text, edits
