"""The Python API's inputs (issue 51): examples as dicts, a pandas DataFrame, a Hugging Face
Dataset (or anything shaped like one), a data file; bad examples named by their index; a metric
function's returns checked; a task judged by a metric keeps its capabilities. No model."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from evotrainer.api.examples import instance_of, read_examples
from evotrainer.api.metric import KEY, ExampleMetric, scored, with_metric
from evotrainer.api.progress import LogEvents
from evotrainer.api.run import optimize
from evotrainer.errors import DataError, MetricError
from evotrainer.harness.reference import ReferenceComponent, _MetricRows
from evotrainer.run import events as ev
from evotrainer.tasks.base import ReadsText, WritesInstances
from evotrainer.tasks.meetings.task import MeetingTask

FIXTURE = Path(__file__).parent / "fixtures" / "synthetic_meetings.jsonl"


def records() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def without_ids() -> list[dict]:
    return [{k: v for k, v in r.items() if k != "id"} for r in records()]


TASK = MeetingTask()


def test_dicts_become_the_tasks_instances_with_ids_made_from_content():
    ex = read_examples(TASK, without_ids(), "trainset")
    assert len(ex.instances) == 3
    assert all(i.id.startswith("ex-") for i in ex.instances)
    assert len({i.id for i in ex.instances}) == 3
    assert [i.id for i in read_examples(TASK, without_ids(), "again").instances] == [
        i.id for i in ex.instances
    ]
    # the same example read again (say, in the valset) has the same id: it is held out
    assert read_examples(TASK, without_ids()[:1], "valset").instances[0].id == ex.instances[0].id
    # ids that are given are kept, and the metric function gets the example as given
    given = read_examples(TASK, records(), "valset")
    assert [i.id for i in given.instances] == [r["id"] for r in records()]
    assert given.records["synth-launch-01"]["references"] == records()[0]["references"]


def test_a_transcript_may_be_one_text_of_speaker_lines():
    text = "Anna: We ship on Friday.\nBen: I write the notes.\n  and the changelog."
    inst = read_examples(TASK, [{"transcript": text, "minutes": "Ship Friday."}], "t").instances[0]
    turns = inst.payload.transcript
    assert [t.speaker for t in turns] == ["Anna", "Ben"]
    assert turns[1].text == "I write the notes. and the changelog."
    assert isinstance(TASK, ReadsText)
    assert instance_of(TASK, text).payload.transcript == turns


def test_a_bad_example_is_named_by_its_index():
    data = without_ids()
    data[1] = {k: v for k, v in data[1].items() if k != "transcript"}
    with pytest.raises(DataError, match=r'^valset\[1\]: missing "transcript"'):
        read_examples(TASK, data, "valset")
    data = without_ids()
    data[2]["transcript"] = 7
    with pytest.raises(DataError, match=r'^trainset\[2\]: "transcript" must be a list'):
        read_examples(TASK, data, "trainset")
    with pytest.raises(DataError, match=r"trainset\[1\] is a str, not a mapping"):
        read_examples(TASK, [without_ids()[0], "a transcript"], "trainset")
    with pytest.raises(DataError, match=r"trainset\[2\] is the same example as trainset\[0\]"):
        read_examples(TASK, [*without_ids()[:2], without_ids()[0]], "trainset")
    twice = [records()[0], records()[0]]
    with pytest.raises(DataError, match=r'valset\[1\]: duplicate id "synth-launch-01" \(first on '):
        read_examples(TASK, twice, "valset")


def test_what_holds_no_examples_is_refused_by_name():
    with pytest.raises(DataError, match="one example: pass a list"):
        read_examples(TASK, without_ids()[0], "trainset")
    splits = {"train": SimpleNamespace(column_names=["transcript"])}
    with pytest.raises(DataError, match=r"DatasetDict: pass one split, e.g. ds\['train'\]"):
        read_examples(TASK, splits, "trainset")
    with pytest.raises(DataError, match="trainset holds no examples"):
        read_examples(TASK, [], "trainset")
    with pytest.raises(DataError, match="is a int, which holds no examples"):
        read_examples(TASK, 3, "trainset")


def test_a_pandas_dataframe():
    pd = pytest.importorskip("pandas", reason="pandas is not installed (it is optional)")
    frame = pd.DataFrame(without_ids())
    frame.loc[0, "meta"] = float("nan")  # a missing value in a column others fill
    ex = read_examples(TASK, frame, "trainset")
    assert len(ex.instances) == 3 and ex.instances[1].payload.transcript
    bad = frame.drop(columns=["transcript"])
    with pytest.raises(DataError, match=r'^trainset\[0\]: missing "transcript"'):
        read_examples(TASK, bad, "trainset")


class DatasetLike:
    """What a Hugging Face Dataset offers: rows by iteration, a column-oriented to_dict (which
    the API must not take for rows), column names."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows
        self.column_names = sorted({k for r in rows for k in r})

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def to_dict(self):
        return {c: [r.get(c) for r in self.rows] for c in self.column_names}


