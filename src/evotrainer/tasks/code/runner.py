"""The program that runs inside the sandbox (tasks/code/sandbox.py starts it with ``python -c``).

Standard library only; it never imports EvoTrainer. It reads one job (JSON) from stdin, lowers
its own resource limits, keeps a private copy of stdout for its report and points fd 1 and 2 at
/dev/null, installs an audit hook (the detection layer, see below), runs the candidate's module
and then each call (``calls``: arguments only; the expected answers stay with the host, which
compares) or each unit of a test program (``check``: HumanEval's ``check(candidate)``, whose
top-level statements are run one by one), and writes one report line: the job's nonce, then
JSON. It ends with ``os._exit`` so that nothing the candidate registered runs afterwards.

The audit hook (PEP 578) refuses and records what model-written code has no business doing
here: sockets, new processes, native code (ctypes), writing outside the work directory,
reading files outside it and the Python installation, and looking at the test harness through
frames, tracebacks or the garbage collector. It is a detection layer, not the boundary: native
code could get round it, which is why the process also runs under resource limits and, where
the machine allows, in bubblewrap's namespaces (sandbox.py says what is enforced where).
"""

import ast
import contextlib
import json
import math
import os
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


class Guard:
    """The audit hook's state: the violations seen, and whether the candidate is running."""

    def __init__(self, workdir, read_roots):
        self.workdir = os.path.realpath(workdir)
        self.read_roots = tuple(os.path.realpath(r) for r in read_roots) + (self.workdir,)
        self.violations = []
        self.armed = False
        self.busy = False  # the hook's own work (frames, paths) raises events too

    def note(self, kind, detail):
        if len(self.violations) < 20:
            self.violations.append(f"{kind}: {detail}"[:200])
        raise PermissionError(f"sandbox: {kind} is not allowed ({detail})")

    def from_candidate(self):
        """Whether the frame that raised the event (through inspect.py at most) is the
        candidate's code."""
        frame = sys._getframe(3)  # 0 here, 1 check, 2 __call__, 3 the event's origin
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

    def inside(self, path, roots):
        try:
            real = os.path.realpath(os.fsdecode(path) if not isinstance(path, int) else "")
        except (TypeError, ValueError):
            return True  # a file descriptor: already open
        return any(real == r or real.startswith(r + os.sep) for r in roots)

    def __call__(self, event, args):
        if not self.armed or self.busy:
            return
        self.busy = True
        try:
            self.check(event, args)
        finally:
            self.busy = False

    def check(self, event, args):
        if event == "open":
            path, mode = args[0], args[1]
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            if isinstance(path, int) or path is None:
                return
            writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
            writing = (
                any(c in mode for c in "wax+") if isinstance(mode, str) else bool(flags & writes)
            )
            if writing and not self.inside(path, (self.workdir,)):
                self.note("write_outside_workdir", repr(os.fsdecode(path))[:80])
            if not writing and not self.inside(path, self.read_roots) and path != "/dev/null":
                self.note("read_outside_workdir", repr(os.fsdecode(path))[:80])
        elif event in ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.link"):
            if not self.inside(args[0], (self.workdir,)):
                self.note("write_outside_workdir", f"{event} {args[0]!r}"[:80])
        elif event.startswith(("socket.", "ssl.")):
            self.note("network", event)
        elif event in PROCESS_EVENTS or event.startswith("os.exec"):
            self.note("new_process", event)
        elif event.startswith("ctypes."):
            self.note("native_code", event)
        elif event == "import" and args[0] and args[0].split(".")[0] in FORBIDDEN_MODULES:
            self.note("forbidden_import", args[0])
        elif (
            event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents")
            or event == "sys._current_frames"
            or event == "sys.settrace"
            or event == "sys.setprofile"
        ):
            self.note("introspection", event)
        elif event == "sys._getframe" and self.from_candidate():
            self.note("introspection", "sys._getframe")
        elif event == "object.__getattr__" and args[1] in FRAME_ATTRS and self.from_candidate():
            self.note("introspection", f".{args[1]}")


