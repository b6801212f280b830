"""The code gym's environment: run Python in a separate, confined process and read back data.

Every execution gets a fresh, empty work directory, a clean environment, the runner of
runner.py (which reads its job from a file on stdin: the code and the call arguments; the
expected answers never leave the host), and a wall-clock timeout after which the whole process
group is killed. What confines it is isolation.py's business (bubblewrap, or an unsafe mode the
user named); in every mode the runner also sets resource limits on itself (CPU seconds, address
space, processes, file size, open files, no core dumps) and installs an audit hook as a
detection layer.

Nothing the process writes is a verdict: its report holds the values its calls returned (or what
they raised) as literals, and the host compares them with the answers it holds. The host also
measures the execution's CPU time itself (``os.wait4``), so that a time budget is judged on
a number the code could not write. docs/code-gym.md holds the threat model and the tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotrainer.tasks.code.isolation import (
    NOBODY,
    Isolation,
    detect,
    open_filter,
    python,
    read_roots,
)

RUNNER = (Path(__file__).with_name("runner.py")).read_text(encoding="utf-8")
REPORT_LIMIT = 64 << 20  # bytes of a report the host reads
MAX_LOAD_SCALE = 8.0  # wall-clock limits grow with the machine's load, up to this factor

__all__ = ["CallResult", "Execution", "Limits", "Sandbox"]


@dataclass(frozen=True)
class Limits:
    call_s: float = 2.0  # CPU seconds of one call (or one test unit) of the function
    wall_s: float = 20.0  # the whole execution (times the load scale), then it is killed
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
    seconds: float = 0.0  # as the runner measured it: the code's own word, for feedback only
    plain: bool = True  # the value is built-in data (the host re-checks: it reads a literal)


@dataclass(frozen=True)
class Recorded:
    """One call a test program made of the reference solution: its arguments as a literal
    (None when they are not literal data) and what the reference did."""

    args: str | None
    result: CallResult


@dataclass(frozen=True)
class Execution:
    """What one run did. ``status``: "ok" (the runner reported), "load_error" (the code did not
    load or has no such function), "timeout" (killed at the wall clock), "killed" (ended by a
    signal: CPU or file-size limit, out of memory ...), "no_report". ``cpu_s``: CPU seconds of
    the whole execution as the host's kernel counted them."""

    status: str
    calls: tuple[CallResult, ...] = ()
    recorded: tuple[Recorded, ...] = ()
    units: tuple[CallResult, ...] = ()
    violations: tuple[str, ...] = ()
    error: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    mechanism: str = ""

    @property
    def ran(self) -> bool:
        return self.status == "ok"


class Sandbox:
    """Runs code; thread-safe (every execution has its own directory and process).
    ``mechanism``: auto | bwrap | unsafe-unshare | unsafe-process (SandboxUnavailable when it
    does not work here)."""

    def __init__(
        self,
        mechanism: str = "auto",
        limits: Limits | None = None,
        audit_hook: bool = True,
        isolation: Isolation | None = None,
    ) -> None:
        self.isolation: Isolation = isolation or detect(mechanism)
        self.limits = limits or Limits()
        self.audit_hook = audit_hook  # False only in tests that show the isolation holds alone
        self._lock = threading.Lock()
        self.executions = 0

    @property
    def mechanism(self) -> str:
        return self.isolation.mechanism

    def __repr__(self) -> str:
        return f"Sandbox({self.isolation.describe()}, limits={self.limits})"

    def run(
        self, code: str, entry_point: str, calls: list[tuple[str, float]] | tuple[()] = ()
    ) -> Execution:
        """Load ``code``, then call ``entry_point`` with each argument literal of ``calls``
        (each with its own time limit)."""
        job = {"mode": "calls", "calls": [[a, s] for a, s in calls]}
        return self._execute(code, entry_point, job)

    def record(self, code: str, entry_point: str, check: str) -> Execution:
        """Run the test program ``check`` (``def check(candidate)``) against ``code`` (a
        reference solution) and record every call it makes."""
        return self._execute(code, entry_point, {"mode": "record", "check": check})

    def _execute(self, code: str, entry_point: str, job: dict[str, Any]) -> Execution:
        with self._lock:
            self.executions += 1
        scale = load_scale()
        job |= {
            "solution": code,
            "entry_point": entry_point,
            "call_s": self.limits.call_s,
            "wall_scale": scale,
            "limits": self.limits.for_runner(),
            "read_roots": read_roots(),
        }
        runner = RUNNER if self.audit_hook else RUNNER.replace("sys.addaudithook(hook)", "pass")
        with tempfile.TemporaryDirectory(prefix="evotrainer-box-") as tmp:
            return self._spawn(Path(tmp), runner, job, self.limits.wall_s * scale)

    def _spawn(self, tmp: Path, runner: str, job: dict[str, Any], wall_s: float) -> Execution:
        workdir = tmp / "work"
        workdir.mkdir()
        if os.geteuid() == 0 and self.isolation.unprivileged and not self.isolation.safe:
            os.chmod(tmp, 0o711)  # nobody may reach its work directory, nothing else
            os.chown(workdir, NOBODY, NOBODY)
        job_path, out_path, err_path = tmp / "job.json", tmp / "report", tmp / "stderr"
        job_path.write_text(json.dumps(job), encoding="utf-8")
        filt = open_filter(tmp) if self.isolation.seccomp else None
        argv = self.isolation.command(
            [python(), "-s", "-S", "-B", "-P", "-c", runner], filt, workdir
        )
        env = {"PATH": "/usr/bin:/bin", "HOME": str(workdir), "PYTHONHASHSEED": "0"}
        env["LANG"] = "C.UTF-8"
        t0 = time.perf_counter()
        try:
            with (
                open(job_path, "rb") as inp,
                open(out_path, "wb") as out,
                open(err_path, "wb") as err,
            ):
                proc = subprocess.Popen(
                    argv,
                    stdin=inp,
                    stdout=out,
                    stderr=err,
                    cwd=str(workdir),
                    env=env,
                    start_new_session=True,
                    pass_fds=(filt,) if filt is not None else (),
                )
            returncode, cpu_s, timed_out = _wait(proc, wall_s)
        finally:
            if filt is not None:
                os.close(filt)
        wall = time.perf_counter() - t0
        report = _read_report(out_path)
        stderr = err_path.read_bytes()[-400:].decode(errors="replace")
        common: dict[str, Any] = {"wall_s": round(wall, 4), "cpu_s": round(cpu_s, 4)}
        common["mechanism"] = self.mechanism
        return _execution(report, returncode, timed_out, stderr, common, wall_s)


