"""The meeting task's structural search space: output templates, few-shot examples written from
human references, and rule-based edits for low reward components (what the ``template``,
``fewshot`` and ``feedback_edit`` operators draw on)."""

from __future__ import annotations

from evotrainer.operators.base import FeedbackEdit
from evotrainer.tasks.meetings.schema import Meeting

# One section per block; "<...>" marks what the agent fills in.
TEMPLATES: tuple[str, ...] = (
    "Summary: <what the meeting discussed>\nDecisions:\n- <decision>\n"
    "Action items:\n- <owner>: <task>",
    "Title: <title>\nTopics discussed:\n- <topic>\nDecisions:\n- <decision>\n"
    "Action items:\n- <owner>: <task>",
    "Summary:\n<three to five sentences on what was discussed and who presented what>\n"
    "Decisions:\n- <decision>\nAction items:\n- <owner>: <task>",
    "# <meeting title>\n## Discussion\n<what was discussed, in order>\n## Decisions\n"
    "- <decision>\n## Action items\n- <owner>: <task>",
    "Purpose of the meeting: <one sentence>\nMain points:\n- <point>\n"
    "Outcome: <what was decided>\nNext steps:\n- <owner>: <task>",
    "Overview: <one paragraph: who presented what, what the group discussed and decided>\n"
    "Action items:\n- <owner>: <task>",
)

_ACTIONS = (
    FeedbackEdit("system", "List each action item on its own line as 'Owner: task'."),
    FeedbackEdit("template", "Action items:\n- <owner>: <task>"),
)
_COVERAGE = (
    FeedbackEdit(
        "system", "Summarise what was discussed in several full sentences, topic by topic."
    ),
    FeedbackEdit("system", "Say who presented what and what the group concluded."),
    FeedbackEdit("template", "Summary: <what the meeting discussed, topic by topic>"),
)
_DECISIONS = (
    FeedbackEdit("system", "State every decision that was made."),
    FeedbackEdit("template", "Decisions:\n- <decision>"),
)

EDITS: dict[str, tuple[FeedbackEdit, ...]] = {
    "completeness": _COVERAGE,
    "ref_rougeL": _COVERAGE,
    "format": (
        FeedbackEdit("system", "Start with a one-line title and write the points as bullets."),
        FeedbackEdit("template", "Title: <title>\nKey points:\n- <point>"),
    ),
    "action_count": _ACTIONS,
    "owner_accuracy": (
        FeedbackEdit("system", "Give each action item the name of the person who agreed to it."),
        *_ACTIONS,
    ),
    "ref_action_item_f1": (
        FeedbackEdit("system", "Only list action items that someone agreed to do."),
        *_ACTIONS,
    ),
    "ref_decision_recall": _DECISIONS,
    "conciseness": (FeedbackEdit("system", "Be concise: leave out small talk and repetition."),),
    "faithfulness": (
        FeedbackEdit("system", "Use only names and facts that appear in the transcript."),
    ),
}


def reference_minutes(meeting: Meeting) -> str | None:
    """A meeting's human reference written as minutes (summary, decisions, action items), or
    None when it has no reference summary."""
    if not meeting.summary:
        return None
    parts = ["Summary: " + " ".join(s.strip() for s in meeting.summary)]
    if meeting.decisions:
        parts.append("Decisions:\n" + "\n".join(f"- {d.strip()}" for d in meeting.decisions))
    items = list(meeting.action_items) or [a.as_text() for a in meeting.action_truth]
    if items:
        parts.append("Action items:\n" + "\n".join(f"- {a.strip()}" for a in items))
    return "\n".join(parts)
