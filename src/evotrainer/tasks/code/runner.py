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
writes its own answers on the report descriptor has answered, nothing more; the refusals the
hook noted (``violations``) travel in the same report and are the code's own word too: the host
shows them as feedback and never scores them (docs/code-gym.md).

Each call is limited in CPU seconds (ITIMER_PROF); a wall-clock timer at ``BACKSTOP`` times the
limit, scaled by the host's load (``wall_scale``), ends code that waits instead of computing.

The audit hook (PEP 578) refuses and records what model-written code has no business doing:
sockets, new processes, signals, native code (ctypes), subinterpreters (they have no hook),
writing, truncating, linking or changing files outside the work directory, reading files outside
it and the Python installation, looking at frames, tracebacks or the garbage collector from
anywhere under the code. It is on from before the code is compiled to the end, with no switch;
its state lives in closures, and everything it calls is a built-in function bound when it is
made (no library code runs in it, so patching a library changes nothing it does), out of reach
of ``import __main__``, ``object.__subclasses__()``, rebinding ``builtins`` or ``os``, and the
frames the code may see. It is defence in depth only:
PEP 578 hooks are not a sandbox. The boundary is bubblewrap's namespaces, seccomp and an
unprivileged uid (isolation.py).
"""

import ast
import collections
import contextlib
import enum
import json
import math
import os
import random
import resource
import signal
import stat
import sys
import time
import typing
from _thread import get_ident as _thread_ident

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
    "_xxsubinterpreters",  # a subinterpreter has no audit hook of its own
    "_xxinterpchannels",
    "_interpreters",
    "_interpchannels",
    "_interpqueues",
    "_testcapi",  # CPython's test helpers reach memory and interpreter internals
    "_testinternalcapi",
)
BACKSTOP = 2.0  # the wall-clock backstop of a call: this many times its CPU limit (x load)
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
    """The audit hook and the list it notes refusals in: (hook, violations).

    The hook is on from the moment it is added: there is no switch to find. Everything it uses
    is bound when it is made (builtins, ``os`` functions, its rules, a path resolver of its
    own), so code that rebinds ``builtins.any``, ``os.fspath`` or ``os.path.realpath``, or the
    runner's module globals, changes nothing the hook reads. Its re-entry guard is per thread
    (a second thread cannot slip through while the first is being checked)."""
    resolve = _make_resolver()
    workdir = resolve(os.getcwd() if workdir is None else workdir)
    readable = tuple(resolve(r) for r in read_roots) + (workdir,)
    violations = []
    check = _make_check(workdir, readable, violations, resolve)

    def hook(event, args, _check=check, _busy=set(), _ident=_thread_ident):  # noqa: B006
        me = _ident()
        if me in _busy:
            return
        _busy.add(me)
        try:
            refused = _check(event, args)
        finally:
            _busy.discard(me)
        del _check, _busy  # the traceback of the refusal holds this frame: leave nothing in it
        if refused is not None:
            raise PermissionError(refused)

    return hook, violations


def _make_resolver(_lstat=os.lstat, _readlink=os.readlink, _getcwd=os.getcwd, _islink=stat.S_ISLNK):
    """``os.path.realpath`` built only from functions bound here (the standard one looks up
    ``os.lstat`` and ``os.fspath`` when it runs, which the code under test can rebind). Returns
    the absolute path with every symbolic link resolved; None after 40 links (a loop)."""

    def resolve(path):
        if not path.startswith("/"):
            path = _getcwd() + "/" + path
        pending = path.split("/")[::-1]
        done = []
        links = 0
        while pending:
            name = pending.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if done:
                    done.pop()
                continue
            here = "/" + "/".join([*done, name])
            try:
                mode = _lstat(here).st_mode
            except (OSError, ValueError):
                done.append(name)  # not there (yet): the rest is taken as written
                continue
            if not _islink(mode):
                done.append(name)
                continue
            links += 1
            if links > 40:
                return None
            target = _readlink(here)
            if target.startswith("/"):
                done = []
            pending.extend(target.split("/")[::-1])
        return "/" + "/".join(done)

    return resolve


def _make_check(workdir, readable, violations, resolve):
    """The hook's check of one event, as a closure over the guard's paths and every rule: it
    notes and returns the refusal's message for what the code under test may not do, else
    None."""
    _any, _len, _type, _int, _str, _bool = any, len, type, int, str, bool
    text, inside, shown = _make_paths(resolve)
    from_candidate = _make_origin()
    forbidden, process, signals = FORBIDDEN_MODULES, PROCESS_EVENTS, SIGNAL_EVENTS
    writes_, links_, reads_ = WRITE_EVENTS, LINK_EVENTS, READ_EVENTS
    introspection, frame_attrs = INTROSPECTION, FRAME_ATTRS
    writing_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def note(kind, detail):
        message = (kind + ": " + detail)[:200]
        if _len(violations) < 20:
            violations.append(message)
        return "sandbox: " + kind + " is not allowed (" + detail + ")"

    def check(event, args):
        if event == "open":
            path, mode = args[0], args[1]
            flags = args[2] if _len(args) > 2 and _type(args[2]) is _int else 0
            if path is None or _type(path) is _int:
                return None
            writing = (
                _any(c in mode for c in "wax+")
                if _type(mode) is _str
                else _bool(flags & writing_flags)
            )
            if writing and not inside(path, (workdir,)):
                return note("write_outside_workdir", shown(path))
            if not writing and not inside(path, readable) and text(path) != "/dev/null":
                return note("read_outside_workdir", shown(path))
        elif event in writes_:
            if not inside(args[0], (workdir,)):
                return note("write_outside_workdir", (event + " " + shown(args[0]))[:80])
        elif event in links_:
            if not (inside(args[0], readable) and inside(args[1], (workdir,))):
                detail = event + " " + shown(args[0]) + " -> " + shown(args[1])
                return note("write_outside_workdir", detail[:80])
        elif event in reads_:
            if args and not inside(args[0] if args[0] is not None else ".", readable):
                return note("read_outside_workdir", (event + " " + shown(args[0]))[:80])
        elif event.startswith(("socket.", "ssl.")):
            return note("network", event)
        elif event in process or event.startswith("os.exec"):
            return note("new_process", event)
        elif event in signals:
            return note("signal", event)
        elif event.startswith("ctypes."):
            return note("native_code", event)
        elif event == "cpython.PyInterpreterState_New":
            return note("subinterpreter", event)
        elif event == "import" and (text(args[0]) or "").split(".")[0] in forbidden:
            return note("forbidden_import", text(args[0]) or "")
        elif event in introspection:
            return note("introspection", event)
        elif event == "sys._getframe" and from_candidate():
            return note("introspection", "sys._getframe")
        elif event == "object.__getattr__" and text(args[1]) in frame_attrs and from_candidate():
            return note("introspection", "." + text(args[1]))
        return None

    return check


def _make_paths(resolve):
    """The hook's path helpers, bound to built-ins now: (text, inside, shown)."""
    _any, _repr, _isinstance = any, repr, isinstance
    _str, _bytes, _int, _bool = str, bytes, int, bool
    decode = bytes.decode

    def text(path):
        """A path argument as an exact str (never a call into the code's own objects), or
        None for one that is not a str, bytes or descriptor."""
        if _isinstance(path, _str):
            return "".join((path,))
        if _isinstance(path, _bytes):
            return decode(path, "utf-8", "surrogateescape")
        return None

    def inside(path, roots):
        if path is None or (_isinstance(path, _int) and not _isinstance(path, _bool)):
            return True  # a file descriptor: already open (and opened under this hook)
        name = text(path)
        real = resolve(name) if name is not None and "\x00" not in name else None
        return real is not None and _any(real == r or real.startswith(r + "/") for r in roots)

    def shown(path):
        name = text(path)
        return _repr(name)[:80] if name is not None else "(a path that is not text)"

    return text, inside, shown


