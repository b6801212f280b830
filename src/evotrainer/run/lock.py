"""The run-directory lock: one process writes a run directory at a time.

``RUN_DIR/.lock`` is locked with ``fcntl.flock`` (exclusive, non-blocking) while a process runs
or resumes the run, and holds that process's pid. The operating system releases the lock when
the process ends, however it ends (kill -9 included), so a stale lock never blocks a resume.
On systems without fcntl (Windows) no lock is taken. The benchmarks lock their cells with it
too (``RunLock(work / "locks", f"{cell}.lock")``: one process per cell).
"""

from __future__ import annotations

import os
from pathlib import Path

from evotrainer.errors import RunDirectoryError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lock"


class LockHeld(RunDirectoryError):
    """Another process holds the lock."""


class RunLock:
    def __init__(self, run_dir: Path, name: str = LOCK_NAME) -> None:
        self.path = run_dir / name
        self._fd: int | None = None

    def acquire(self) -> None:
        if fcntl is None or self._fd is not None:
            return
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise RunDirectoryError(f"cannot lock the run directory ({self.path}): {exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise LockHeld(
                f"{self.path.parent} is in use by another process (pid {holder}): two processes "
                "must not write one run. Wait for it to end, or stop it first."
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def check_free(self) -> None:
        """Raise RunDirectoryError now if another process holds the lock (before a resume loads
        a model); the lock itself is taken later, by ``acquire``."""
        self.acquire()
        self.release()

    def in_use(self) -> bool:
        """Whether some process (this one included, through another ``RunLock``) holds the lock
        now. Reads only: no lock file, no lock."""
        if fcntl is None:
            return False
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
