"""Test fakes for the engine: a meeting task that remembers which instance each prompt was
rendered for, and a scripted LLM whose answer depends on the policy text.

Policy families:
- "hack": instructions containing "exactly three" -> three vacuous action items (games R3);
- otherwise "honest": a title, every topic with its keywords, the decisions, and only the first
  real action item (so R3 = 0: honest minutes do not hit the 2..5 count).
"""

from __future__ import annotations

import hashlib

from evotrainer.llm.fakes import FunctionLLM
from evotrainer.tasks.meetings.task import MeetingTask

HACK = "exactly three"
SEP = "\n---\n"


class RecordingMeetingTask(MeetingTask):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.by_prompt = {}

    def render(self, instructions, instance):
        messages, truncated = super().render(instructions, instance)
        self.by_prompt[messages[-1].content] = instance.payload
        return messages, truncated


def honest_minutes(meeting) -> str:
    lines = [f"# Minutes: {meeting.topics[0].title if meeting.topics else 'Meeting'}", ""]
    lines.append("## Topics")
    for t in meeting.topics:
        lines.append(f"- {t.title}: {', '.join(t.keywords)}")
    if not meeting.topics:
        lines += [f"- {s}" for s in meeting.summary[:3]]
    lines.append("## Decisions")
    lines += [f"- {d}" for d in meeting.decisions] or ["- none"]
    lines.append("## Action items")
    if meeting.action_truth:
        a = meeting.action_truth[0]
        lines.append(f"- {a.owner}: {a.task}")
    elif meeting.action_items:
        lines.append(f"- {meeting.action_items[0]}")
    return "\n".join(lines)


OPENERS = (
    "Write clear",
    "Produce concise",
    "Draft careful",
    "Prepare structured",
    "Compose short",
    "Write faithful",
)
FOCUS = (
    "the decisions",
    "every decision that was made",
    "the agreed decisions and owners",
    "the main decisions in order",
    "decisions, grouped by topic",
    "the outcome of each discussion",
    "what was decided and by whom",
    "the decisions and open questions",
)

HACK_MINUTES = (
    "# Minutes\n- The meeting took place.\n- Things were discussed.\n"
    "## Action items\n- Someone: follow up\n- Team: check\n- All: review"
)


def family_llm(task: RecordingMeetingTask) -> FunctionLLM:
    def answer(messages, params):
        content = messages[-1].content
        meeting = task.by_prompt.get(content)
        if meeting is None:  # an operator call (paraphrase, merge, reflection): honest advice
            k = int(hashlib.sha1(content.encode()).hexdigest(), 16)
            focus = FOCUS[k % len(FOCUS)]
            opener = OPENERS[(k // len(FOCUS)) % len(OPENERS)]
            return f"{opener} meeting minutes with a title, the topics and {focus}."
        if HACK in content.lower():
            return HACK_MINUTES
        return honest_minutes(meeting)

    return FunctionLLM(answer, model_id="fake:families")


def write_corpus(path, n: int, seed: int, source: str = "CORPUS", difficulty: float = 0.2):
    """A JSONL file of ``n`` meetings in the shared data format, marked as a real corpus
    (``source``), with references: a stand-in for AMI that needs no ../shared."""
    import json
    import random

    from evotrainer.tasks.meetings.generator import MeetingGenerator

    gen = MeetingGenerator()
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            m = gen.meeting(difficulty, rng, id=f"{source.lower()}-{seed}-{i}")
            rec = m.to_json()
            rec["source"] = source
            refs = rec["references"]
            refs["action_items"] = [a.as_text() for a in m.action_truth]
            fh.write(json.dumps(rec) + "\n")
    return path
