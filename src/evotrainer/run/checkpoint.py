"""Checkpoints: written atomically (temp file, fsync, rename) after every generation; each file
carries a sha256 of its state, so a truncated or corrupt file is detected and the previous one is
used. ``checkpoints/index.json`` is the readable index (generation, outer step, best, s_val).

The parts that grow with the run (every policy made, every validation result, every fitness,
the archive, the harness decisions) are not rewritten by every checkpoint: they are journals,
``checkpoints/<name>.jsonl``, to which a checkpoint appends only the entries that are new or
changed (one ``{"k": key, "v": value}`` per line; the last line of a key wins). The checkpoint stores the journal's length in bytes and the
sha256 of that prefix, so loading reads exactly the entries that existed when it was written, and
a journal that does not match is detected like a corrupt checkpoint.

Loading is plain JSON: nothing in a run directory is ever executed or unpickled. A run directory
is untrusted input: nothing is written through a link planted in it (a symlinked folder or
journal is refused, journals are opened with ``O_NOFOLLOW`` and must not be hard links), and a
checkpoint that cannot be read for any reason (bad JSON, nesting too deep, numbers out of range)
is skipped like a damaged one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotrainer.errors import CheckpointError, RunDirectoryError
from evotrainer.plain import check_shape

KEEP = 3
# where the growing parts of the state are: maps that only gain keys, and lists that only
# grow at the end (a list is journaled as {index: item} and its length)
JOURNALED: tuple[tuple[str, ...], ...] = (
    ("policies",),
    ("validation_memo",),
    ("inner", "fitness"),
    ("outer", "archive"),
    ("outer", "decisions"),
)
REF = "$journal"
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CHECKPOINT_NAME = re.compile(r"ckpt-(\d+)\.json")
# what reading a damaged or crafted checkpoint can raise (JSON nested too deeply is a
# RecursionError, Infinity where a count belongs an OverflowError)
UNREADABLE = (OSError, ValueError, KeyError, TypeError, RecursionError, OverflowError)


def _digest(state: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def real_dir(root: Path, directory: Path) -> Path:
    """``directory`` (``root`` or a folder under it), made where missing. RunDirectoryError when
    it, or a folder between ``root`` and it, is a symbolic link or not a folder: nothing is
    written through a link planted in a run directory (``root`` itself may be a link the user
    chose)."""
    node = Path(root)
    for part in Path(directory).relative_to(root).parts:
        node = node / part
        if node.is_symlink():
            raise RunDirectoryError(
                f"{node} is a symbolic link: nothing is written through a link in a run "
                "directory. Remove the link (a run makes its own folders), or start a new run."
            )
        if not node.exists():
            node.mkdir(exist_ok=True)
        elif not node.is_dir():
            raise RunDirectoryError(f"{node} is not a folder: a run needs a folder there")
    return node


def atomic_write(path: Path, text: str, root: Path | None = None) -> None:
    """Write ``text`` to ``path`` atomically. The temp file is created exclusively under a fresh
    random name (a file or symlink planted beside ``path`` is never written through), and the
    rename replaces a symlink at ``path`` instead of following it. With ``root`` (the run
    directory), no folder between ``root`` and ``path`` may be a symbolic link (``real_dir``).
    The file gets the mode a file written in place would (0666 less the umask: 0644 under the
    usual 022), not mkstemp's 0600: a report or summary is for others to read (issue 51)."""
    if root is not None:
        real_dir(root, path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if hasattr(os, "fchmod"):  # not on Windows before Python 3.13
            os.fchmod(fd, 0o666 & ~process_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


_UMASK: list[int] = []  # the process's umask, read once


def process_umask() -> int:
    """The process's umask, read once: from /proc (Linux: no change to the process), else by
    setting it and setting it back (the one moment a file made by another thread could get a
    wider mode, once per process)."""
    if not _UMASK:
        found = None
        with contextlib.suppress(OSError, ValueError):
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("Umask:"):
                    found = int(line.split()[1], 8)
        if found is None:
            found = os.umask(0o022)
            os.umask(found)
        _UMASK.append(found)
    return _UMASK[0]


def strict_json(obj: Any) -> Any:
    """``obj`` with every NaN/inf float replaced by None, for files other tools read (strict
    JSON has no -Infinity)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [strict_json(v) for v in obj]
    return obj


def dumps_strict(obj: Any, indent: int | None = 2) -> str:
    return json.dumps(strict_json(obj), indent=indent, allow_nan=False)


# -- journals ---------------------------------------------------------------------------------
def _journal_name(path: tuple[str, ...]) -> str:
    return ".".join(path) + ".jsonl"


def _line_digest(value: Any) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True).encode()).hexdigest()


def read_no_follow(path: Path) -> bytes:
    """The bytes of ``path``, never read through a symbolic link (ValueError: treated like a
    damaged file); b"" when it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW)
    except FileNotFoundError:
        return b""
    except OSError:
        if path.is_symlink():  # read as damage: the file is skipped like a corrupt one
            raise ValueError(f"{path.name} is a symbolic link (not read)") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def open_appendable(path: Path) -> int:
    """A descriptor to append to ``path`` in a run directory (created if missing): refused,
    with RunDirectoryError, when ``path`` is a symbolic link (``O_NOFOLLOW``), a hard link to
    another file, or not a regular file; writing there would change a file outside the run."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | NOFOLLOW, 0o644)
    except OSError as exc:
        raise _link_error(path, exc) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        os.close(fd)
        what = "not a regular file" if not stat.S_ISREG(st.st_mode) else "a hard link"
        raise RunDirectoryError(
            f"{path} is {what}: a run appends only to its own files. Remove it, or start a new run."
        )
    return fd


def _link_error(path: Path, exc: OSError) -> OSError | RunDirectoryError:
    if path.is_symlink():
        return RunDirectoryError(
            f"{path} is a symbolic link: nothing is written through a link in a run "
            "directory. Remove it, or start a new run."
        )
    return exc


@dataclass
class _Journal:
    path: Path
    size: int = 0
    hasher: Any = field(default_factory=hashlib.sha256)
    written: dict[str, str] = field(default_factory=dict)  # key -> digest of its last value

    @classmethod
    def open(cls, path: Path, size: int) -> _Journal:
        """Continue the journal from its first ``size`` bytes (what the newest intact checkpoint
        references; anything after it was written by a process that died before checkpointing)."""
        j = cls(path)
        fd = open_appendable(path)
        try:
            data = read_no_follow(path)[:size]
            os.ftruncate(fd, len(data))
        finally:
            os.close(fd)
        j.size = len(data)
        j.hasher.update(data)
        for key, value in _parse_journal(data, path).items():
            j.written[key] = _line_digest(value)
        return j

    def append(self, entries: dict[str, Any]) -> dict[str, Any]:
        lines = []
        for key, value in entries.items():
            d = _line_digest(value)
            if self.written.get(key) != d:
                self.written[key] = d
                lines.append(json.dumps({"k": key, "v": value}) + "\n")
        if lines:
            data = "".join(lines).encode()
            with os.fdopen(open_appendable(self.path), "ab") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            self.size += len(data)
            self.hasher.update(data)
        return {REF: self.path.name, "bytes": self.size, "sha256": self.hasher.hexdigest()}


_JOURNALS: dict[Path, _Journal] = {}


def _parse_journal(data: bytes, path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in data.decode("utf-8").splitlines():
        rec = json.loads(line)
        out[str(rec["k"])] = rec["v"]  # a line that is not {"k", "v"}: TypeError, KeyError
    return out


def _journal(path: Path, ckdir: Path) -> _Journal:
    key = path.resolve()
    j = _JOURNALS.get(key)
    if j is None or not path.exists() or path.stat().st_size != j.size:
        size = 0
        newest = _newest_intact(ckdir)
        if newest is not None:
            ref = _find_ref(newest, path.name)
            size = int(ref["bytes"]) if ref else 0
        j = _JOURNALS[key] = _Journal.open(path, size)
    return j


def _find_ref(state: dict[str, Any], name: str) -> dict[str, Any] | None:
    for where in JOURNALED:
        node: Any = state
        for part in where:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and node.get(REF) == name:
            return node
    return None


def _split(state: dict[str, Any], ckdir: Path) -> dict[str, Any]:
    """A copy of ``state`` whose journaled maps are appended to their journals and replaced by
    references."""
    out = dict(state)
    for where in JOURNALED:
        parent = out
        for part in where[:-1]:
            if not isinstance(parent.get(part), dict):
                break
            parent[part] = dict(parent[part])
            parent = parent[part]
        else:
            value = parent.get(where[-1])
            if isinstance(value, dict) and REF not in value:
                parent[where[-1]] = _journal(ckdir / _journal_name(where), ckdir).append(value)
            elif isinstance(value, list):
                j = _journal(ckdir / _journal_name(where), ckdir)
                ref = j.append({str(i): v for i, v in enumerate(value)})
                parent[where[-1]] = {**ref, "list": len(value)}
    return out


def _join(state: dict[str, Any], ckdir: Path) -> dict[str, Any]:
    """Replace journal references by the maps they stand for; ValueError if a journal does not
    match its reference."""
    for where in JOURNALED:
        parent: Any = state
        for part in where[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            continue
        ref = parent.get(where[-1])
        if not (isinstance(ref, dict) and REF in ref):
            continue
        name = str(ref[REF])
        if name != _journal_name(where):
            raise ValueError(f"unexpected journal name {name!r}")
        path = ckdir / name
        data = read_no_follow(path)[: int(ref["bytes"])]
        if len(data) != int(ref["bytes"]) or hashlib.sha256(data).hexdigest() != ref["sha256"]:
            raise ValueError(f"journal {name} does not match the checkpoint")
        entries = _parse_journal(data, path)
        if "list" in ref:
            parent[where[-1]] = [entries[str(i)] for i in range(int(ref["list"]))]
        else:
            parent[where[-1]] = entries
    return state


# -- checkpoints ------------------------------------------------------------------------------
def checkpoint_files(ckdir: Path) -> list[Path]:
    """The checkpoints in ``ckdir``, oldest first (only files named ckpt-<number>.json)."""
    if not ckdir.is_dir():
        return []
    found = [p for p in ckdir.iterdir() if CHECKPOINT_NAME.fullmatch(p.name)]
    return sorted(found, key=checkpoint_seq)


def checkpoint_seq(path: Path) -> int:
    """The sequence number of a checkpoint file (ckpt-00012.json: 12)."""
    match = CHECKPOINT_NAME.fullmatch(path.name)
    if match is None:
        raise ValueError(f"{path.name} is not a checkpoint file name")
    return int(match.group(1))


def save_checkpoint(run_dir: Path, seq: int, state: dict[str, Any], index: dict[str, Any]) -> Path:
    ckdir = real_dir(run_dir, run_dir / "checkpoints")
    path = ckdir / f"ckpt-{seq:05d}.json"
    small = _split(state, ckdir)
    atomic_write(path, json.dumps({"sha256": _digest(small), "state": small}), root=run_dir)
    files = checkpoint_files(ckdir)
    for old in files[:-KEEP]:
        old.unlink(missing_ok=True)
    atomic_write(ckdir / "index.json", dumps_strict({**index, "file": path.name}), root=run_dir)
    return path


def _read(path: Path) -> dict[str, Any]:
    payload = json.loads(read_no_follow(path).decode("utf-8"))
    state = payload["state"]
    if not isinstance(state, dict) or _digest(state) != payload["sha256"]:
        raise ValueError("checksum mismatch")
    return state


def _newest_intact(ckdir: Path) -> dict[str, Any] | None:
    for path in reversed(checkpoint_files(ckdir)):
        try:
            state = _read(path)
            _join(json.loads(json.dumps(state)), ckdir)
            return state
        except UNREADABLE:
            continue
    return None


def load_latest(run_dir: Path) -> tuple[dict[str, Any], Path, list[str]]:
    """The newest intact checkpoint's state, its path, and warnings about skipped files."""
    ckdir = run_dir / "checkpoints"
    warnings = []
    for path in reversed(checkpoint_files(ckdir)):
        try:
            state = _join(_read(path), ckdir)
        except UNREADABLE as exc:
            why = "JSON nested too deeply" if isinstance(exc, RecursionError) else exc
            warnings.append(f"skipped corrupt checkpoint {path.name}: {why}")
            continue
        outer = state.get("outer")
        if isinstance(outer, dict) and isinstance(outer.get("cma"), str):
            # before plain-data CMA-ES state, this field was a pickle: never unpickled
            outer["cma"] = None
            warnings.append(
                f"{path.name}: ignored a CMA-ES state that is not plain data (a pickle, from an "
                "older version or crafted); it was not loaded, CMA-ES restarts from the current "
                "harness"
            )
        return state, path, warnings
    raise CheckpointError(
        f"no intact checkpoint in {ckdir}" + (f" ({'; '.join(warnings)})" if warnings else "")
    )


def load_state_into(target: Any, state: dict[str, Any], path: Path) -> None:
    """``target.load_state_dict(state)``, turning a state this version cannot read (a crafted or
    foreign checkpoint that passes its checksum) into a CheckpointError that names the file.
    The state must first have the shape of the one ``target`` writes (evotrainer/plain.py)."""
    try:
        check_shape(json.loads(json.dumps(target.state_dict())), state)
        target.load_state_dict(state)
        json.dumps(target.state_dict(), sort_keys=True)  # what it loaded can be saved again
    except (
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
        IndexError,
        OverflowError,  # Infinity where a count belongs
        RecursionError,  # values nested too deeply
    ) as exc:
        raise CheckpointError(
            f"{path}: not a checkpoint this version can read ({type(exc).__name__}: {exc})"
        ) from None
