"""A template's blanks in a model's answer: the slots an output template or the model's own
habit puts where an action item's owner or task should be ("<owner>: <task>", "[insert action
item here]", "Owner: task"). The parser (parser.py) drops an action item that is only a blank,
so a copied template earns no action-item credit (issue 46)."""

from __future__ import annotations

import re

PLACEHOLDER_OWNER = frozenset(
    {"name", "owner", "person", "who", "[name]", "<name>", "x", "someone"}
)
PLACEHOLDER_TASK = frozenset(
    {"task", "action", "todo", "to-do", "[task]", "<task>", "description", "item", "action item"}
)
# a template's blank copied into the answer: "<owner>: <task>", "[Name] - [Task]", "{task}"
_BRACKETED = re.compile(r"<[^<>]{1,60}>|\[[^\[\]]{1,60}\]|\{[^{}]{1,60}\}")
# "[insert action item here]", "Insert task here", "(add more action items as needed)"
_INSERT_HERE = re.compile(
    r"^\W*(insert|enter|fill in|add more)\b.{0,40}\b(action items?|tasks?|items?|names?|owners?|"
    r"details|text)\b.{0,20}\b(here|as needed)\W*$",
    re.I,
)
# "Owner: task", "Name - Action item": a template's labels with nothing filled in
_LABELS_ONLY = re.compile(r"^(\w+)\s*[:\-\u2013\u2014]\s*(\w+(?: \w+)?)$")


def is_placeholder(task: str, owner: str | None = None) -> bool:
    """A template's blank, not an action item: a placeholder task without a real owner
    ("Name: task"), only bracketed slots and punctuation, "insert ... here", or unfilled labels
    ("Owner: task"). Issue 46: evolved templates made the model copy "1. [insert action item
    here]" into its answers, which counted as action items."""
    if task.lower() in PLACEHOLDER_TASK and (owner is None or owner.lower() in PLACEHOLDER_OWNER):
        return True
    if _INSERT_HERE.match(task):
        return True
    m = _LABELS_ONLY.match(task)
    if m and m.group(1).lower() in PLACEHOLDER_OWNER and m.group(2).lower() in PLACEHOLDER_TASK:
        return True
    rest = _BRACKETED.sub("", task)
    return rest != task and not any(ch.isalnum() for ch in rest)