class CallTimeout(BaseException):
    """Raised by the alarm when one call runs past its time (a BaseException, so that a bare
    ``except Exception`` in the candidate does not swallow it)."""


def _alarm(signum, frame):
    raise CallTimeout()


def plain(value, depth=0):
    """Only built-in data: a value whose ``__eq__`` cannot lie (an object that equals
    everything passes every ``assert candidate(x) == y``)."""
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


def run_call(fn, args_src, seconds):
    try:
        args = ast.literal_eval(args_src)
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "raised": "HarnessError", "error": f"bad arguments: {exc}"[:200]}
    try:
        value, dt = timed(lambda: fn(*args), seconds)
    except CallTimeout:
        return {"ok": False, "raised": "Timeout", "error": f"no answer within {seconds:g} s"}
    except MemoryError:
        return {"ok": False, "raised": "MemoryError", "error": "out of memory"}
    except BaseException as exc:  # noqa: BLE001 - the candidate's exception is the result
        return {"ok": False, "raised": type(exc).__name__, "error": str(exc)[:200]}
    try:
        text = repr(value)
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "raised": "ReprError", "error": str(exc)[:200]}
    if isinstance(value, float) and not math.isfinite(value):
        text = f"float({text!r})"
    return {
        "ok": True,
        "value": text[:REPR_LIMIT],
        "plain": plain(value),
        "seconds": round(dt, 6),
    }


def check_units(source):
    """The top-level statements of ``check(candidate)`` in a test program, one unit each."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            return [ast.Module(body=[stmt], type_ignores=[]) for stmt in node.body]
    return []


def run_check(fn, module, source, seconds, guard):
    """Run the test program's setup, then each unit of ``check`` with ``candidate`` bound, in
    the candidate module's namespace (as HumanEval's own harness does: some tests call the
    function by its name)."""
    env = dict(module)
    env["__name__"] = "tests"

    def candidate(*args, **kwargs):
        value = fn(*args, **kwargs)
        if not plain(value):
            guard.violations.append("non_plain_result: the function returned a non-builtin object")
        return value

    try:
        tree = ast.parse(source)
        setup = ast.Module(
            body=[
                n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name == "check")
            ],
            type_ignores=[],
        )
        exec(compile(setup, "<tests>", "exec"), env)
        units = check_units(source)
    except BaseException as exc:  # noqa: BLE001
        return [{"ok": False, "raised": "HarnessError", "error": f"test program: {exc}"[:200]}]
    env["candidate"] = candidate
    results = []
    for unit in units:
        code = compile(unit, "<tests>", "exec")
        try:
            timed(lambda c=code: exec(c, env), seconds)
            results.append({"ok": True})
        except CallTimeout:
            results.append({"ok": False, "raised": "Timeout", "error": f"over {seconds:g} s"})
        except AssertionError as exc:
            results.append({"ok": False, "raised": "AssertionError", "error": str(exc)[:200]})
        except BaseException as exc:  # noqa: BLE001
            results.append({"ok": False, "raised": type(exc).__name__, "error": str(exc)[:200]})
    return results


def main():
    job = json.loads(sys.stdin.read())
    sys.stdin.close()
    nonce = job.pop("nonce")
    report = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    set_limits(job.get("limits") or {})
    signal.signal(signal.SIGALRM, _alarm)
    guard = Guard(os.getcwd(), job.get("read_roots") or ())
    sys.addaudithook(guard)
    out = {"load_error": None, "calls": [], "check": [], "violations": guard.violations}
    seconds = float(job.get("call_s") or 2.0)
    module = {"__name__": "solution", "__builtins__": __builtins__}
    guard.armed = True
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
        out["calls"] = [run_call(fn, a, float(s)) for a, s in job.get("calls") or ()]
        if job.get("check"):
            out["check"] = run_check(fn, module, job["check"], seconds, guard)
    guard.armed = False
    data = (nonce + json.dumps(out) + "\n").encode()
    for i in range(0, len(data), 65536):
        os.write(report, data[i : i + 65536])
    os._exit(0)


main()