def _make_origin(_getframe=sys._getframe, _id=id):
    """``from_candidate()``: whether the code under test is anywhere on the stack of the event
    being checked, unless the event comes straight from one of the standard library's
    functions that only look up their caller's module name (``_name_lookups``: known by
    identity, not by file name, which ``compile`` lets anyone choose). Called by the check
    only (it counts the frames above it)."""
    solution = SOLUTION
    lookups = _name_lookups()  # kept alive: their ids stay theirs
    lookup_ids = frozenset(_id(c) for c in lookups)

    def from_candidate():
        frame = _getframe(3)  # 0 here, 1 check, 2 hook, 3 the event's origin
        if frame is not None and _id(frame.f_code) in lookup_ids:
            return False
        while frame is not None:
            if frame.f_code.co_filename == solution:
                return True
            frame = frame.f_back
        return False

    return from_candidate


def _name_lookups():
    """The code of the standard library's functions that call ``sys._getframe`` only to read
    their caller's module name: ``collections.namedtuple``, ``typing``'s ``_caller`` (TypeVar,
    NewType ...) and ``enum``'s functional API. Those are allowed under the code under test."""
    found = []
    for owner, name in (
        (collections, "namedtuple"),
        (typing, "_caller"),
        (enum.EnumType, "_create_"),
    ):
        fn = getattr(owner, name, None)
        code = getattr(getattr(fn, "__func__", fn), "__code__", None)
        if code is not None:
            found.append(code)
    return tuple(found)


