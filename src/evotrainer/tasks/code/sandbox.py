"""The code gym's environment: run model-written Python in a separate, confined process.

Every execution gets a fresh temporary work directory (empty: the code and the test arguments
arrive on stdin, the expected answers never leave the host), a clean environment, the runner
of runner.py, and a wall-clock timeout after which the whole process group is killed. What
confines it, from the strongest mechanism the machine offers (``mechanism="auto"``):

- ``bwrap`` (bubblewrap, Debian package ``bubblewrap``): new user, PID, network, IPC, UTS and
  cgroup namespaces (``--unshare-all``): no network at all, no other process visible; a file
  system holding only the system libraries and the Python installation (read-only), the work
  directory (read-write), a private /tmp, /proc and a minimal /dev; every capability dropped;
  the sandbox dies with its parent.
- ``unshare`` (util-linux): new PID and network namespaces (a user namespace too when not
  root); the host's file system stays visible (read access is only watched by the audit hook,
  write access only by the hook and file permissions).
- ``process``: a plain child process: resource limits, timeout and the audit hook only; no
  network isolation.

In every mode the runner sets resource limits on itself before the candidate's code runs (CPU
seconds, address space, processes, file size, open files, no core dumps) and installs an audit
hook that refuses and records sockets, new processes, native code, writes outside the work
directory, reads outside it and the Python installation, and introspection of the test harness.
docs/code-gym.md holds the threat model and the containment tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

RUNNER = (Path(__file__).with_name("runner.py")).read_text(encoding="utf-8")
MECHANISMS = ("bwrap", "unshare", "process")
WORKDIR_IN_BOX = "/box"


@dataclass(frozen=True)
class Limits:
    call_s: float = 2.0  # one call (or one test unit) of the function
    wall_s: float = 20.0  # the whole execution, then the process group is killed
    cpu_s: int = 10
    memory_mb: int = 512
    processes: int = 32
    file_mb: int = 8
    open_files: int = 64

    def for_runner(self) -> dict[str, int]:
        return {
            "cpu_s": self.cpu_s,
            "memory_mb": self.memory_mb,
            "processes": self.processes,
            "file_mb": self.file_mb,
            "open_files": self.open_files,
        }


@dataclass(frozen=True)
class CallResult:
    """One call: its value as a Python literal (``value``), or the exception it raised."""

    ok: bool
    value: str = ""
    raised: str = ""
    error: str = ""
    seconds: float = 0.0
    plain: bool = True  # the value is built-in data (its == cannot lie)


@dataclass(frozen=True)
class Execution:
    """What one run of a candidate did. ``status``: "ok" (the runner reported), "load_error"
    (the code did not load or has no such function), "timeout" (killed at the wall clock),
    "killed" (ended by a signal: CPU or file-size limit, out of memory ...), "no_report"."""

    status: str
    calls: tuple[CallResult, ...] = ()
    check: tuple[CallResult, ...] = ()
    violations: tuple[str, ...] = ()
    error: str = ""
    wall_s: float = 0.0
    mechanism: str = ""

    @property
    def ran(self) -> bool:
        return self.status == "ok"


@cache
def _works(mechanism: str) -> bool:
    """Whether ``mechanism`` can start a process on this machine (tried once)."""
    try:
        argv = _wrap(mechanism, Path(tempfile.gettempdir()), ["/bin/true"])
        return subprocess.run(argv, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def available_mechanism(preferred: str = "auto") -> str:
    """The mechanism to use: ``preferred`` if it works here (ValueError if not), else for
    "auto" the strongest that works."""
    if preferred != "auto":
        if preferred not in MECHANISMS:
            raise ValueError(f"sandbox mechanism must be auto or one of {MECHANISMS}")
        if preferred != "process" and not _works(preferred):
            raise ValueError(f"sandbox mechanism {preferred!r} does not work on this machine")
        return preferred
    for m in ("bwrap", "unshare"):
        if shutil.which(m) and _works(m):
            return m
    return "process"


def _python() -> str:
    return os.path.realpath(sys.executable)


@cache
def _read_roots() -> tuple[str, ...]:
    """What the candidate may read besides its work directory: the Python installation that
    runs it (its standard library; ``-S``: no site-packages)."""
    stdlib = os.path.dirname(os.__file__)
    dynload = os.path.dirname(getattr(select, "__file__", "") or stdlib)
    roots = {os.path.dirname(os.path.dirname(_python())), stdlib, dynload}
    real = sorted({os.path.realpath(r) for r in roots if r and os.path.isdir(r)})
    return tuple(r for r in real if not any(r.startswith(o + os.sep) for o in real))


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


def drops_privileges(mechanism: str) -> bool:
    """Whether executions run as an unprivileged user (uid 65534) with no capabilities. Root is
    exempt from the process-count limit, so as root the sandbox switches to ``nobody`` with
    setpriv (util-linux) where the Python binary is reachable for it: always inside bubblewrap
    (its file system view makes the path traversable), else only when every directory above
    the binary is open to others."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return False
    if mechanism == "bwrap":
        return True
    path = Path(_python())
    return all(os.stat(p).st_mode & 0o001 for p in [*path.parents, path])


