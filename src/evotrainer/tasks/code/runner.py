"""The program that runs inside the sandbox (tasks/code/sandbox.py starts it with ``python -c``).

Standard library only; it never imports EvoTrainer. It reads one job (JSON) from stdin, lowers
its own resource limits, keeps a private copy of stdout for its answers and points fd 1 and 2 at
/dev/null, installs an audit hook (a detection layer, see below), loads the module it was given
and then does one of two things:

- ``calls``: calls the entry point with each argument literal and writes back what each call
  returned (its ``repr``) or raised. Only arguments come in; the expected answers stay with the
  host, which compares. This is how every candidate runs.
- ``record``: runs a HumanEval-style test program (``check(candidate)``) against the module (the
  problem's reference solution, never a candidate) and writes back every call ``check`` made:
  its arguments as a literal and what the reference returned. The host turns those into the
  (input, expected) pairs that candidates are judged on (EvalPlus's way).

What it writes is data that the host judges: nothing in it is a verdict. A candidate that
writes its own answers on the report descriptor has answered, nothing more.

The audit hook (PEP 578) refuses and records what model-written code has no business doing:
sockets, new processes, signals, native code (ctypes), writing, truncating, linking or changing
files outside the work directory, reading files outside it and the Python installation, and
looking at frames, tracebacks or the garbage collector. Its state lives in closures, out of
reach of ``import __main__`` and ``object.__subclasses__()``. It is defence in depth only: PEP
578 hooks are not a sandbox. The boundary is bubblewrap's namespaces, seccomp and an
unprivileged uid (isolation.py).
"""

import ast
import contextlib
import json
import math
import os
import random
import resource
import signal
import sys
import time

REPR_LIMIT = 2_000_000  # characters of one answer (the report file is size-limited too)
FORBIDDEN_MODULES = (
    "ctypes",
    "_ctypes",
    "socket",
    "_socket",
    "ssl",
    "_ssl",
    "multiprocessing",
    "_posixsubprocess",  # fork_exec raises no audit event of its own
)
PROCESS_EVENTS = (
    "os.fork",
    "os.forkpty",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.startfile",
    "subprocess.Popen",
    "pty.spawn",
)
SIGNAL_EVENTS = ("os.kill", "os.killpg", "signal.pthread_kill")
# events whose first argument is a path the call changes (os.link/symlink: the second)
WRITE_EVENTS = (
    "os.remove",
    "os.rename",
    "os.rmdir",
    "os.mkdir",
    "os.chmod",
    "os.chown",
    "os.chflags",
    "os.truncate",
    "os.utime",
    "os.setxattr",
    "os.removexattr",
    "shutil.rmtree",
    "shutil.copyfile",
    "shutil.copymode",
    "shutil.copystat",
    "shutil.copytree",
    "shutil.move",
    "shutil.chown",
)
LINK_EVENTS = ("os.link", "os.symlink")
READ_EVENTS = ("os.listdir", "os.scandir", "os.chdir", "os.getxattr", "os.listxattr", "glob.glob")
INTROSPECTION = (
    "gc.get_objects",
    "gc.get_referrers",
    "gc.get_referents",
    "sys._current_frames",
    "sys._current_exceptions",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
)
FRAME_ATTRS = ("tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back", "f_globals", "f_locals")
SOLUTION = "solution.py"


def set_limits(limits):
    pairs = (
        (resource.RLIMIT_CPU, limits.get("cpu_s")),
        (resource.RLIMIT_AS, (limits.get("memory_mb") or 0) * 2**20 or None),
        (resource.RLIMIT_NPROC, limits.get("processes")),
        (resource.RLIMIT_FSIZE, (limits.get("file_mb") or 0) * 2**20 or None),
        (resource.RLIMIT_NOFILE, limits.get("open_files")),
        (resource.RLIMIT_CORE, 0),
    )
    for which, value in pairs:
        if value is None:
            continue
        # a limit the platform refuses: the host's wall-clock timeout still holds
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, (int(value), int(value)))


