"""Fakes for the meta-objective and review tests: an LLM whose minutes depend on the policy's
wording, and a scripted reviewer whose taste disagrees with ROUGE.

Styles (by words in the policy text):
- "summary" (the word "summar"): the first half of the meeting's summary prose (close to the
  reference text, so ROUGE likes it; decisions, if any, buried in the prose) and the action
  items;
- "decisions" (the word "decision"): a title, every decision, the action items: shorter, less
  ROUGE overlap, but it says what was decided;
- anything else: honest minutes (fake_meetings.honest_minutes).
The scripted reviewer prefers minutes that list more of the meeting's decisions as items of
their own, then shorter ones: what a person reading minutes wants, and not what ROUGE-L +
action-item F1 measure.
"""

from __future__ import annotations

import hashlib

from evotrainer.llm.fakes import FunctionLLM
from evotrainer.tasks.meetings.render import SEPARATOR
from tests.fake_meetings import FOCUS, OPENERS, RecordingMeetingTask, honest_minutes

SUMMARY = "Summarise the meeting in a few sentences and list the action items."
DECISIONS = "Write minutes with a title, every decision taken, and the action items."
PLAIN = "Write the minutes of the meeting."


def styled_minutes(meeting, policy: str) -> str:
    t = policy.lower()
    actions = [f"- {a.owner}: {a.task}" for a in meeting.action_truth]
    title = meeting.topics[0].title if meeting.topics else "Meeting"
    if "decision" in t:
        return "\n".join(
            [f"# {title}", "## Decisions", *[f"- {d}" for d in meeting.decisions], "## Actions"]
            + actions
        )
    if "summar" in t:
        sentences = " ".join(meeting.summary).split(". ")
        prose = ". ".join(sentences[: max(1, len(sentences) // 2)]).rstrip(".") + "."
        return "\n".join(["# Summary", prose, "## Action items", *actions])
    return honest_minutes(meeting)


def styled_llm(task: RecordingMeetingTask) -> FunctionLLM:
    def answer(messages, params):
        content = messages[-1].content
        meeting = task.by_prompt.get(content)
        if meeting is None:  # an operator call: a new wording, sometimes with a style word
            k = int(hashlib.sha1(content.encode()).hexdigest(), 16)
            focus = FOCUS[k % len(FOCUS)]
            opener = OPENERS[(k // len(FOCUS)) % len(OPENERS)]
            return f"{opener} meeting minutes with a title, the topics and {focus}."
        policy = content.split(f"\n\n{SEPARATOR}\n", 1)[-1]
        return styled_minutes(meeting, policy)

    return FunctionLLM(answer, model_id="fake:styled")


def reviewer_prefers(meeting, minutes_a: str, minutes_b: str) -> str:
    """The scripted reviewer's verdict: "A", "B" or "tie"."""

    def taste(text: str) -> tuple[int, int]:
        items = [ln.lower() for ln in text.splitlines() if ln.lstrip().startswith("- ")]
        listed = sum(1 for d in meeting.decisions if any(d.lower()[:40] in ln for ln in items))
        return listed, -len(text.split())

    a, b = taste(minutes_a), taste(minutes_b)
    return "A" if a > b else "B" if b > a else "tie"
