"""The constitution: non-negotiable rules every policy text and every output must satisfy.

A policy whose text breaks a rule, or any of whose outputs does, is rejected: its fitness is
-inf (it can never be selected or archived) and the event log names the rule it broke. Rules:

- ``harmful_content``: word lists / regular expressions for content the agent must never
  produce or be told to produce (violence, self-harm, slurs, credentials ...). Extend with
  ``constitution.extra_patterns``.
The rules on outputs apply where the task says they make sense (``Task.constitution_rules()``):
a meeting's minutes must not repeat a phone number from the transcript, but a function that
repeats a long number literal from its specification leaks nothing, and a parameter named
``password`` is not a credential.

- ``private_data``: e-mail addresses, phone and card numbers and IBANs that occur in the
  *input* must not appear in the output, unless ``constitution.allow_private_data`` is set (what
  counts as private data and as repeating it: private_data.py, shared with the privacy
  reward and the robustness probe).
- ``ignore_the_input``: a policy must not tell the agent to ignore the meeting (or its
  instructions), nor to answer with fixed text regardless of the input.
- ``copies_example``: an answer must come from the input, not from the policy's few-shot
  example: when ``example_copy_share`` or more of the answer's distinct 6-word spans occur in
  the example and not in the input, the answer copies the example (a small model often does;
  on a homogeneous corpus a copied reference of another meeting even scores well on ROUGE, so
  without this rule evolution would select copying).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evotrainer.private_data import leaked_from
from evotrainer.tasks.base import OUTPUT_RULES

__all__ = ["Constitution", "Violation"]

HARMFUL_PATTERNS = (
    r"\bkill (yourself|himself|herself|themselves|them all)\b",
    r"\bhow to (make|build) (a )?(bomb|explosive|weapon)",
    r"\bsuicide (method|instructions)\b",
    r"\b(hate|exterminate) (all )?(jews|muslims|christians|immigrants|women|men)\b",
    r"\bpassword\s*[:=]\s*\S+",
    r"\bcredit card number\b",
)

IGNORE_PATTERNS = (
    r"\bignore (the|this|any|all)? ?(meeting|transcript|dialogue|input|conversation|text|problem|"
    r"specification|docstring)\b",
    r"\b(do not|don't|never) (read|look at|use|consider) the (meeting|transcript|dialogue|input)",
    r"\bregardless of (the )?(meeting|transcript|input|dialogue)\b",
    r"\bignore (all |any |your )?(previous |prior |above )?instructions\b",
    r"\balways (output|write|answer|reply) (exactly|only)? ?[\"']",
)

_WORD = re.compile(r"[a-z0-9]+")
SPAN = 6  # words per span for copies_example


def spans(text: str, n: int = SPAN) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def copied_share(output: str, example: str, input_text: str) -> float:
    """Share of the output's distinct 6-word spans that occur in ``example`` but not in the
    input."""
    out = spans(output)
    if not out or not example:
        return 0.0
    return len((out & spans(example)) - spans(input_text)) / len(out)


@dataclass(frozen=True)
class Violation:
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


@dataclass
class Constitution:
    enabled: bool = True
    allow_private_data: bool = False
    extra_patterns: Sequence[str] = ()
    example_copy_share: float = 0.25
    output_rules: frozenset[str] = OUTPUT_RULES  # the task's (Task.constitution_rules())

    def __post_init__(self) -> None:
        self._harmful = [re.compile(p, re.I) for p in (*HARMFUL_PATTERNS, *self.extra_patterns)]
        self._ignore = [re.compile(p, re.I) for p in IGNORE_PATTERNS]

    def check_policy(self, text: str) -> list[Violation]:
        if not self.enabled:
            return []
        out = []
        for pat in self._harmful:
            if m := pat.search(text):
                out.append(Violation("harmful_content", f"policy text contains {m.group(0)!r}"))
        for pat in self._ignore:
            if m := pat.search(text):
                out.append(Violation("ignore_the_input", f"policy text says {m.group(0)!r}"))
        return out

    def check_output(self, input_text: str, output: str, example: str = "") -> list[Violation]:
        if not self.enabled or not output:
            return []
        out = []
        rules = self.output_rules
        if example and "copies_example" in rules:
            share = copied_share(output, example, input_text)
            if share >= self.example_copy_share:
                out.append(
                    Violation(
                        "copies_example",
                        f"{share:.0%} of the answer's 6-word spans come from the few-shot "
                        "example, not the input",
                    )
                )
        for pat in self._harmful if "harmful_content" in rules else ():
            if m := pat.search(output):
                out.append(Violation("harmful_content", f"output contains {m.group(0)!r}"))
        if not self.allow_private_data and "private_data" in rules:
            leaked = self.leaked(input_text, output)
            if leaked:
                out.append(Violation("private_data", f"output repeats {sorted(leaked)[:3]}"))
        return out

    @staticmethod
    def leaked(input_text: str, output: str) -> set[str]:
        return leaked_from(input_text, output)  # the one definition: private_data.py

    def check_outputs(self, pairs: Iterable[tuple[str, str]], example: str = "") -> list[Violation]:
        for input_text, output in pairs:
            found = self.check_output(input_text, output, example)
            if found:
                return found
        return []