def load_scale() -> float:
    """How many times longer than on an idle machine wall-clock limits are here: the load per
    CPU this process may use (1-minute average), at least 1, at most ``MAX_LOAD_SCALE``. 1 where
    the load cannot be read."""
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        return 1.0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(MAX_LOAD_SCALE, max(1.0, load / max(1, cpus or 1)))


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int, float, bool]:
    """Wait for the execution (killing its process group at ``timeout``): its exit code, the CPU
    seconds it and its descendants used (from the kernel, not from the process), whether it was
    killed at the wall clock."""
    fired = threading.Event()

    def kill() -> None:
        fired.set()
        _kill_group(proc.pid)

    timer = threading.Timer(timeout, kill)
    timer.daemon = True
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    _kill_group(proc.pid)  # whatever it left running in its group
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime, fired.is_set()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _read_report(path: Path) -> dict[str, Any] | None:
    """The runner's report: the last line of its private stdout, if it is a JSON object."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - REPORT_LIMIT))
            data = fh.read()
    except OSError:
        return None
    lines = data.rstrip(b"\n").rsplit(b"\n", 1)
    try:
        report = json.loads(lines[-1]) if lines and lines[-1] else None
    except (ValueError, RecursionError):
        return None
    return report if isinstance(report, dict) else None


def _result(row: Any) -> CallResult | None:
    if not isinstance(row, dict):
        return None
    try:
        seconds = float(row.get("seconds") or 0.0)
    except (TypeError, ValueError):
        seconds = 0.0
    return CallResult(
        ok=row.get("ok") is True,
        value=str(row.get("value", "")),
        raised=str(row.get("raised", "")),
        error=str(row.get("error", "")),
        seconds=seconds,
        plain=row.get("plain", True) is True,
    )


def _results(rows: Any) -> tuple[CallResult, ...]:
    out = (_result(r) for r in (rows if isinstance(rows, list) else ()))
    return tuple(r for r in out if r is not None)


def _recorded(rows: Any) -> tuple[Recorded, ...]:
    out = []
    for row in rows if isinstance(rows, list) else ():
        result = _result(row)
        if result is not None:
            args = row.get("args")
            out.append(Recorded(args if isinstance(args, str) else None, result))
    return tuple(out)


def _execution(
    report: dict[str, Any] | None,
    returncode: int,
    timed_out: bool,
    stderr: str,
    common: dict[str, Any],
    wall_s: float,
) -> Execution:
    if report is None:
        if timed_out:
            return Execution("timeout", error=f"killed after {wall_s:g} s", **common)
        if returncode < 0:
            name = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else ""
            return Execution("killed", error=f"ended by signal {name or -returncode}", **common)
        return Execution("no_report", error=f"exit {returncode}: {stderr.strip()}", **common)
    violations = tuple(str(v) for v in report.get("violations") or () if isinstance(v, str))
    if report.get("load_error"):
        return Execution(
            "load_error", violations=violations, error=str(report["load_error"]), **common
        )
    return Execution(
        "ok",
        calls=_results(report.get("calls")),
        recorded=_recorded(report.get("recorded")),
        units=_results(report.get("units")),
        violations=violations,
        **common,
    )


@dataclass
class ExecutionCache:
    """What a run of an answer gave, by (problem id, code): the reward components, the
    validation metric and the next turn's feedback share one run of each answer. A small
    thread-safe LRU."""

    size: int = 2048
    _data: dict[tuple[str, str], Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, key: tuple[str, str]) -> Any:
        with self._lock:
            value = self._data.pop(key, None)
            if value is not None:
                self._data[key] = value
            return value

    def put(self, key: tuple[str, str], value: Any) -> None:
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.pop(next(iter(self._data)))