def make_guard(workdir, read_roots):
    """The audit hook and its switch, as closures: (hook, arm, violations). ``arm(True)`` while
    the module's code runs."""
    workdir = os.path.realpath(workdir)
    readable = tuple(os.path.realpath(r) for r in read_roots) + (workdir,)
    violations = []
    state = {"armed": False, "busy": False}  # busy: the hook's own work raises events too

    def note(kind, detail):
        if len(violations) < 20:
            violations.append(f"{kind}: {detail}"[:200])
        raise PermissionError(f"sandbox: {kind} is not allowed ({detail})")

    check = _make_check(workdir, readable, note)

    def hook(event, args):
        if not state["armed"] or state["busy"]:
            return
        state["busy"] = True
        try:
            check(event, args)
        finally:
            state["busy"] = False

    def arm(on):
        state["armed"] = on

    return hook, arm, violations


def _make_check(workdir, readable, note):
    """The hook's check of one event, as a closure over the guard's paths: it calls ``note``
    (which raises) for what the code under test may not do."""

    def from_candidate():
        """Whether the frame that raised the event (through inspect.py at most) is the code
        under test."""
        frame = sys._getframe(3)  # 0 here, 1 check, 2 hook, 3 the event's origin
        for _ in range(4):
            if frame is None:
                return False
            name = frame.f_code.co_filename
            if name == SOLUTION:
                return True
            if not name.endswith("inspect.py"):
                return False
            frame = frame.f_back
        return False

    def inside(path, roots):
        if isinstance(path, int) or path is None:
            return True  # a file descriptor: already open (and opened under this hook)
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return any(real == r or real.startswith(r + os.sep) for r in roots)

    def check(event, args):
        if event == "open":
            path, mode = args[0], args[1]
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            if isinstance(path, int) or path is None:
                return
            writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
            writing = (
                any(c in mode for c in "wax+") if isinstance(mode, str) else bool(flags & writes)
            )
            if writing and not inside(path, (workdir,)):
                note("write_outside_workdir", repr(os.fsdecode(path))[:80])
            if not writing and not inside(path, readable) and path != "/dev/null":
                note("read_outside_workdir", repr(os.fsdecode(path))[:80])
        elif event in WRITE_EVENTS:
            if not inside(args[0], (workdir,)):
                note("write_outside_workdir", f"{event} {args[0]!r}"[:80])
        elif event in LINK_EVENTS:
            if not (inside(args[0], readable) and inside(args[1], (workdir,))):
                note("write_outside_workdir", f"{event} {args[0]!r} -> {args[1]!r}"[:80])
        elif event in READ_EVENTS:
            if args and not inside(args[0] if args[0] is not None else ".", readable):
                note("read_outside_workdir", f"{event} {args[0]!r}"[:80])
        elif event.startswith(("socket.", "ssl.")):
            note("network", event)
        elif event in PROCESS_EVENTS or event.startswith("os.exec"):
            note("new_process", event)
        elif event in SIGNAL_EVENTS:
            note("signal", event)
        elif event.startswith("ctypes."):
            note("native_code", event)
        elif event == "import" and args[0] and args[0].split(".")[0] in FORBIDDEN_MODULES:
            note("forbidden_import", args[0])
        elif event in INTROSPECTION:
            note("introspection", event)
        elif event == "sys._getframe" and from_candidate():
            note("introspection", "sys._getframe")
        elif event == "object.__getattr__" and args[1] in FRAME_ATTRS and from_candidate():
            note("introspection", f".{args[1]}")

    return check


class CallTimeout(BaseException):
    """Raised by the alarm when one call runs past its time (a BaseException, so that a bare
    ``except Exception`` in the code does not swallow it)."""


def _alarm(signum, frame):
    raise CallTimeout()


def plain(value, depth=0):
    """Only built-in data: a value whose ``__eq__`` cannot lie."""
    if depth > 20:
        return False
    if value is None or type(value) in (bool, int, float, str, bytes, complex):
        return True
    if type(value) in (list, tuple, set, frozenset):
        return all(plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(plain(k, depth + 1) and plain(v, depth + 1) for k, v in value.items())
    return False


def timed(fn, seconds):
    signal.setitimer(signal.ITIMER_REAL, seconds)
    t0 = time.process_time()  # CPU seconds: a loaded machine does not make an answer slow
    try:
        return fn(), time.process_time() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def answer(value, seconds):
    """One returned value as a report row: its literal, and whether it is built-in data."""
    try:
        text = repr(value)
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "raised": "ReprError", "error": str(exc)[:200]}
    if isinstance(value, float) and not math.isfinite(value):
        text = f"float({text!r})"
    return {"ok": True, "value": text[:REPR_LIMIT], "plain": plain(value), "seconds": seconds}


