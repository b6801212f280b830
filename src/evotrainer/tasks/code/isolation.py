"""How the code gym confines model-written code: the command line that starts the sandboxed
Python, for each mechanism, and which mechanism works on this machine.

``bwrap`` (bubblewrap, Debian/Ubuntu package ``bubblewrap``) is the isolation:

- a user namespace of its own in which the code runs as an unprivileged uid with no
  capabilities, and no further user namespaces (``--disable-userns``). As root, a user namespace
  made by root maps its users onto root, so root starts an outer bubblewrap (the namespaces and
  the file system), switches to ``nobody`` with ``setpriv`` and starts the inner bubblewrap (the
  user namespace) as ``nobody``: the kernel sees uid 65534 either way;
- its own PID, network, IPC, UTS and cgroup namespaces (nothing of the host's processes or
  network is visible; the runner is the PID namespace's init, so everything the code started
  dies with it);
- its own mount namespace holding only ``/usr``, ``/bin``, ``/lib*`` and the Python
  installation, read-only; a private ``/proc`` of its PID namespace; a minimal ``/dev``; the
  work directory ``/box`` and ``/tmp`` as small tmpfs (nothing is written to the host's disk);
- the seccomp filter of seccomp.py where the architecture has one;
- a clean environment.

Where the user namespace cannot be made (unprivileged user namespaces switched off) but
bubblewrap runs as root, it still runs, with one bubblewrap and ``setpriv``: the namespaces,
file system, uid 65534 and seccomp stay; ``Isolation.user_namespace`` says which.

``unsafe-unshare`` and ``unsafe-process`` are opt-in by name only: the host's file system is
visible to the code and only resource limits and the audit hook stand in its way (the first adds
PID and network namespaces). ``auto`` means bubblewrap or nothing: a machine where it does not
work refuses to run the code task, with a message that says what to install.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from evotrainer.tasks.code import seccomp

SAFE = ("bwrap",)
UNSAFE = ("unsafe-unshare", "unsafe-process")
MECHANISMS = SAFE + UNSAFE
RENAMED = {"unshare": "unsafe-unshare", "process": "unsafe-process"}
WORKDIR_IN_BOX = "/box"
TMPFS_BYTES = 64 << 20  # /box and /tmp each
NOBODY = 65534
DROP = [
    "setpriv",
    f"--reuid={NOBODY}",
    f"--regid={NOBODY}",
    "--clear-groups",
    "--no-new-privs",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--",
]
INSTALL = (
    "install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap; "
    "it needs user namespaces, which some distributions restrict: see docs/code-gym.md), or "
    "opt in to running model-written code with your own files within its reach: "
    "task.sandbox: unsafe-process"
)


class SandboxUnavailable(ValueError):
    """No isolation that the configuration accepts works on this machine."""


@dataclass(frozen=True)
class Isolation:
    """What confines each execution here. ``user_namespace``: the code is in a user namespace
    of its own; ``seccomp``: the filter is loaded; ``unprivileged``: the kernel sees uid 65534
    (or the user's own uid when EvoTrainer is not root)."""

    mechanism: str
    user_namespace: bool = False
    seccomp: bool = False
    unprivileged: bool = True

    @property
    def safe(self) -> bool:
        return self.mechanism in SAFE

    def describe(self) -> str:
        if not self.safe:
            return f"{self.mechanism} (UNSAFE: the code can reach the host's files)"
        parts = ["bwrap", "user namespace" if self.user_namespace else "no user namespace"]
        parts.append("seccomp" if self.seccomp else "no seccomp filter")
        return ", ".join(parts)

    def command(self, argv: list[str], seccomp_fd: int | None, workdir: Path) -> list[str]:
        """The command line that runs ``argv`` (the Python runner) under this isolation.
        ``seccomp_fd``: an open file holding the filter (bwrap only); ``workdir``: the host
        directory the unsafe mechanisms run in (bwrap gives the code a tmpfs instead)."""
        if self.mechanism == "bwrap":
            return _bwrap(argv, self, seccomp_fd)
        drop = DROP if self.unprivileged and os.geteuid() == 0 else []
        if self.mechanism == "unsafe-unshare":
            box = ["unshare", "--fork", "--pid", "--kill-child", "--net"]
            if os.geteuid() != 0:
                box.append("--map-root-user")
            return [*box, "--", *drop, *argv]
        del workdir  # unsafe-process: the runner's cwd is the work directory
        return drop + argv


def python() -> str:
    return os.path.realpath(sys.executable)


@cache
def read_roots() -> tuple[str, ...]:
    """What the code may read besides its work directory: the Python installation that runs it
    (its standard library; ``-S``: no site-packages)."""
    stdlib = os.path.dirname(os.__file__)
    dynload = os.path.dirname(getattr(select, "__file__", "") or stdlib)
    roots = {os.path.dirname(os.path.dirname(python())), stdlib, dynload}
    real = sorted({os.path.realpath(r) for r in roots if r and os.path.isdir(r)})
    return tuple(r for r in real if not any(r.startswith(o + os.sep) for o in real))


def _file_system() -> list[str]:
    box = ["--ro-bind", "/usr", "/usr"]
    for d in ("/bin", "/lib", "/lib64", "/lib32", "/sbin"):
        if os.path.exists(d):
            box += ["--ro-bind", d, d]
    made: set[str] = set()
    for r in read_roots():
        if r.startswith("/usr/"):
            continue
        for parent in reversed(Path(r).parents[:-1]):  # traversable for the sandbox's uid
            if str(parent) not in made:
                made.add(str(parent))
                box += ["--perms", "0755", "--dir", str(parent)]
        box += ["--ro-bind", r, r]
    return [*box, "--proc", "/proc", "--dev", "/dev"]


def _scratch() -> list[str]:
    size = str(TMPFS_BYTES)
    box = ["--perms", "01777", "--size", size, "--tmpfs", "/tmp"]
    box += ["--perms", "01777", "--size", size, "--tmpfs", WORKDIR_IN_BOX]
    box += ["--chdir", WORKDIR_IN_BOX, "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]
    box += ["--setenv", "HOME", WORKDIR_IN_BOX, "--setenv", "PYTHONHASHSEED", "0"]
    return [*box, "--setenv", "LANG", "C.UTF-8"]


NAMESPACES = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
NAMESPACES += ["--unshare-cgroup-try"]
# --as-pid-1: the runner is the namespace's init, so the kernel kills everything the code left
# behind when it ends, and its CPU time reaches the host's wait4 (a reaper would hide it)
LIFETIME = ["--die-with-parent", "--new-session", "--as-pid-1"]


def _bwrap(argv: list[str], iso: Isolation, seccomp_fd: int | None) -> list[str]:
    filt = ["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []
    user = ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    outer = ["bwrap", *NAMESPACES, *LIFETIME, *_file_system(), *_scratch()]
    if os.geteuid() != 0:  # one bubblewrap: the user namespace maps the user's own uid
        return [*outer, *user, *filt, "--", *argv]
    if not iso.user_namespace:  # root, no unprivileged user namespaces: setpriv alone
        return [*outer, *filt, "--", *DROP, *argv]
    inner = ["bwrap", *user, "--die-with-parent", "--dev-bind", "/", "/"]
    inner += ["--chdir", WORKDIR_IN_BOX, *filt, "--"]
    return [*outer, "--", *DROP, *inner, *argv]


def _try(iso: Isolation) -> bool:
    """Whether ``iso`` starts the Python that runs the code here (tried once per variant)."""
    with tempfile.TemporaryDirectory(prefix="evotrainer-probe-") as tmp:
        fd = None
        try:
            if iso.seccomp:
                fd = open_filter(Path(tmp))
            argv = iso.command([python(), "-S", "-c", "pass"], fd, Path(tmp))
            pass_fds = (fd,) if fd is not None else ()
            run = subprocess.run(argv, capture_output=True, timeout=30, pass_fds=pass_fds)
            return run.returncode == 0
        except (OSError, subprocess.SubprocessError):
            return False
        finally:
            if fd is not None:
                os.close(fd)


def open_filter(directory: Path) -> int:
    """A file descriptor of a file in ``directory`` holding the seccomp program (bwrap reads
    it to its end when it starts)."""
    path = directory / "seccomp.bpf"
    path.write_bytes(seccomp.program() or b"")
    return os.open(path, os.O_RDONLY)


@cache
def detect(preferred: str = "auto") -> Isolation:
    """The isolation to use: ``preferred`` if it works here, else SandboxUnavailable with what
    to do. ``auto`` and ``bwrap`` take the strongest bubblewrap variant that works."""
    if preferred in RENAMED:
        raise SandboxUnavailable(
            f"{preferred!r} is now called {RENAMED[preferred]!r}: it leaves your files within the "
            "code's reach; 'auto' or 'bwrap' isolates it"
        )
    if preferred not in ("auto", *MECHANISMS):
        raise SandboxUnavailable(f"sandbox must be auto or one of {', '.join(MECHANISMS)}")
    root = os.geteuid() == 0
    can_drop = bool(shutil.which("setpriv"))
    if preferred in UNSAFE:
        iso = Isolation(preferred, unprivileged=not root or (can_drop and _python_reachable()))
        if preferred == "unsafe-unshare" and not _try(iso):
            raise SandboxUnavailable("unsafe-unshare does not work on this machine")
        return iso
    if not shutil.which("bwrap"):
        raise SandboxUnavailable(f"bubblewrap (bwrap) is not installed: {INSTALL}")
    if root and not can_drop:
        raise SandboxUnavailable("running as root needs setpriv (util-linux) to drop to nobody")
    has_filter = seccomp.program() is not None
    variants = [Isolation("bwrap", True, has_filter)]
    if root:
        variants.append(Isolation("bwrap", False, has_filter))
    if has_filter:
        variants += [Isolation("bwrap", v.user_namespace, False) for v in variants]
    for iso in variants:
        if _try(iso):
            return iso
    raise SandboxUnavailable(f"bubblewrap is installed but cannot start a sandbox here: {INSTALL}")


def _python_reachable() -> bool:
    """Whether ``nobody`` can reach the Python binary (every directory above it is open to
    others), so that the unsafe mechanisms can still drop root's privileges."""
    path = Path(python())
    return all(os.stat(p).st_mode & 0o001 for p in [*path.parents, path])
