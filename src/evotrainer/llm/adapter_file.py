"""Adapter files are named by their content: ``<sha256 of the bytes>.gguf``.

A run directory records an adapter by that hash; before llama.cpp loads one, its bytes are
hashed and compared, and llama.cpp is handed a private copy made from exactly the bytes that
were hashed (so a file swapped after the check is never loaded). An adapter is read only as a
regular file of its own: never through a symbolic link (a run directory is untrusted input, and
a link may point at any file), and nothing is copied before its hash matches (a wrong file is
refused where it lies; a full temporary folder is a clear error). Standard library only:
serving an adapter does not need the ``distill`` extra.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from evotrainer.errors import DataError

SUFFIX = ".gguf"
_HASH = re.compile(r"[0-9a-f]{64}")
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
BLOCK = 1 << 20


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def adapter_file_name(sha256: str) -> str:
    return f"{sha256}{SUFFIX}"


def expected_hash(path: str | Path, sha256: str | None = None) -> str | None:
    """The hash an adapter file must have: ``sha256`` when given, else its name's stem when the
    name is a hash, else None (nothing to check against)."""
    if sha256 is not None:
        return sha256.lower()
    stem = Path(path).name.removesuffix(SUFFIX)
    return stem if _HASH.fullmatch(stem) else None


def verify_adapter(path: str | Path, sha256: str | None = None) -> str:
    """Hash ``path`` and return the hash. Raises DataError when the file is missing, a symbolic
    link or not a regular file, or when its hash differs from ``sha256`` (or from its name, for
    a file named by its hash)."""
    p = Path(path)
    fd = _open_adapter(p)
    try:
        actual = _hash_fd(fd, p)
    finally:
        os.close(fd)
    _check(p, actual, expected_hash(p, sha256))
    return actual


def _open_adapter(p: Path) -> int:
    """A read-only descriptor of the adapter file ``p`` itself. DataError when it is missing,
    a symbolic link (not followed: its target is never read, nor hashed), not a regular file,
    or unreadable."""
    try:
        fd = os.open(p, os.O_RDONLY | NOFOLLOW)
    except FileNotFoundError:
        raise DataError(f"LoRA adapter {p} not found") from None
    except OSError as exc:
        if p.is_symlink():
            raise DataError(
                f"LoRA adapter {p} is a symbolic link: not read (an adapter is a file of its "
                "own; copy it in place of the link)"
            ) from None
        raise DataError(f"LoRA adapter {p} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DataError(f"LoRA adapter {p} is not a regular file")
    return fd


def _hash_fd(fd: int, p: Path, copy_to: int | None = None) -> str:
    """The sha256 of what ``fd`` holds from its start, written to ``copy_to`` as it is read;
    DataError for a read error, or a write error (naming the temporary folder: a full disk)."""
    h = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        try:
            block = os.read(fd, BLOCK)
        except OSError as exc:
            raise DataError(f"LoRA adapter {p} cannot be read: {exc.strerror or exc}") from None
        if not block:
            return h.hexdigest()
        h.update(block)
        if copy_to is not None:
            try:
                _write_all(copy_to, block)
            except OSError as exc:
                raise DataError(
                    f"LoRA adapter {p}: its private copy for llama.cpp could not be written in "
                    f"{tempfile.gettempdir()}: {exc.strerror or exc}; free space there or point "
                    "TMPDIR at a larger folder"
                ) from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _check(path: Path, actual: str, expected: str | None) -> None:
    if expected is not None and actual != expected:
        raise DataError(
            f"LoRA adapter {path}: its sha256 is not the recorded one (expected {expected}); "
            "the file was changed or replaced after it was recorded, so it is not loaded"
        )


@contextlib.contextmanager
def verified_copy(path: str | Path, sha256: str | None = None) -> Iterator[tuple[Path, str]]:
    """Hash ``path`` and, when the hash matches (see ``expected_hash``), copy it to a private
    temporary file while hashing it again; yield (the copy, its sha256) when both hashes
    agree, else raise DataError before anything is loaded (a file that changed between the two
    reads is refused too). Nothing is copied for a file whose hash does not match. The copy is
    deleted on exit (llama.cpp reads an adapter fully when it loads it)."""
    p = Path(path)
    src = _open_adapter(p)
    tmp = None
    try:
        first = _hash_fd(src, p)
        _check(p, first, expected_hash(p, sha256))
        try:
            fd, tmp = tempfile.mkstemp(prefix="evotrainer-lora-", suffix=SUFFIX)
        except OSError as exc:
            raise DataError(
                f"LoRA adapter {p}: no private copy can be made in {tempfile.gettempdir()}: "
                f"{exc.strerror or exc}"
            ) from None
        try:
            copied = _hash_fd(src, p, copy_to=fd)
        finally:
            os.close(fd)
        _check(p, copied, first)
        yield Path(tmp), copied
    finally:
        os.close(src)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def store_adapter(src: str | Path, out_dir: str | Path) -> tuple[Path, str]:
    """Copy an adapter file into ``out_dir`` under its hash name (atomic; a file already there
    under that name is kept). Returns (the stored path, its sha256)."""
    sha = sha256_file(src)
    out = Path(out_dir) / adapter_file_name(sha)
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f"{out.name}.{os.getpid()}.part")
        shutil.copyfile(src, tmp)
        tmp.replace(out)
    return out, sha