def test_a_hugging_face_dataset_or_anything_shaped_like_one():
    ex = read_examples(TASK, DatasetLike(without_ids()), "valset")
    assert len(ex.instances) == 3
    # columns named otherwise are mapped as data_columns maps a table's
    renamed = [{"dialogue": r["transcript"], "refs": r["references"]} for r in without_ids()]
    columns = {"transcript": "dialogue", "references": "refs"}
    ex = read_examples(TASK, DatasetLike(renamed), "valset", columns)
    assert ex.instances[0].payload.summary


def test_a_real_hugging_face_dataset():
    datasets = pytest.importorskip("datasets", reason="datasets is not installed (optional)")
    rows = [
        {"transcript": r["transcript"], "minutes": "\n".join(r["references"]["summary"])}
        for r in without_ids()
    ]
    ds = datasets.Dataset.from_list(rows)
    ex = read_examples(TASK, ds, "trainset")
    assert len(ex.instances) == 3 and ex.instances[0].payload.summary


def test_a_text_needs_a_task_that_reads_text():
    with pytest.raises(DataError, match="task 'stub' cannot read a bare text"):
        instance_of(SimpleNamespace(name="stub"), "Anna: hello")
    with pytest.raises(DataError, match="the transcript is empty"):
        instance_of(TASK, "  \n ")


def test_a_data_file(tmp_path):
    path = tmp_path / "inputs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in without_ids()) + "\n\n")
    assert len(read_examples(TASK, path, "inputs").instances) == 3
    path.write_text(json.dumps({"transcript": 3}) + "\n")
    with pytest.raises(DataError, match=rf"^{path}, line 1: \"transcript\" must be"):
        read_examples(TASK, path, "inputs")


# -- the metric function -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("result", "score", "feedback"),
    [
        (0.25, 0.25, ""),
        (True, 1.0, ""),
        ((0.5, "too long"), 0.5, "too long"),
        ([1, None], 1.0, ""),
        ({"score": 0.75, "feedback": "ok"}, 0.75, "ok"),
        (SimpleNamespace(score=0.1, feedback="names no owner"), 0.1, "names no owner"),
    ],
)
def test_a_metric_may_return_a_score_with_feedback(result, score, feedback):
    assert scored(result, "m") == (scored(result, "m").__class__(score, feedback))


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (None, "returned NoneType None"),
        ("good", "returned str 'good'"),
        (1.5, "returned the score 1.5, not in \\[0, 1\\]"),
        (math.nan, "returned the score nan"),
        ((0.5, 3), "returned the feedback int 3, not a text"),
        ((0.1, "a", "b"), "returned tuple"),
    ],
)
def test_a_metric_that_returns_no_score_is_a_clear_error(result, message):
    with pytest.raises(MetricError, match=f"metric m on example 'x' {message}"):
        scored(result, "metric m on example 'x'")


