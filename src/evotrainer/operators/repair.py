"""Repair or reject a child's text before it joins the population (SPEC inner loop, point 4:
"a malformed child is repaired or rejected").

``repair_text`` strips what chatty LLMs wrap around an answer (preambles, labels, quotes, code
fences, sign-offs), collapses whitespace, drops repeated sentences, finishes or drops a cut-off
last sentence and shortens over-long text at a sentence boundary. It returns None for text that
is too short or unreadable. Prose components ("system") must end in a sentence; layout
components ("examples", "template") keep their line structure and need not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from evotrainer.operators.text import Doc, dedupe, is_list_item
from evotrainer.policy.genome import PolicyGenome

PROSE_COMPONENTS = frozenset({"system"})

MIN_CHARS = 25
MIN_WORDS = 5
MIN_ALPHA_WORD_SHARE = 0.6
MAX_REPEATED_WORD_SHARE = 0.3
MAX_SYMBOL_SHARE = 0.3

_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:\n```|$)", re.S)
_POLITE = re.compile(
    r"^(?:sure|certainly|of course|okay|ok|absolutely|great|alright|yes|no problem|here you go)"
    r"\b[ !.,:]*",
    re.I,
)
_HERE_IS = re.compile(r"^here(?:'s|’s| is| are)\b[^\n:]{0,100}:\s*", re.I)
_LABEL = re.compile(
    r"^[#*\s]*(?:the |my |a |your )?"
    r"(?:(?:new|rewritten|revised|improved|merged|combined|paraphrased|updated|final|better|"
    r"modified|reworded|resulting)\s+)*(?:system\s+)?"
    r"(?:instruction|prompt|version|text|answer|output|response|rewrite|paraphrase)s?"
    r"(?:\s*\d+)?[*\s]*:[*\s]*",
    re.I,
)
_INTRO_LINE = re.compile(
    r"\b(?:here|rewritten|revised|improved|merged|combined|paraphrase|paraphrased|version|"
    r"instruction|prompt)\b",
    re.I,
)
_SIGN_OFF = re.compile(
    r"^[(\s]*(?:i hope|hope this|let me know|feel free|this (?:version|instruction|rewrite|"
    r"prompt|revised|new|merged|combined)|notes?:\s*(?:i\b|i've|this\b|the (?:new|rewritten|"
    r"revised|original|merged))|explanation:|changes:|i have|i've|"
    r"this should|good luck|happy to|in this (?:version|rewrite)|the (?:new|revised|rewritten) "
    r"(?:instruction|prompt|version))",
    re.I,
)
_CUT_FROM = re.compile(r"\n\s*(?:\*\*)?(?:explanation|changes|rationale)\s*:.*$", re.I | re.S)
_QUOTE_PAIRS = {'"': '"', "'": "'", "“": "”", "‘": "’", "`": "`", "«": "»"}
_DANGLING = frozenset(
    "a an the and or but to of with for as by then from in on at into that which who "  # noqa: SIM905
    "whose your their its this these those is are be will should must can".split()
)
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")


def strip_chatter(text: str) -> str:
    """Remove what an LLM says around its answer; keep the answer."""
    text = text.strip()
    fenced = _FENCE.search(text)
    if fenced and fenced.group(1).strip():
        text = fenced.group(1).strip()
    text = text.replace("```", "").strip()
    text = _CUT_FROM.sub("", text).strip()
    for _ in range(4):
        before = text
        text = _POLITE.sub("", text, count=1).strip()
        text = _HERE_IS.sub("", text, count=1).strip()
        text = _LABEL.sub("", text, count=1).strip()
        lines = text.split("\n", 1)
        if (
            len(lines) == 2
            and lines[0].rstrip().endswith(":")
            and _INTRO_LINE.search(lines[0])
            and lines[1].strip()
        ):
            text = lines[1].strip()
        if text == before:
            break
    text = _strip_sign_off(text)
    return _strip_quotes(text)


def _strip_sign_off(text: str) -> str:
    lines = text.split("\n")
    while len(lines) > 1 and (not lines[-1].strip() or _SIGN_OFF.match(lines[-1])):
        lines.pop()
    text = "\n".join(lines).strip()
    # A sign-off on the same line, after the last sentence.
    doc = Doc.parse(text)
    if doc.paragraphs and not doc.multiline[-1]:
        last = doc.paragraphs[-1]
        while len(last) > 1 and _SIGN_OFF.match(last[-1]):
            last.pop()
        text = doc.render() if len(doc.paragraphs) > 1 else " ".join(last)
    return text


def _strip_quotes(text: str) -> str:
    for _ in range(3):
        text = text.strip()
        if text.startswith("**") and text.endswith("**") and len(text) > 4:
            text = text[2:-2]
            continue
        if len(text) >= 2 and text[0] in _QUOTE_PAIRS:
            close = _QUOTE_PAIRS[text[0]]
            inner = text[1:]
            # "text". or "text" -> text; only when the quote is not used inside the text.
            tail = inner.rstrip(".!? ")
            if tail.endswith(close) and close not in tail[:-1]:
                end = inner[len(tail) :].strip()
                text = tail[:-1].strip() + end
                continue
        break
    return text


def _collapse_whitespace(text: str) -> str:
    lines = [re.sub(r"[ \t\f\v\u00a0]+", " ", ln).strip() for ln in text.split("\n")]
    out: list[str] = []
    for ln in lines:
        if ln or (out and out[-1]):
            out.append(ln)
    return "\n".join(out).strip()


def _drop_repeats(text: str) -> str:
    doc = Doc.parse(text)
    doc.paragraphs = [
        p if multi else dedupe(p) for p, multi in zip(doc.paragraphs, doc.multiline, strict=True)
    ]
    # Whole paragraphs repeated verbatim (a looping model).
    seen: set[str] = set()
    keep_p, keep_m = [], []
    for p, multi in zip(doc.paragraphs, doc.multiline, strict=True):
        key = " ".join(p).lower()
        if key not in seen:
            seen.add(key)
            keep_p.append(p)
            keep_m.append(multi)
    doc.paragraphs, doc.multiline = keep_p, keep_m
    return doc.render()


def _finish_last_sentence(text: str) -> str | None:
    """Make prose end in a sentence: keep it, add a period, or drop a cut-off fragment."""
    last_line = text.rsplit("\n", 1)[-1]
    if is_list_item(last_line) or _SENTENCE_END.search(text):
        return text
    words = re.findall(r"[A-Za-z']+", last_line)
    cut_off = text[-1] in ",;:-–(" or (words and words[-1].lower() in _DANGLING)
    if not cut_off:
        return text.rstrip() + "."
    doc = Doc.parse(text)
    last = doc.paragraphs[-1]
    if len(last) > 1:
        last.pop()
    elif len(doc.paragraphs) > 1:
        doc.paragraphs.pop()
        doc.multiline.pop()
    else:
        return None
    return _finish_last_sentence(doc.render())


def _boundaries(text: str, prose: bool) -> list[int]:
    """Offsets just after a sentence (or, for layout text, a line) ends."""
    ends = [m.end() for m in re.finditer(r"[.!?][\"'”’)\]]*(?=\s|$)", text)]
    if not prose:
        ends += [m.start() for m in re.finditer(r"\n", text)] + [len(text)]
    else:
        ends += [m.start() for m in re.finditer(r"\n", text) if is_list_item(_line_at(text, m))]
    return sorted(set(ends))


def _line_at(text: str, newline: re.Match[str]) -> str:
    start = text.rfind("\n", 0, newline.start()) + 1
    return text[start : newline.start()]


def shorten(text: str, max_chars: int, prose: bool = True) -> str | None:
    """Cut ``text`` at the last sentence boundary <= max_chars (None if there is none)."""
    if len(text) <= max_chars:
        return text
    cuts = [b for b in _boundaries(text, prose) if 0 < b <= max_chars]
    if not cuts:
        return None
    return text[: cuts[-1]].strip()


def readability_problem(text: str, min_chars: int = MIN_CHARS, min_words: int = MIN_WORDS) -> str:
    """Why ``text`` is unusable as an instruction ("" when it is fine)."""
    words = [t for t in text.split() if any(c.isalnum() for c in t)]
    if len(text) < min_chars or len(words) < min_words:
        return "too short"
    chars = [c for c in text if not c.isspace()]
    if sum(c.isalpha() for c in chars) / len(chars) < 0.5:
        return "mostly symbols"
    odd = sum(1 for c in chars if ord(c) > 127 and not c.isalpha())
    if odd / len(chars) > MAX_SYMBOL_SHARE:
        return "mostly non-ASCII symbols"
    cores = [t.strip("\"'“”‘’()[]{}<>.,;:!?*_`#") for t in words]
    alpha = [c.lower() for c in cores if c and any(ch.isalpha() for ch in c) and _wordlike(c)]
    if len(alpha) / len(words) < MIN_ALPHA_WORD_SHARE:
        return "too few real words"
    if alpha:
        _, top = Counter(alpha).most_common(1)[0]
        if top >= 4 and top / len(words) > MAX_REPEATED_WORD_SHARE:
            return "a word repeats too often"
    return ""


def _wordlike(core: str) -> bool:
    return all(ch.isalpha() or ch in "'’-/" for ch in core)


def repair_text(text: str, max_chars: int, prose: bool = True) -> str | None:
    """Clean ``text`` into a usable instruction, or None when it cannot be.

    ``prose=True`` (the "system" component): whitespace collapses, the text must end in a
    sentence (a missing final period is added; a cut-off final fragment is dropped).
    ``prose=False`` (templates, examples): line structure is kept, the length minimum is lower.
    """
    if not text or not text.strip():
        return None
    text = strip_chatter(text)
    text = _collapse_whitespace(text)
    if not text:
        return None
    text = _drop_repeats(text)
    if prose:
        finished = _finish_last_sentence(text)
        if finished is None:
            return None
        text = finished
    short = shorten(text, max_chars, prose)
    if short is None:
        return None
    text = short
    if prose and readability_problem(text):
        return None
    if not prose and readability_problem(text, min_chars=8, min_words=2):
        return None
    return text


def repair_child(
    child: PolicyGenome, max_chars: int, only: Iterable[str] | None = None
) -> PolicyGenome | None:
    """``repair_text`` on each component (or only those named in ``only``, e.g. the ones an
    operator changed). None when any of them cannot be repaired."""
    names = set(child.components) if only is None else set(only) & set(child.components)
    fixed = dict(child.components)
    for name in sorted(names):
        text = repair_text(fixed[name], max_chars, prose=name in PROSE_COMPONENTS)
        if text is None:
            return None
        fixed[name] = text
    if fixed == dict(child.components):
        return child
    return replace(child, components=fixed)