def failure(exc, seconds):
    if isinstance(exc, CallTimeout):
        return {"ok": False, "raised": "Timeout", "error": f"no answer within {seconds:g} s"}
    if isinstance(exc, MemoryError):
        return {"ok": False, "raised": "MemoryError", "error": "out of memory"}
    return {"ok": False, "raised": type(exc).__name__, "error": str(exc)[:200]}


def run_call(fn, args_src, seconds):
    try:
        args = ast.literal_eval(args_src)
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "raised": "HarnessError", "error": f"bad arguments: {exc}"[:200]}
    try:
        value, dt = timed(lambda: fn(*args), seconds)
    except BaseException as exc:  # noqa: BLE001 - the code's exception is the result
        return failure(exc, seconds)
    return answer(value, round(dt, 6))


def literal_args(args, kwargs):
    """The positional arguments as a literal the host can send back, or None (keywords, or a
    value ``ast.literal_eval`` cannot read)."""
    if kwargs:
        return None
    try:
        text = repr(tuple(args))
        ast.literal_eval(text)
    except BaseException:  # noqa: BLE001
        return None
    return text if len(text) <= REPR_LIMIT else None


def record(fn, module, source, seconds):
    """Run the test program's setup, then each top-level statement of ``check`` with a
    ``candidate`` that calls ``fn`` and records each call: (calls, units)."""
    env = dict(module)
    env["__name__"] = "tests"
    calls = []

    def candidate(*args, **kwargs):
        row = {"args": literal_args(args, kwargs)}  # before the call: fn may change them
        calls.append(row)
        try:
            value = fn(*args, **kwargs)
        except BaseException as exc:
            row.update(failure(exc, seconds))
            raise
        row.update(answer(value, 0.0))
        return value

    tree = ast.parse(source)
    body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name == "check")]
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    exec(compile(ast.Module(body=body, type_ignores=[]), "<tests>", "exec"), env)
    env["candidate"] = candidate
    units = []
    for stmt in checks[0].body if checks else ():
        code = compile(ast.Module(body=[stmt], type_ignores=[]), "<tests>", "exec")
        try:
            timed(lambda c=code: exec(c, env), seconds)
            units.append({"ok": True})
        except BaseException as exc:  # noqa: BLE001
            units.append(failure(exc, seconds))
    return calls, units


def main():
    job = json.loads(sys.stdin.read())
    sys.stdin.close()
    report = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    set_limits(job.get("limits") or {})
    signal.signal(signal.SIGALRM, _alarm)
    random.seed(0)  # a test program that draws random inputs draws the same ones every time
    hook, arm, violations = make_guard(os.getcwd(), job.get("read_roots") or ())
    sys.addaudithook(hook)
    del hook
    out = {"load_error": None, "calls": [], "recorded": [], "units": [], "violations": violations}
    seconds = float(job.get("call_s") or 2.0)
    module = {"__name__": "solution", "__builtins__": __builtins__}
    arm(True)
    try:
        code = compile(job["solution"], SOLUTION, "exec")
        timed(lambda: exec(code, module), seconds)
        fn = module.get(job["entry_point"])
        if not callable(fn):
            raise NameError(f"no function named {job['entry_point']!r}")
    except CallTimeout:
        out["load_error"] = f"Timeout: loading the code took over {seconds:g} s"
    except BaseException as exc:  # noqa: BLE001 - a broken answer is a result, not a crash
        out["load_error"] = f"{type(exc).__name__}: {exc}"[:300]
    else:
        if job.get("mode") == "record":
            try:
                out["recorded"], out["units"] = record(fn, module, job["check"], seconds)
            except BaseException as exc:  # noqa: BLE001
                out["load_error"] = f"test program: {type(exc).__name__}: {exc}"[:300]
        else:
            out["calls"] = [run_call(fn, a, float(s)) for a, s in job.get("calls") or ()]
    arm(False)
    data = (json.dumps(out) + "\n").encode()
    for i in range(0, len(data), 65536):
        os.write(report, data[i : i + 65536])
    os._exit(0)


main()