class CallTimeout(BaseException):
    """Raised by a timer when one call runs past its time (a BaseException, so that a bare
    ``except Exception`` in the code does not swallow it). ``clock``: "CPU" (the limit) or
    "wall-clock" (the backstop, for code that waits instead of computing)."""

    def __init__(self, clock, limit=0.0):
        super().__init__(clock)
        self.clock, self.limit = clock, limit


LIMITS = {"cpu": 0.0, "wall": 0.0}  # the current call's limits, for the timers' messages


def _cpu_alarm(signum, frame):
    raise CallTimeout("CPU", LIMITS.get("cpu", 0.0))


def _wall_alarm(signum, frame):
    raise CallTimeout("wall-clock", LIMITS.get("wall", 0.0))


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


def timed(fn, seconds, scale=1.0):
    """``fn()`` and the CPU seconds it took, cut after ``seconds`` of CPU time (ITIMER_PROF:
    a loaded machine does not make an answer slow); a wall-clock backstop ends code that waits
    instead (``BACKSTOP`` times the limit, times ``scale``: the host's load)."""
    LIMITS["cpu"], LIMITS["wall"] = seconds, seconds * BACKSTOP * max(1.0, scale)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, LIMITS["wall"])
    t0 = time.process_time()
    try:
        return fn(), time.process_time() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)


def answer(value, seconds):
    """One returned value as a report row: its literal, and whether it is built-in data. An
    integer too long to write (Python's limit on int-to-text conversion) is written as a phrase
    the host cannot read as the expected answer: a wrong answer, not a failed call."""
    try:
        text = repr(value)
    except ValueError as exc:
        if not plain(value) or "integer string conversion" not in str(exc):
            return {"ok": False, "raised": "ReprError", "error": str(exc)[:200]}
        what = "an integer" if type(value) is int else "a value holding an integer"
        text = f"{what} of more than {sys.get_int_max_str_digits()} digits"
    except BaseException as exc:  # noqa: BLE001
        return {"ok": False, "raised": "ReprError", "error": str(exc)[:200]}
    if isinstance(value, float) and not math.isfinite(value):
        text = f"float({text!r})"
    return {"ok": True, "value": text[:REPR_LIMIT], "plain": plain(value), "seconds": seconds}


def failure(exc, seconds):
    if isinstance(exc, CallTimeout):
        limit = exc.limit or seconds
        return {
            "ok": False,
            "raised": "Timeout",
            "error": f"no answer within {limit:g} {exc.clock} s",
        }
    if isinstance(exc, MemoryError):
        return {"ok": False, "raised": "MemoryError", "error": "out of memory"}
    return {"ok": False, "raised": type(exc).__name__, "error": str(exc)[:200]}


def run_call(fn, args_src, seconds, scale):
    try:
        args = ast.literal_eval(args_src)
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "raised": "HarnessError", "error": f"bad arguments: {exc}"[:200]}
    try:
        value, dt = timed(lambda: fn(*args), seconds, scale)
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


def record(fn, module, source, seconds, scale):
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
            timed(lambda c=code: exec(c, env), seconds, scale)
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
    signal.signal(signal.SIGPROF, _cpu_alarm)
    signal.signal(signal.SIGALRM, _wall_alarm)
    random.seed(0)  # a test program that draws random inputs draws the same ones every time
    out = {"load_error": None, "calls": [], "recorded": [], "units": [], "violations": []}
    seconds = float(job.get("call_s") or 2.0)
    scale = float(job.get("wall_scale") or 1.0)
    module = {"__name__": "solution", "__builtins__": __builtins__}
    hook, out["violations"] = make_guard(os.getcwd(), job.get("read_roots") or ())
    sys.addaudithook(hook)  # on from here to the end: nothing switches it off
    del hook
    try:
        code = compile(job["solution"], SOLUTION, "exec")
        timed(lambda: exec(code, module), seconds, scale)
        fn = module.get(job["entry_point"])
        if not callable(fn):
            raise NameError(f"no function named {job['entry_point']!r}")
    except CallTimeout as exc:
        out["load_error"] = f"Timeout: loading the code took over {exc.limit:g} {exc.clock} s"
    except BaseException as exc:  # noqa: BLE001 - a broken answer is a result, not a crash
        out["load_error"] = f"{type(exc).__name__}: {exc}"[:300]
    else:
        if job.get("mode") == "record":
            try:
                out["recorded"], out["units"] = record(fn, module, job["check"], seconds, scale)
            except BaseException as exc:  # noqa: BLE001
                out["load_error"] = f"test program: {type(exc).__name__}: {exc}"[:300]
        else:
            calls = job.get("calls") or ()
            out["calls"] = [run_call(fn, a, float(s), scale) for a, s in calls]
    data = (json.dumps(out) + "\n").encode()
    for i in range(0, len(data), 65536):
        os.write(report, data[i : i + 65536])
    os._exit(0)


main()