def _wrap(mechanism: str, workdir: Path, argv: list[str]) -> list[str]:
    root = os.geteuid() == 0
    drop = DROP if drops_privileges(mechanism) else []
    if mechanism == "bwrap":
        if root:  # no user namespace: setpriv switches to nobody and drops every capability
            box = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
            box += ["--unshare-cgroup-try"]
        else:  # a user namespace; bubblewrap drops the capabilities
            box = ["bwrap", "--unshare-all", "--cap-drop", "ALL"]
        box += ["--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
        for d in ("/bin", "/lib", "/lib64", "/lib32", "/sbin"):
            if os.path.exists(d):
                box += ["--ro-bind", d, d]
        made: set[str] = set()
        for r in _read_roots():
            if r.startswith("/usr/"):
                continue
            for parent in reversed(Path(r).parents[:-1]):  # traversable for nobody
                if str(parent) not in made:
                    made.add(str(parent))
                    box += ["--perms", "0755", "--dir", str(parent)]
            box += ["--ro-bind", r, r]
        box += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        box += ["--bind", str(workdir), WORKDIR_IN_BOX, "--chdir", WORKDIR_IN_BOX]
        box += ["--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]
        box += ["--setenv", "HOME", WORKDIR_IN_BOX, "--setenv", "PYTHONHASHSEED", "0"]
        box += ["--setenv", "LANG", "C.UTF-8", "--"]
        return box + drop + argv
    if mechanism == "unshare":
        box = ["unshare", "--fork", "--pid", "--kill-child", "--net"]
        if not root:
            box.append("--map-root-user")
        return [*box, "--", *drop, *argv]
    return drop + argv


class Sandbox:
    """Runs candidates; thread-safe (every execution has its own directory and process)."""

    def __init__(
        self, mechanism: str = "auto", limits: Limits | None = None, detect: bool = True
    ) -> None:
        self.mechanism = available_mechanism(mechanism)
        self.limits = limits or Limits()
        self.detect = detect  # False only in tests that show the limits hold without the hook
        self._lock = threading.Lock()
        self.executions = 0

    def __repr__(self) -> str:
        return f"Sandbox(mechanism={self.mechanism!r}, limits={self.limits})"

    def run(
        self,
        code: str,
        entry_point: str,
        calls: list[tuple[str, float]] | tuple[()] = (),
        check: str = "",
    ) -> Execution:
        """Load ``code``, then call ``entry_point`` with each argument literal of ``calls``
        (each with its own time limit), and/or run the test program ``check``."""
        with self._lock:
            self.executions += 1
        nonce = secrets.token_hex(16)
        job = {
            "nonce": nonce,
            "solution": code,
            "entry_point": entry_point,
            "calls": [[a, s] for a, s in calls],
            "check": check,
            "call_s": self.limits.call_s,
            "limits": self.limits.for_runner(),
            "read_roots": _read_roots(),
        }
        runner = RUNNER if self.detect else RUNNER.replace("sys.addaudithook(guard)", "pass")
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="evotrainer-box-") as tmp:
            workdir = Path(tmp) / "work"
            workdir.mkdir()
            if drops_privileges(self.mechanism):
                os.chmod(tmp, 0o711)  # nobody may reach its work directory, nothing else
                os.chown(workdir, NOBODY, NOBODY)
            out_path, err_path = Path(tmp) / "report", Path(tmp) / "stderr"
            argv = [_python(), "-s", "-S", "-B", "-P", "-c", runner]
            cwd = WORKDIR_IN_BOX if self.mechanism == "bwrap" else str(workdir)
            env = {
                "PATH": "/usr/bin:/bin",
                "HOME": str(workdir),
                "PYTHONHASHSEED": "0",
                "LANG": "C.UTF-8",
            }
            with open(out_path, "wb") as out, open(err_path, "wb") as err:
                proc = subprocess.Popen(
                    _wrap(self.mechanism, workdir, argv),
                    stdin=subprocess.PIPE,
                    stdout=out,
                    stderr=err,
                    cwd=str(workdir) if self.mechanism != "bwrap" else None,
                    env=env,
                    start_new_session=True,
                )
                timed_out = False
                try:
                    proc.communicate(json.dumps(job).encode(), timeout=self.limits.wall_s)
                except subprocess.TimeoutExpired:
                    timed_out = True
                finally:
                    _kill_group(proc)
            del cwd
            wall = time.perf_counter() - t0
            report = _read_report(out_path, nonce)
            stderr = err_path.read_bytes()[-400:].decode(errors="replace")
        return _execution(report, proc.returncode, timed_out, stderr, wall, self)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the execution's process group (whatever it left running), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _read_report(path: Path, nonce: str) -> dict[str, Any] | None:
    """The runner's report: the last line that starts with this execution's nonce."""
    try:
        data = path.read_bytes()[-(64 << 20) :]
    except OSError:
        return None
    for line in reversed(data.split(b"\n")):
        if line.startswith(nonce.encode()):
            try:
                report = json.loads(line[len(nonce) :])
            except ValueError:
                return None
            return report if isinstance(report, dict) else None
    return None


def _results(rows: Any) -> tuple[CallResult, ...]:
    out = []
    for r in rows if isinstance(rows, list) else ():
        if not isinstance(r, dict):
            continue
        out.append(
            CallResult(
                ok=bool(r.get("ok")),
                value=str(r.get("value", "")),
                raised=str(r.get("raised", "")),
                error=str(r.get("error", "")),
                seconds=float(r.get("seconds") or 0.0),
                plain=bool(r.get("plain", True)),
            )
        )
    return tuple(out)


def _execution(
    report: dict[str, Any] | None,
    returncode: int | None,
    timed_out: bool,
    stderr: str,
    wall: float,
    box: Sandbox,
) -> Execution:
    common: dict[str, Any] = {"wall_s": round(wall, 4), "mechanism": box.mechanism}
    if report is None:
        if timed_out:
            return Execution("timeout", error=f"killed after {box.limits.wall_s:g} s", **common)
        if returncode is not None and returncode < 0:
            name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else ""
            return Execution("killed", error=f"ended by signal {name or -returncode}", **common)
        return Execution("no_report", error=f"exit {returncode}: {stderr.strip()}", **common)
    violations = tuple(str(v) for v in report.get("violations") or ())
    if report.get("load_error"):
        return Execution(
            "load_error", violations=violations, error=str(report["load_error"]), **common
        )
    return Execution(
        "ok",
        calls=_results(report.get("calls")),
        check=_results(report.get("check")),
        violations=violations,
        **common,
    )


@dataclass
class ExecutionCache:
    """Executions by (instance id, code): the reward components, the validation metric and the
    next turn's feedback share one run of each answer. A small thread-safe LRU."""

    size: int = 2048
    _data: dict[tuple[str, str], Execution] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, key: tuple[str, str]) -> Execution | None:
        with self._lock:
            value = self._data.pop(key, None)
            if value is not None:
                self._data[key] = value
            return value

    def put(self, key: tuple[str, str], value: Execution) -> None:
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.pop(next(iter(self._data)))
