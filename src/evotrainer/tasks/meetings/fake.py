"""``fake:minutes``: a zero-latency fake LLM for the meeting task, so its plumbing (a run, an
eval, a benchmark profile) runs in seconds without a model. For the task's prompt it writes
plausible minutes from the transcript itself (a title, topics, a decision, 'Owner: task' items;
how many depends on a hash of the instruction, so that different policies score differently);
for anything else (operator, reflection and meta-prompt calls) a rewritten instruction chosen
by a hash of the request. Deterministic. The scores mean nothing about any model."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from evotrainer.llm.base import SamplingParams
from evotrainer.llm.fakes import FunctionLLM
from evotrainer.tasks.meetings.render import HEADER, SEPARATOR
from evotrainer.types import Message

_TURN = re.compile(r"^([^:\n]{1,60}):\s+(.+)$")
_WORD = re.compile(r"[A-Za-z][a-z]{3,}")


def plausible_minutes(transcript: str, instruction: str = "") -> str:
    """Minutes built from the transcript itself: a title, topics from the first turns, a decision,
    and up to three 'Owner: task' items owned by the first speakers. Deterministic. With an
    ``instruction`` the number of topics (1-4) and of action items (0-3) depends on a hash of
    it, so that different policies score differently on the fake model."""
    n_topics, n_items = 3, 3
    if instruction:
        k = int(hashlib.sha1(instruction.encode()).hexdigest(), 16)
        n_topics, n_items = 1 + k % 4, (k // 4) % 4
    turns = [m.groups() for line in transcript.splitlines() if (m := _TURN.match(line.strip()))]
    speakers: list[str] = []
    for spk, _ in turns:
        if spk not in speakers:
            speakers.append(spk)
    words = [w.lower() for _, text in turns[:40] for w in _WORD.findall(text)]
    common = [w for w, _ in sorted(_counts(words).items(), key=lambda kv: (-kv[1], kv[0]))][:6]
    topics = common[:n_topics] or ["project"]
    lines = [f"# Minutes: {topics[0].title()} meeting", "", "## Topics"]
    lines += [f"- Discussion of the {t}" for t in topics]
    lines += ["", "## Decisions", f"- The team agreed on the {common[-1] if common else 'plan'}"]
    lines += ["", "## Action items"]
    for spk, topic in zip(speakers[:n_items], (common[3:] or topics) * 3, strict=False):
        lines.append(f"- {spk}: follow up on the {topic}")
    return "\n".join(lines)


def _counts(words: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for w in words:
        out[w] = out.get(w, 0) + 1
    return out


_REWRITES = (
    "Write meeting minutes with a title, the topics discussed, the decisions and at most five "
    "action items formatted as 'Owner: task'.",
    "Summarise the meeting as bullet points grouped by topic, list every decision, and end with "
    "the action items as 'Owner: task'.",
    "Be concise and rigorous. Give a title, the key topics, the decisions made and the follow-up "
    "tasks with their owners.",
    "Read the transcript, then write structured minutes: title, topics, decisions and up to five "
    "action items, each as 'Owner: task'.",
)


def minutes_answer(messages: Sequence[Message], params: SamplingParams) -> str:
    """Minutes for a task prompt; a rewritten instruction for anything else (operator,
    reflection and meta-prompt calls), chosen by a hash of the request."""
    content = "\n".join(m.content for m in messages)
    if messages and messages[-1].content.startswith(HEADER):  # the task's layout
        block, _, instruction = content.split(HEADER, 1)[1].partition(f"\n{SEPARATOR}\n")
        return plausible_minutes(block, instruction.strip())
    k = int(hashlib.sha1(f"{content}|{params.seed}".encode()).hexdigest(), 16)
    return _REWRITES[k % len(_REWRITES)]


def minutes_llm() -> FunctionLLM:
    """The ``fake:minutes`` backend."""
    return FunctionLLM(minutes_answer, model_id="fake:minutes")