def _judged(fn):
    real = [{k: v for k, v in r.items() if k != "source"} for r in records()]  # the user's
    ex = read_examples(TASK, real, "valset")
    return ex, ExampleMetric(fn, TASK.validation_metric(), ex.records)


def test_the_metric_scores_the_example_the_instance_came_from():
    seen = []
    ex, metric = _judged(lambda e, a: seen.append((e["id"], a)) or (0.5, f"said {len(a)}"))
    inst = ex.instances[0]
    row = metric.score(inst, "minutes", TASK.parse("minutes"))
    assert seen == [("synth-launch-01", "minutes")]
    assert row[KEY] == 0.5 and row["feedback"] == {KEY: "said 7"}
    assert "rougeL" in row  # the task's own keys stay
    assert metric.aggregate([row, {**row, KEY: 1.0}])[KEY] == 0.75
    other = MeetingTask().synthetic_validation(1, 0)[0]  # from no example: not applicable
    assert metric.score(other, "x", TASK.parse("x"))[KEY] is None
    # on a real training example it is a reward component whose feedback reflection reads
    component = ReferenceComponent(KEY, _MetricRows(metric))
    assert (
        component.score(inst, "minutes", TASK.parse("minutes")).feedback == "metric 0.500: said 7"
    )


def test_a_metric_that_raises_scores_that_answer_0_and_says_why(caplog):
    def broken(example, answer):
        raise KeyError("answer")

    ex, metric = _judged(broken)
    with caplog.at_level(logging.WARNING, logger="evotrainer"):
        row = metric.score(ex.instances[0], "x", TASK.parse("x"))
        metric.score(ex.instances[1], "x", TASK.parse("x"))
    assert row[KEY] == 0.0 and "KeyError" in row["feedback"][KEY]
    assert len([r for r in caplog.records if "broken" in r.getMessage()]) == 1


def test_a_bad_metric_stops_the_run_before_any_call(tmp_path):
    data = records()
    with pytest.raises(MetricError, match=r"returned str 'good'.*a \(score, feedback\) pair"):
        optimize(
            trainset=data,
            valset=data,
            metric=lambda example, answer: "good",
            model="fake:minutes",
            run_dir=tmp_path / "run",
            cache__path=str(tmp_path / "c.sqlite"),
        )
    assert not (tmp_path / "run" / "checkpoints").exists()
    with pytest.raises(MetricError, match="not a function"):
        optimize(trainset=data, metric="rougeL", model="fake:minutes", run_dir=tmp_path / "r2")


def test_a_task_judged_by_a_metric_keeps_its_capabilities():
    _, metric = _judged(lambda e, a: 1.0)
    judged = with_metric(TASK, metric)
    assert judged.validation_metric() is metric and TASK.validation_metric() is not metric
    assert isinstance(judged, MeetingTask | WritesInstances | ReadsText)
    assert isinstance(judged, WritesInstances) and isinstance(judged, ReadsText)
    assert judged.max_input_tokens == TASK.max_input_tokens and judged.name == "meetings"


def test_the_log_observer_says_each_step(caplog):
    obs = LogEvents()
    events = [
        ev.Event(ev.VALIDATION_SET, {"message": "8 instances given", "n": 6}),
        ev.Event(ev.ESTIMATE, {"message": "estimate: about 100 LLM calls"}),
        ev.Event(ev.VALIDATION, {"role": "seed", "policy_id": "pA", "s_val": 0.25, "n": 6}),
        ev.Event(ev.WARNING, {"message": "careful"}),
        ev.Event(ev.CHECKPOINT, {"file": "ckpt-00001.json"}),
    ]
    with caplog.at_level(logging.INFO, logger="evotrainer"):
        for e in events:
            obs(e)
    said = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert said[:2] == [("INFO", "8 instances given"), ("INFO", "estimate: about 100 LLM calls")]
    assert "validating the best of it and the seeds on 6 examples" in said[2][1]
    assert said[3:] == [("INFO", "seed policy pA: s_val 0.250"), ("WARNING", "careful")]
