"""Reference-free completeness: on an unlabelled real meeting (no topics, no reference summary)
R1 checks the minutes for the transcript's salient words (tasks/meetings/salience.py)."""

from __future__ import annotations

from evotrainer.tasks.meetings.generator import meeting_instance
from evotrainer.tasks.meetings.rewards import component_registry
from evotrainer.tasks.meetings.salience import transcript_terms
from evotrainer.tasks.meetings.schema import Meeting, Turn
from evotrainer.tasks.meetings.words import MINUTES_VOCAB, STOPWORDS, stem, tokens

TURNS = [
    ("Anna (A)", "Okay so yeah, the budget for the robot arm is the first thing."),
    ("Ben (B)", "The robot arm budget is tight, basically we need a cheaper gripper."),
    ("Anna (A)", "Right, a cheaper gripper. And the gripper supplier can deliver in March?"),
    ("Cleo (C)", "The supplier said March, yeah. I'll check the gripper price with them."),
    ("Ben (B)", "Um okay. And the robot software, I mean, the calibration is still open."),
    ("Cleo (C)", "Calibration of the robot, yes, I can do the calibration next week."),
]


def unlabelled() -> Meeting:
    return Meeting(id="u1", source="test", transcript=tuple(Turn(s, t) for s, t in TURNS))


def test_salient_terms_are_the_words_several_speakers_keep_using():
    terms = transcript_terms(TURNS, tokens, stem, STOPWORDS | MINUTES_VOCAB, k=5)
    assert terms[:2] == [stem("robot"), stem("gripper")]  # 4 times, 3 speakers; robot first
    assert stem("calibration") in terms[:4]
    assert not {stem(w) for w in ("yeah", "okay", "basically", "mean", "said")} & set(terms)


def test_completeness_on_an_unlabelled_meeting_counts_the_transcript_topics():
    inst = meeting_instance(unlabelled())
    comp = component_registry()["completeness"]
    good = comp.score(
        inst, "# Minutes\n- Gripper budget for the robot arm\n- Robot calibration", None
    )
    off = comp.score(inst, "# Minutes\n- The weather was discussed\n- Lunch options", None)
    assert good.applicable and good.score > off.score and off.score == 0.0
    assert "salient words of the transcript" in good.feedback
