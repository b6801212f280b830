"""The run-directory lock: one process writes a run directory at a time.

``RUN_DIR/.lock`` is locked with ``fcntl.flock`` (exclusive, non-blocking) while a process runs
or resumes the run, and holds that process's pid. The operating system releases the lock when
the process ends, however it ends (kill -9 included), so a stale lock never blocks a resume.
A process that ends its work removes the file before it lets the lock go (a finished run
leaves no ``.lock``: issue 51); one that took the lock on a file removed meanwhile sees that
its file is no longer the one at ``.lock`` and tries again on the new one. On systems without
fcntl (Windows) no lock is taken. The benchmarks lock their cells with it too
(``RunLock(work / "locks", f"{cell}.lock")``: one process per cell).
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
ATTEMPTS = 5  # a lock file replaced under us this many times in a row: give up


class LockHeld(RunDirectoryError):
    """Another process holds the lock."""


class RunLock:
    def __init__(self, run_dir: Path, name: str = LOCK_NAME) -> None:
        self.path = run_dir / name
        self._fd: int | None = None

    def acquire(self) -> None:
        if fcntl is None or self._fd is not None:
            return
        for _ in range(ATTEMPTS):
            fd = self._lock_file()
            if self._still_ours(fd):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                self._fd = fd
                return
            os.close(fd)  # the holder removed it before we got the lock: try the new one
        raise RunDirectoryError(f"cannot lock the run directory ({self.path}): it keeps changing")

    def _lock_file(self) -> int:
        """``.lock`` opened (made when missing) and locked; RunDirectoryError when another
        process holds it."""
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
        return fd

    def _still_ours(self, fd: int) -> bool:
        """Whether the locked file is still the one at ``.lock`` (not removed by the holder
        that released it while we waited to lock it)."""
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return False
        mine = os.fstat(fd)
        return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)

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
            if self._still_ours(fd):  # remove it while it is still locked (see acquire)
                self.path.unlink(missing_ok=True)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
