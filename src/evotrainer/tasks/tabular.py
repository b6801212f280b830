"""Data in tables: a Parquet file, or a Hugging Face ``datasets`` folder written by
``Dataset.save_to_disk`` (one split: its ``state.json`` and Arrow files), read offline with
pyarrow alone (``pip install 'evotrainer[hf]'``; the ``datasets`` package is not needed and
nothing is downloaded). Each row becomes one record of the task's JSONL format (docs/data.md),
which the task's own loader then reads, with the same checks and messages as a JSONL file.

The column spec (``data_columns`` in the config) maps the task's record fields to columns:

    data_columns:
      id: dialogue_id               # field <- column
      transcript: dialogue:turns    # ':turns': a text column split into turns, one per
                                    #   "Speaker: text" line (meetings)
      references.minutes: summary   # a dotted field is nested: {"references": {"minutes": ...}}

A field the spec does not name is read from the column of its own name (so a table with the
JSONL's own columns needs no spec); ``id: "@row"`` numbers the rows (``<name>-1``, ...). Lists
and structs in the table become JSON lists and objects. Rows are counted from 1 in errors.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evotrainer.errors import DataError, MissingExtraError
from evotrainer.types import Instance

PARQUET = (".parquet", ".pq")
TURNS = ":turns"
ROW_ID = "@row"
_SPEAKER = re.compile(r"^\s*([^:\n]{1,60}?)\s*:\s*(.*)$")


def is_table(path: str | Path) -> bool:
    """A Parquet file or a ``save_to_disk`` folder (a dataset, or a DatasetDict of splits)."""
    p = Path(path)
    if p.is_file():
        return p.suffix.lower() in PARQUET
    return p.is_dir() and ((p / "state.json").is_file() or (p / "dataset_dict.json").is_file())


def is_data(path: str | Path) -> bool:
    """Something ``load_data`` reads: a file (JSONL, Parquet) or a dataset folder."""
    return Path(path).is_file() or is_table(path)


def _pyarrow() -> Any:
    try:
        # lazy: optional dependency (extra hf)
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError(
            "reading Parquet files and Hugging Face dataset folders needs the optional extra "
            f"'hf' (pyarrow): pip install 'evotrainer[hf]'. Could not import pyarrow: {exc}"
        ) from exc
    return pyarrow


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a Parquet file or a ``save_to_disk`` folder, as plain Python values."""
    p = Path(path)
    pa = _pyarrow()
    try:
        if p.is_file():
            return pa.parquet.read_table(p).to_pylist()
        if (p / "dataset_dict.json").is_file() and not (p / "state.json").is_file():
            splits = _splits(p)
            named = ", ".join(str(p / s) for s in splits) or "(none listed)"
            raise DataError(
                f"{p}: a Hugging Face DatasetDict folder (several splits); name one split's "
                f"folder: {named}"
            )
        state = json.loads((p / "state.json").read_text(encoding="utf-8"))
        files = [f["filename"] for f in state.get("_data_files") or []]
        if not files:
            raise DataError(f"{p}/state.json lists no data files")
        rows: list[dict[str, Any]] = []
        for name in files:
            f = (p / name).resolve()
            if f.parent != p.resolve():  # state.json names a file elsewhere: refused
                raise DataError(f"{p}/state.json names {name!r}, outside the dataset folder")
            with pa.memory_map(str(f)) as src:
                rows += pa.ipc.open_stream(src).read_all().to_pylist()
        return rows
    except DataError:
        raise
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as exc:
        raise DataError(f"{p}: cannot read it as a Parquet file or dataset folder: {exc}") from None


def _without_nulls(value: Any) -> Any:
    """Arrow gives every row of a struct column every key, null where the row had none: keys
    whose value is null are dropped (a loader reads a missing key and a null alike)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _splits(folder: Path) -> list[str]:
    try:
        doc = json.loads((folder / "dataset_dict.json").read_text(encoding="utf-8"))
        return [str(s) for s in doc.get("splits") or []]
    except (OSError, ValueError, AttributeError):
        return []


def text_turns(text: Any) -> Any:
    """A dialogue text as turns: one per "Speaker: text" line; other lines continue the turn
    before them (or are a turn of an unknown speaker). A value that is not a text is returned
    as it is (the loader reports it)."""
    if not isinstance(text, str):
        return text
    turns: list[dict[str, str]] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            continue
        m = _SPEAKER.match(line)
        if m and m.group(2).strip():
            turns.append({"speaker": m.group(1).strip(), "text": m.group(2).strip()})
        elif turns:
            turns[-1]["text"] += " " + line.strip()
        else:
            turns.append({"speaker": "", "text": line.strip()})
    return turns


def _set(record: dict[str, Any], field: str, value: Any) -> None:
    node = record
    parts = field.split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


def to_records(
    rows: Sequence[Mapping[str, Any]], columns: Mapping[str, str] | None, name: str
) -> list[dict[str, Any]]:
    """Each row as a record of the task's format, by the column spec (see the module doc)."""
    spec = dict(columns or {})
    sources = {src.removesuffix(TURNS) for src in spec.values() if src != ROW_ID}
    present = set(rows[0]) if rows else set()
    missing = sorted(s for s in sources if s not in present) if rows else []
    if missing:
        raise DataError(
            f"{name}: data_columns names column(s) {missing} that the table lacks; its "
            f"columns: {sorted(present)}"
        )
    out = []
    for i, raw in enumerate(rows, start=1):
        row = _without_nulls(dict(raw))
        record: dict[str, Any] = {k: v for k, v in row.items() if k not in sources}
        for field, src in spec.items():
            if src == ROW_ID:
                value: Any = f"{name}-{i}"
            elif src.endswith(TURNS):
                value = text_turns(row.get(src.removesuffix(TURNS)))
            else:
                value = row.get(src)
            _set(record, field, value)
        out.append(record)
    return out


def load_data(
    task: Any, path: str | Path, columns: Mapping[str, str] | None = None
) -> list[Instance]:
    """The task's instances from ``path``: JSONL (and anything else the task reads) by
    ``task.load``; a Parquet file or dataset folder converted by the column spec first."""
    p = Path(path)
    if not is_table(p):  # the spec is for tables: a JSONL file's records are read as they are
        return task.load(p)
    name = p.stem if p.is_file() else p.name
    records = to_records(read_rows(p), columns, name)
    with tempfile.TemporaryDirectory(prefix="evotrainer-table-") as tmp:
        jsonl = Path(tmp) / f"{name}.jsonl"
        with jsonl.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
        try:
            return task.load(jsonl)
        except DataError as exc:
            msg = str(exc).replace(str(jsonl), f"{p} (via data_columns)")
            msg = re.sub(r", line (\d+)", r", row \1", msg)
            msg = re.sub(r"\(via data_columns\):(\d+):", r"(via data_columns), row \1:", msg)
            raise DataError(msg) from None
