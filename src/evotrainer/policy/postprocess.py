"""The policy's output post-processor: a loop cut (SPEC: "a light policy network ... that
post-processes the LLM's output"). Its settings are genes of the policy: they are part of its
id, the ``decoding`` operator mutates them, checkpoints keep them.

A small model often falls into a repetition loop ("The team will also be working on a new
project ..." five times, "okay, okay, okay ..."). The cut, applied in this order to every answer
the policy's model gives (training, validation, confirmation, ``eval``, the benchmarks: the
evaluator applies it where the answer comes back, evaluation/evaluator.py):

1. ``collapse_runs``: a phrase of 1-8 words said 3 or more times in a row is kept once;
2. ``drop_repeats``: a sentence or line is dropped when at least ``seen_share`` of its word
   4-grams were already written above it (1.0: only word-for-word repeats; shorter units, under
   4 words, only when repeated word for word);
3. ``cut_ngram`` (0 = off): the answer ends before the first sentence that repeats a word
   n-gram of this length written earlier (the strictest cut: it also ends answers that go on
   repeating themselves in other words, and leaves the least text);
4. ``drop_blanks``: the task's rule for a template's unfilled blanks is applied last (the
   meeting task's: "- <owner>: Johno" keeps its label as a word, "Owner: Johno", and a sentence
   or line that still holds a blank, "- <action item 1>:", "[insert summary here]", goes;
   tasks/meetings/placeholders.py ``strip_blanks``). A task without such a rule leaves the
   answer as it is.

The raw answer is kept beside the cut one (``Rollout.raw_output``): reports show both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from evotrainer.policy.repetition import SENTENCE_END, WORD, ngrams, unit_key, words

RUN_PHRASE_MAX = 8  # longest phrase (words) whose immediate repetition is collapsed
RUN_MIN_REPEATS = 3  # a phrase said this many times in a row is a run

_BOUNDS: dict[str, tuple[float, float]] = {"seen_share": (0.5, 1.0), "cut_ngram": (0, 24)}
# the genes that switch the cut or one of its steps on and off
SWITCHES = ("enabled", "collapse_runs", "drop_repeats", "drop_blanks")


@dataclass(frozen=True)
class LoopCut:
    """The loop-cut genes (see the module docstring); the defaults leave an answer as it is."""

    enabled: bool = False
    collapse_runs: bool = True
    drop_repeats: bool = True
    seen_share: float = 1.0
    cut_ngram: int = 0
    drop_blanks: bool = False

    def __post_init__(self) -> None:
        lo, hi = _BOUNDS["seen_share"]
        if not lo <= self.seen_share <= hi:
            raise ValueError(
                f"postprocess.seen_share must be in [{lo}, {hi}], got {self.seen_share}"
            )
        if self.cut_ngram and not 4 <= self.cut_ngram <= _BOUNDS["cut_ngram"][1]:
            raise ValueError(
                f"postprocess.cut_ngram must be 0 (off) or 4..24, got {self.cut_ngram}"
            )

    @property
    def is_default(self) -> bool:
        return self == LoopCut()

    def apply(self, text: str, strip_blanks: Callable[[str], str] | None = None) -> str:
        """``text`` with its loops cut (unchanged when the cut is off) and, with
        ``drop_blanks`` on, the task's ``strip_blanks`` applied last."""
        if not self.enabled or not text:
            return text
        out = collapse_runs(text) if self.collapse_runs else text
        if self.drop_repeats:
            out = drop_repeats(out, self.seen_share)
        if self.cut_ngram:
            out = cut_at_repeat(out, self.cut_ngram)
        if self.drop_blanks and strip_blanks is not None:
            out = strip_blanks(out)
        return out.strip()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any, where: str = "postprocess") -> LoopCut:
        """Validated genes from JSON; ValueError naming the field on a wrong type or value."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where} must be an object, got {type(data).__name__}")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown}")
        kw: dict[str, Any] = {}
        for name in SWITCHES:
            if name in data:
                if not isinstance(data[name], bool):
                    raise ValueError(f"{where}.{name} must be true or false, got {data[name]!r}")
                kw[name] = data[name]
        if "seen_share" in data:
            v = data["seen_share"]
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise ValueError(f"{where}.seen_share must be a number, got {v!r}")
            kw["seen_share"] = float(v)
        if "cut_ngram" in data:
            v = data["cut_ngram"]
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{where}.cut_ngram must be an integer, got {v!r}")
            kw["cut_ngram"] = v
        try:
            return cls(**kw)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from exc


def collapse_runs(text: str) -> str:
    """Every phrase of 1..RUN_PHRASE_MAX words said RUN_MIN_REPEATS or more times in a row
    within a line is kept once ("Okay, okay, okay, okay." -> "Okay."); what lies between the
    repetitions (punctuation, spaces) goes with them. Repeated lines are ``drop_repeats``'
    work."""
    return "\n".join(_collapse_line(line) for line in text.split("\n"))


def _collapse_line(text: str) -> str:
    while True:
        spans = [(m.start(), m.end(), m.group().lower()) for m in WORD.finditer(text)]
        toks = [s[2] for s in spans]
        run = _first_run(toks)
        if run is None:
            return text
        i, p, reps = run
        # keep the first occurrence up to where the second starts; drop the rest of the run
        start = spans[i + p][0]
        end = spans[i + p * reps - 1][1]
        tail = text[end:]
        # the punctuation right after the last repetition belongs to the kept occurrence's place
        head = text[:start].rstrip(" ,;")
        text = head + (" " if tail[:1].isalnum() else "") + tail


def _first_run(toks: list[str]) -> tuple[int, int, int] | None:
    """(start, phrase length, repetitions) of the first run of a repeated phrase, or None."""
    n = len(toks)
    for i in range(n):
        for p in range(1, RUN_PHRASE_MAX + 1):
            if i + p * RUN_MIN_REPEATS > n:
                break
            phrase = toks[i : i + p]
            reps = 1
            while toks[i + reps * p : i + (reps + 1) * p] == phrase:
                reps += 1
            if reps >= RUN_MIN_REPEATS:
                return i, p, reps
    return None


def split_sentences(line: str) -> list[str]:
    """A line cut into its sentences, each keeping the space that followed it."""
    parts: list[str] = []
    last = 0
    for m in SENTENCE_END.finditer(line):
        parts.append(line[last : m.end()])
        last = m.end()
    parts.append(line[last:])
    return [p for p in parts if p]


def drop_repeats(text: str, seen_share: float = 1.0) -> str:
    """``text`` without the sentences and lines that repeat what was written above them: a unit
    goes when at least ``seen_share`` of its word 4-grams were seen (a unit of under 4 words,
    when it was seen word for word). Blank lines and lines without words are kept."""
    seen_units: set[str] = set()
    seen_grams: set[tuple[str, ...]] = set()
    out_lines: list[str] = []
    for line in text.splitlines():
        if not words(line):
            out_lines.append(line)
            continue
        kept: list[str] = []
        for sentence in split_sentences(line):
            key = unit_key(sentence)
            if not key:
                kept.append(sentence)
                continue
            grams = ngrams(key.split(), 4)
            if key in seen_units or (
                grams and sum(g in seen_grams for g in grams) / len(grams) >= seen_share
            ):
                continue
            seen_units.add(key)
            seen_grams.update(grams)
            kept.append(sentence)
        joined = "".join(kept).rstrip()
        if joined and words(joined):
            out_lines.append(joined)
    return squeeze_blank_lines("\n".join(out_lines))


def cut_at_repeat(text: str, n: int) -> str:
    """``text`` up to the first sentence that repeats a word n-gram written before it."""
    seen: set[tuple[str, ...]] = set()
    out_lines: list[str] = []
    for line in text.splitlines():
        kept: list[str] = []
        for sentence in split_sentences(line):
            grams = ngrams(words(sentence), n)
            # a repeat inside the sentence itself counts too
            if any(g in seen for g in grams) or len(set(grams)) < len(grams):
                if kept:
                    out_lines.append("".join(kept).rstrip())
                return squeeze_blank_lines("\n".join(out_lines))
            seen.update(grams)
            kept.append(sentence)
        out_lines.append("".join(kept).rstrip())
    return squeeze_blank_lines("\n".join(out_lines))


def squeeze_blank_lines(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()
