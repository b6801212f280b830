"""Examples held in memory, as the task's instances.

An example is one record of the task's data format (docs/data.md; the meeting task:
``{"id", "transcript", "references": {"summary", "action_items", "decisions"}}``, or free-form
``minutes``; a transcript may be a list of ``{"speaker", "text"}`` turns or one text of
"Speaker: text" lines). The examples may come as

- a list (or any iterable) of mappings: plain dicts;
- a pandas DataFrame (its rows) or a polars one, a Hugging Face ``Dataset`` (its rows): none of
  these packages is imported here, the object is asked for its rows;
- the path of a data file (JSONL; Parquet or a ``save_to_disk`` folder with ``evotrainer[hf]``).

``columns`` renames fields as the config's ``data_columns`` does (``{"transcript":
"dialogue:turns", "references.minutes": "summary"}``). Every example is read by the task's own
loader, so a bad one gets the loader's message, naming it by its index: ``trainset[3]: missing
"transcript"``. An example without an ``id`` gets one made from its content (``ex-`` and a hash),
so the same example in the trainset and the valset has the same id, and is kept out of training.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotrainer.errors import DataError
from evotrainer.tasks.base import ReadsText, Task
from evotrainer.tasks.tabular import is_table, read_rows, to_records
from evotrainer.types import Instance


@dataclass(frozen=True)
class Examples:
    """Examples read as the task's instances; ``records``: each instance's example as the
    caller gave it (its id filled in), what a metric function is handed."""

    instances: list[Instance]
    records: dict[str, Any]


def read_examples(
    task: Task, data: Any, name: str, columns: Mapping[str, str] | None = None
) -> Examples:
    """The examples ``data`` holds (see the module doc) as ``task``'s instances; DataError
    naming the example (``name[index]``, or the file and line) and what is wrong with it."""
    if isinstance(data, str | Path):
        labelled = _file_rows(Path(data))
    else:
        labelled = [(f"{name}[{i}]", row) for i, row in enumerate(rows_of(data, name))]
    if not labelled:
        raise DataError(f"{name} holds no examples")
    given = [(label, row) for label, row in labelled if isinstance(row, Instance)]
    rows = [(label, row) for label, row in labelled if not isinstance(row, Instance)]
    records = _records(rows, name, columns)
    instances = _load(task, records, [label for label, _ in rows], name) if records else []
    by_id: dict[str, Any] = {str(r["id"]): r for r in records}
    by_id.update({inst.id: inst for _, inst in given})
    out = [*instances, *(inst for _, inst in given)]
    _check_unique(out, name)
    return Examples(out, by_id)


def rows_of(data: Any, name: str) -> list[Any]:
    """The rows of a DataFrame (pandas, polars), a Hugging Face Dataset or any iterable."""
    if isinstance(data, str | bytes | Mapping) or data is None:
        what = "a mapping" if isinstance(data, Mapping) else type(data).__name__
        hint = (
            " (a Hugging Face DatasetDict: pass one split, e.g. ds['train'])"
            if isinstance(data, Mapping) and not _looks_like_a_record(data)
            else " (one example: pass a list of them)"
            if isinstance(data, Mapping)
            else ""
        )
        raise DataError(
            f"{name} is {what}{hint}: give a list of examples (dicts), a pandas DataFrame, a "
            "Hugging Face Dataset or the path of a data file"
        )
    if hasattr(data, "to_dicts"):  # polars
        return list(data.to_dicts())
    if hasattr(data, "iterrows") and hasattr(data, "to_dict"):  # pandas
        return list(data.to_dict(orient="records"))
    try:
        return list(data)  # a Dataset yields its rows as dicts; a list, a generator ...
    except TypeError:
        raise DataError(
            f"{name} is a {type(data).__name__}, which holds no examples: give a list of "
            "examples (dicts), a pandas DataFrame, a Hugging Face Dataset or a data file"
        ) from None


def _looks_like_a_record(data: Mapping[Any, Any]) -> bool:
    """A mapping of fields (one example) rather than of splits (a DatasetDict)."""
    return not all(hasattr(v, "column_names") for v in data.values())


def _file_rows(path: Path) -> list[tuple[str, Any]]:
    """The records of a JSONL file (blank lines skipped) or a table, labelled by line/row."""
    if is_table(path):
        return [(f"{path}, row {i}", row) for i, row in enumerate(read_rows(path), start=1)]
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from None
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append((f"{path}, line {n}", json.loads(line)))
        except ValueError as exc:
            raise DataError(f"{path}, line {n}: bad JSON: {exc}") from None
    return out


def _records(
    rows: Sequence[tuple[str, Any]], name: str, columns: Mapping[str, str] | None
) -> list[dict[str, Any]]:
    """Each row as a plain record (numpy and pandas values as Python ones, missing values
    dropped), renamed by ``columns``, its id filled in."""
    plain = []
    made: dict[str, str] = {}  # an id made from content -> the example it was made for
    for label, row in rows:
        if not isinstance(row, Mapping):
            raise DataError(
                f"{label} is a {type(row).__name__}, not a mapping of the task's fields "
                "(docs/data.md: for meetings, {'transcript': ..., 'references': {...}})"
            )
        record = _plain(row)
        if record.get("id") in (None, ""):
            record["id"] = content_id(record)
            if record["id"] in made:
                raise DataError(f"{label} is the same example as {made[record['id']]}")
            made[record["id"]] = label
        plain.append(record)
    return to_records(plain, columns, name) if columns else plain


def content_id(record: Mapping[str, Any]) -> str:
    """The id of an example that has none: a hash of its content."""
    text = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
    return "ex-" + hashlib.sha1(text.encode()).hexdigest()[:10]


def _plain(value: Any) -> Any:
    """A value of a DataFrame or a Dataset as plain Python: numpy scalars and arrays as
    numbers and lists, NaN and None dropped from mappings."""
    if isinstance(value, Mapping):
        out = {str(k): _plain(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None}
    if isinstance(value, str | bytes | bool | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if hasattr(value, "tolist"):  # a numpy array or scalar
        return _plain(value.tolist())
    if isinstance(value, Iterable):
        return [_plain(v) for v in value]
    return value


_LINE = re.compile(r"\bline (\d+)")


def _load(
    task: Task, records: list[dict[str, Any]], labels: list[str], name: str
) -> list[Instance]:
    """``task.load`` on the records written as JSONL; its messages name the examples."""
    with tempfile.TemporaryDirectory(prefix="evotrainer-examples-") as tmp:
        path = Path(tmp) / f"{name}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
        try:
            instances = task.load(path)
        except DataError as exc:
            raise DataError(_relabel(str(exc), str(path), labels)) from None
    if len(instances) != len(records):
        raise DataError(
            f"{name}: the task read {len(instances)} instances from {len(records)} examples"
        )
    return list(instances)


def _relabel(message: str, path: str, labels: list[str]) -> str:
    """A loader's message about the temporary file, naming examples instead of lines."""

    def label(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return labels[n - 1] if 0 < n <= len(labels) else m.group(0)

    message = message.replace(f"{path}, line", "line").replace(path, "the examples")
    return _LINE.sub(label, message)


def _check_unique(instances: Sequence[Instance], name: str) -> None:
    seen: set[str] = set()
    for inst in instances:
        if inst.id in seen:
            raise DataError(f'{name}: two examples have the id "{inst.id}"')
        seen.add(inst.id)


def instance_of(task: Task, example: Any, instance_id: str = "input") -> Instance:
    """One example as an instance: a text (``tasks.base.ReadsText``: the meeting task reads a
    transcript of "Speaker: text" lines), a mapping of the task's fields, or an Instance."""
    if isinstance(example, Instance):
        return example
    if isinstance(example, str):
        if not isinstance(task, ReadsText):
            raise DataError(
                f"task {task.name!r} cannot read a bare text: give the example as a mapping of "
                "its data format's fields (docs/data.md)"
            )
        return task.text_instance(example, instance_id)
    if not isinstance(example, Mapping):
        raise DataError(
            f"the example is a {type(example).__name__}: give a text or a mapping of the task's "
            "fields"
        )
    record = {"id": instance_id, **example}
    return read_examples(task, [record], "example").instances[0]
