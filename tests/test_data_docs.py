"""docs/data.md: every example record loads with its task's own loader (so the documented
format is the one the code reads), and every task that ships is documented there."""

from __future__ import annotations

import json
import re
from pathlib import Path

from evotrainer.tasks.registry import BUILTIN

DOC = Path(__file__).resolve().parents[1] / "docs" / "data.md"
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```json\n(.*?)\n```", re.S)


def _examples() -> list[tuple[str, dict]]:
    return [(task, json.loads(body)) for task, body in EXAMPLE.findall(DOC.read_text())]


def test_every_example_record_loads(tmp_path):
    from evotrainer.config import config_from_dict
    from evotrainer.tasks.registry import build_task

    examples = _examples()
    assert {t for t, _ in examples} == set(BUILTIN), "a shipped task without an example"
    for k, (name, record) in enumerate(examples):
        # loading runs no code: the code gym may load without bubblewrap (absent on some
        # machines; `auto` refuses to build the task there)
        section = {"name": name, **({"sandbox": "unsafe-process"} if name == "code" else {})}
        task = build_task(config_from_dict({"task": section}).task)
        path = tmp_path / f"example-{k}.jsonl"
        path.write_text(json.dumps(record) + "\n")
        [inst] = task.load(path)
        assert inst.id == str(record.get("id", record.get("task_id")))


def test_the_meeting_examples_carry_their_references(tmp_path):
    from evotrainer.tasks.meetings.task import MeetingTask

    full, minutes = [r for t, r in _examples() if t == "meetings"]
    for k, record in enumerate((full, minutes)):
        (tmp_path / f"m{k}.jsonl").write_text(json.dumps(record) + "\n")
    [a] = MeetingTask().load(tmp_path / "m0.jsonl")
    assert len(a.payload.decisions) == 2 and len(a.payload.action_items) == 2
    assert a.payload.has_action_items
    [b] = MeetingTask().load(tmp_path / "m1.jsonl")
    assert b.payload.summary == ("The build was fixed.", "Bo reviews the release notes today.")
    assert not b.payload.has_action_items


def test_the_code_examples_have_visible_and_hidden_tests(tmp_path):
    from evotrainer.tasks.code.task import CodeTask

    for k, record in enumerate(r for t, r in _examples() if t == "code"):
        (tmp_path / f"c{k}.jsonl").write_text(json.dumps(record) + "\n")
        [inst] = CodeTask(sandbox="unsafe-process").load(tmp_path / f"c{k}.jsonl")  # no code runs
        assert inst.payload.visible and (inst.payload.hidden or inst.payload.check)
