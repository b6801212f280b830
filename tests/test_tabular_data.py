"""Data from a Parquet file or a Hugging Face ``datasets`` folder (``save_to_disk``), read
offline and mapped by the ``data_columns`` spec into the task's record format (issue 35,
item 8): the same instances as the JSONL, a dialogue-and-summary dataset, clear errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evotrainer.errors import DataError, MissingExtraError
from evotrainer.run.data_identity import instances_sha256
from evotrainer.tasks.meetings.task import MeetingTask
from evotrainer.tasks.tabular import is_table, load_data
from tests.fake_meetings import write_corpus

pa = pytest.importorskip("pyarrow", reason="needs the hf extra (pyarrow)")
import pyarrow.parquet as pq  # noqa: E402

DIALOGUES = [
    {
        "dialogue": "Amanda: I baked cookies. Do you want some?\r\nJerry: Sure!\r\n"
        "Amanda: I'll bring you tomorrow :-)",
        "summary": "Amanda baked cookies and will bring Jerry some tomorrow.",
    },
    {
        "dialogue": "Olivia: Who are you voting for?\nOliver: Liberals as always.\n"
        "Olivia: Me too!!\nOliver: Great",
        "summary": "Olivia and Olivier are voting for liberals in this election.",
    },
]
SPEC = {"id": "@row", "transcript": "dialogue:turns", "references.minutes": "summary"}


def _records(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_a_parquet_file_with_the_jsonl_columns_gives_the_same_meetings(tmp_path):
    jsonl = write_corpus(tmp_path / "corpus.jsonl", 4, seed=1)
    table = tmp_path / "corpus.parquet"
    pq.write_table(pa.Table.from_pylist(_records(jsonl)), table)
    task = MeetingTask()
    assert is_table(table) and not is_table(jsonl)
    assert instances_sha256(load_data(task, table)) == instances_sha256(task.load(jsonl))


def test_a_save_to_disk_folder_of_dialogues_and_summaries(tmp_path):
    datasets = pytest.importorskip("datasets", reason="writes the folder with datasets itself")
    folder = tmp_path / "dialogues"
    datasets.Dataset.from_list(DIALOGUES).save_to_disk(str(folder))
    insts = load_data(MeetingTask(), folder, SPEC)
    assert [i.id for i in insts] == ["dialogues-1", "dialogues-2"]
    m = insts[0].payload
    assert [t.speaker for t in m.transcript] == ["Amanda", "Jerry", "Amanda"]
    assert m.transcript[2].text == "I'll bring you tomorrow :-)"
    assert m.summary == ("Amanda baked cookies and will bring Jerry some tomorrow.",)
    assert m.source == "dialogues"


def test_a_dataset_dict_folder_asks_for_a_split(tmp_path):
    datasets = pytest.importorskip("datasets", reason="writes the folder with datasets itself")
    ds = datasets.Dataset.from_list(DIALOGUES)
    datasets.DatasetDict({"train": ds, "test": ds}).save_to_disk(str(tmp_path / "dd"))
    with pytest.raises(DataError, match=r"name one split's folder: .*dd/train, .*dd/test"):
        load_data(MeetingTask(), tmp_path / "dd", SPEC)
    assert len(load_data(MeetingTask(), tmp_path / "dd" / "test", SPEC)) == 2


def test_errors_name_the_table_the_row_and_the_columns(tmp_path):
    table = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(DIALOGUES), table)
    with pytest.raises(DataError, match=r"lacks; its columns: \['dialogue', 'summary'\]"):
        load_data(MeetingTask(), table, {**SPEC, "references.minutes": "abstract"})
    with pytest.raises(DataError, match=r"d\.parquet \(via data_columns\), row 1: missing \"id\""):
        load_data(MeetingTask(), table, {"transcript": "dialogue:turns"})


def test_the_code_task_reads_a_parquet_file_of_problems(tmp_path):
    from evotrainer.tasks.code.task import CodeTask

    row = {
        "task_id": "T/0",
        "prompt": 'def add(a, b):\n    """Add.\n    >>> add(1, 2)\n    3\n    """\n',
        "entry_point": "add",
        "canonical_solution": "    return a + b\n",
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
    }
    table = tmp_path / "problems.parquet"
    pq.write_table(pa.Table.from_pylist([row]), table)
    [inst] = load_data(CodeTask(sandbox="unsafe-process"), table)  # loading runs no code
    assert inst.id == "T/0" and inst.payload.visible


def test_without_pyarrow_the_extra_is_named(tmp_path, monkeypatch):
    table = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(DIALOGUES), table)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'evotrainer\[hf\]'"):
        load_data(MeetingTask(), table, SPEC)


def test_a_run_validates_and_trains_on_tables(tmp_path):
    datasets = pytest.importorskip("datasets", reason="writes the folder with datasets itself")
    from tests.fake_runs import fake_run, small_config

    rows = _records(write_corpus(tmp_path / "c.jsonl", 14, seed=2))
    for r in rows:  # a dataset's own column names
        r["meeting_id"] = r.pop("id")
    val = tmp_path / "val"
    datasets.Dataset.from_list(rows[:8]).save_to_disk(str(val))
    train = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows[8:]), train)
    cfg = small_config(
        tmp_path / "cache.sqlite",
        data_columns={"id": "meeting_id"},
        validation={"data": str(val), "confirm": 3, "limit": None},
        harness={"real_data": str(train)},
        inner={"population": 3, "elites": 1, "tasks_per_generation": 2, "generations": 1},
    )
    co = fake_run(cfg, tmp_path / "run")
    assert co.components.validation_set.source == str(val.resolve())
    assert len(co.components.validation_set.instances) == 8
    assert {i.id for i in co.components.validation_set.instances} == {
        r["meeting_id"] for r in rows[:8]
    }
    assert len(co.components.real_pool.instances) == 6


def test_eval_reads_a_dataset_folder_by_its_column_spec(tmp_path):
    datasets = pytest.importorskip("datasets", reason="writes the folder with datasets itself")
    from typer.testing import CliRunner

    from evotrainer.cli.app import app

    folder = tmp_path / "dialogues"
    datasets.Dataset.from_list(DIALOGUES).save_to_disk(str(folder))
    out = tmp_path / "m.json"
    res = CliRunner().invoke(
        app,
        [
            "eval",
            "--data",
            str(folder),
            "--model",
            "fake:minutes",
            "--prompt",
            "seed:A",
            "--set",
            f"cache.path={tmp_path / 'c.sqlite'}",
            "--set",
            'data_columns={id: "@row", transcript: "dialogue:turns", references.minutes: summary}',
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(out.read_text())["policies"][0]["per_meeting"]
    assert [r["instance_id"] for r in rows] == ["dialogues-1", "dialogues-2"]
