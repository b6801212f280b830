"""The meeting task's words for the lexical operators: style phrases (keyword operator, seed
variations) and the domain synonyms the synonym operator may swap (operators/vocabulary.py)."""

from __future__ import annotations

from evotrainer.operators.vocabulary import InstructionVocabulary

# phrase -> topic. Phrases of the same topic exclude each other.
STYLE_PHRASES: dict[str, str] = {
    "Be rigorous.": "rigour",
    "Be accurate and rigorous.": "rigour",
    "Be concise.": "length",
    "Keep the minutes short and to the point.": "length",
    "Be thorough and detailed.": "length",
    "Group items by department.": "grouping",
    "Group the action items by department.": "grouping",
    "Group the notes by topic.": "grouping",
    "Use bullet points.": "bullets",
    "Write every point as a bullet point.": "bullets",
    "Give each action item an owner.": "owner",
    "Write each action item as 'Owner: task'.": "owner",
    "Start with a one-line title.": "title",
    "Begin with a short title for the meeting.": "title",
    "List at most 5 action items.": "count",
    "List between 2 and 5 action items.": "count",
    "Only include decisions that were actually made.": "decisions",
    "State every decision that was made.": "decisions",
    "Do not invent names, dates or facts.": "faithful",
    "Use only information from the transcript.": "faithful",
    "Ignore small talk and off-topic chatter.": "noise",
    "Skip greetings and small talk.": "noise",
    "Include the date of the meeting.": "date",
    "Mention deadlines when they are given.": "deadline",
    "Add a short section for each topic.": "sections",
    "Use clear headings for topics, decisions and action items.": "sections",
    "Write in plain, neutral language.": "tone",
    "Use the exact names of the participants.": "names",
    "Check that every action item was really agreed in the meeting.": "verify",
    "Keep the order in which topics were discussed.": "order",
}

# The SPEC's examples of seed variation keywords ("rigorous", "concise", "group by department").
SEED_PHRASES: tuple[str, ...] = (
    "Be rigorous.",
    "Be concise.",
    "Group items by department.",
    "Use bullet points.",
    "Give each action item an owner.",
    "Start with a one-line title.",
    "List at most 5 action items.",
    "Only include decisions that were actually made.",
    "Do not invent names, dates or facts.",
    "Ignore small talk and off-topic chatter.",
)

# meeting words the synonym operator may swap (the general instruction words are in
# operators/synonyms.py)
SYNONYMS: dict[str, tuple[str, ...]] = {
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
    "secretary": ("minute-taker", "note-taker"),
    "participants": ("attendees",),
    "attendees": ("participants",),
    "speaker": ("participant",),
    "deadline": ("due date",),
    "due date": ("deadline",),
    "responsible": ("accountable",),
    "discussed": ("covered", "addressed"),
    "agreed": ("decided", "settled"),
    "assigned": ("allocated", "given"),
    "developed": ("evolved", "unfolded", "progressed"),
    "small talk": ("chit-chat", "off-topic chatter"),
}

VOCABULARY = InstructionVocabulary(
    phrases=STYLE_PHRASES, seed_phrases=SEED_PHRASES, synonyms=SYNONYMS
)
