"""The code gym's sandbox: model-written code that misbehaves is contained or detected, and the
runner survives every case (docs/code-gym.md, "Containment tests").

Each hostile candidate runs in bubblewrap (``auto``); the fork bomb also runs with the audit
hook switched off, to show that the process limit holds without it. After all of them a plain
candidate still runs: the host is unharmed. The probes of issue 33 (escapes, forged verdicts)
are in test_sandbox_redteam.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from evotrainer.errors import ConfigError
from evotrainer.tasks.code import isolation
from evotrainer.tasks.code.isolation import MECHANISMS, SandboxUnavailable, detect
from evotrainer.tasks.code.sandbox import Limits, Sandbox
from tests.sandbox_modes import FAST
from tests.support import needs_sandbox

pytestmark = needs_sandbox


@pytest.fixture(scope="module")
def box() -> Sandbox:
    return Sandbox("auto", FAST)


def call(box: Sandbox, code: str, args: str = "(1,)"):
    ex = box.run(code, "f", [(args, FAST.call_s)])
    return ex, (ex.calls[0] if ex.calls else None)


def test_a_plain_candidate_runs(box):
    ex, r = call(box, "def f(x):\n    return [x, x * 2]\n", "(21,)")
    assert ex.status == "ok" and r.ok and r.value == "[21, 42]" and r.plain
    assert ex.mechanism in MECHANISMS and not ex.violations


def test_infinite_loop_is_cut_at_the_call_limit(box):
    ex, r = call(box, "def f(x):\n    while True:\n        pass\n")
    assert ex.status == "ok" and not r.ok and r.raised == "Timeout"


def test_infinite_loop_that_swallows_the_timeout_is_killed_at_the_wall_clock():
    box = Sandbox("auto", Limits(call_s=0.5, wall_s=3.0))
    code = (
        "def f(x):\n    while True:\n        try:\n            while True:\n"
        "                pass\n        except BaseException:\n            pass\n"
    )
    ex = box.run(code, "f", [("(1,)", 0.5)])
    assert ex.status in ("timeout", "killed") and not ex.calls
    assert ex.wall_s < 15


def test_infinite_loop_while_loading_is_reported(box):
    ex, _ = call(box, "while True:\n    pass\n\ndef f(x):\n    return 1\n")
    assert ex.status == "load_error" and "Timeout" in ex.error


def test_fork_bomb_is_refused_and_reported(box):
    ex, r = call(box, "import os\ndef f(x):\n    while True:\n        os.fork()\n")
    assert not r.ok and "new_process: os.fork" in ex.violations


def test_subprocess_is_refused(box):
    ex, r = call(box, "import os\ndef f(x):\n    return os.system('echo hi')\n")
    assert not r.ok and any(v.startswith("new_process") for v in ex.violations)
    ex, _ = call(box, "import _posixsubprocess\ndef f(x):\n    return 1\n")
    assert ex.status == "load_error" and "forbidden_import: _posixsubprocess" in ex.violations


FORKS = """
import os, time
def f(x):
    n = 0
    for _ in range(300):
        try:
            pid = os.fork()
        except OSError:
            return ("refused after", n)
        if pid == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
    return ("forked", n)
"""


def test_fork_bomb_is_contained_by_the_process_limit_without_the_hook():
    box = Sandbox("auto", Limits(call_s=5.0, wall_s=10.0), audit_hook=False)
    ex = box.run(FORKS, "f", [("(1,)", 5.0)])
    assert ex.status == "ok", ex
    assert ex.calls[0].value.startswith("('refused after'")
    assert int(ex.calls[0].value.split(",")[1].strip(" )")) <= Limits().processes


def test_memory_bomb_hits_the_address_space_limit(box):
    ex, r = call(
        box, "def f(x):\n    a = []\n    while True:\n        a.append(bytearray(10**7))\n"
    )
    assert ex.status in ("ok", "killed")
    if ex.status == "ok":
        assert not r.ok and r.raised in ("MemoryError", "Timeout")


def test_writing_outside_the_work_directory_is_refused(box, tmp_path):
    target = tmp_path / "pwned.txt"
    code = f"def f(x):\n    open({str(target)!r}, 'w').write('x')\n    return 1\n"
    ex, r = call(box, code)
    assert not r.ok and any(v.startswith("write_outside_workdir") for v in ex.violations)
    assert not target.exists()


def test_writing_outside_is_stopped_without_the_hook(tmp_path):
    target = tmp_path / "pwned.txt"
    box = Sandbox("bwrap", FAST, audit_hook=False)
    code = f"def f(x):\n    open({str(target)!r}, 'w').write('x')\n    return 1\n"
    ex = box.run(code, "f", [("(1,)", 1.0)])
    assert not ex.calls[0].ok and not target.exists()


def test_writing_inside_the_work_directory_is_allowed(box):
    code = "def f(x):\n    open('scratch.txt', 'w').write('ok')\n    return open('scratch.txt').read()\n"
    ex, r = call(box, code)
    assert r.ok and r.value == "'ok'" and not ex.violations


def test_reading_the_test_data_to_copy_answers_is_refused(box, tmp_path):
    """The tests are not in the sandbox (the arguments come on stdin, the expected answers stay
    with the host); a file with answers elsewhere on the machine is refused, and the harness's
    frames (where a test program keeps its expected values) cannot be read."""
    answers = tmp_path / "test_answers.jsonl"
    answers.write_text('{"expected": 42}\n')
    ex, r = call(box, f"def f(x):\n    return open({str(answers)!r}).read()\n")
    assert not r.ok and any(v.startswith("read_outside_workdir") for v in ex.violations)
    ex, r = call(box, "import glob\ndef f(x):\n    return glob.glob('**', recursive=True)\n")
    assert r.ok and r.value == "[]"  # the work directory is empty: no test file to read
    frames = "import sys\ndef f(x):\n    return repr(sys._getframe(1).f_locals)\n"
    ex, r = call(box, frames)
    assert not r.ok and "introspection: sys._getframe" in ex.violations
    ex, r = call(box, "import gc\ndef f(x):\n    return len(gc.get_objects())\n")
    assert not r.ok and "introspection: gc.get_objects" in ex.violations


def test_an_object_that_equals_everything_is_caught(box):
    code = "class A:\n    def __eq__(self, o):\n        return True\n\ndef f(x):\n    return A()\n"
    ex, r = call(box, code)
    assert r.ok and not r.plain


def test_opening_a_socket_is_refused(box):
    code = (
        "def f(x):\n    import socket\n"
        "    socket.create_connection(('1.1.1.1', 80), timeout=1)\n    return 1\n"
    )
    ex, r = call(box, code)
    assert not r.ok and any(v.startswith(("forbidden_import", "network")) for v in ex.violations)


def test_no_network_without_the_hook():
    box = Sandbox("auto", FAST, audit_hook=False)
    code = (
        "import socket\ndef f(x):\n    try:\n"
        "        socket.create_connection(('1.1.1.1', 53), timeout=1)\n"
        "    except OSError as exc:\n        return type(exc).__name__\n    return 'connected'\n"
    )
    ex = box.run(code, "f", [("(1,)", 3.0)])
    assert ex.calls[0].ok and ex.calls[0].value != "'connected'"


def test_printing_does_not_disturb_the_report(box):
    ex, r = call(box, "def f(x):\n    print('noise' * 1000)\n    return 7\n")
    assert r.ok and r.value == "7"


def test_the_runner_survives_all_of_the_above(box):
    ex, r = call(box, "def f(x):\n    return sum(range(x))\n", "(10,)")
    assert r.ok and r.value == "45"
    assert not list(Path("/tmp").glob("evotrainer-pwned*"))


def test_a_named_mechanism_that_does_not_work_is_refused():
    with pytest.raises(SandboxUnavailable):
        detect("chroot")
    assert "auto" not in MECHANISMS and MECHANISMS[0] == "bwrap"


def test_the_old_unsafe_names_are_refused_with_their_new_names():
    for old, new in (("process", "unsafe-process"), ("unshare", "unsafe-unshare")):
        with pytest.raises(SandboxUnavailable, match=new):
            detect(old)


def test_without_bubblewrap_the_code_task_refuses_to_start_and_says_what_to_install(
    monkeypatch,
):
    from evotrainer.tasks.code.task import CodeTask

    real_which = isolation.shutil.which
    monkeypatch.setattr(
        isolation.shutil, "which", lambda name: None if name == "bwrap" else real_which(name)
    )
    detect.cache_clear()
    try:
        with pytest.raises(ConfigError, match="apt install bubblewrap") as err:
            CodeTask(sandbox="auto")
        assert "unsafe-process" in str(err.value)
        assert CodeTask(sandbox="unsafe-process").sandbox.mechanism == "unsafe-process"
    finally:
        detect.cache_clear()


def test_the_host_measures_cpu_time_itself(box):
    spin = "def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n"
    quick = box.run(spin, "f", [("(10,)", 5.0)])
    slow = box.run(spin, "f", [("(4000000,)", 5.0)])
    assert quick.ran and slow.ran
    assert slow.cpu_s > quick.cpu_s + 0.05  # the kernel's count, through bubblewrap


def test_resume_never_takes_an_unsafe_sandbox_from_a_run_directory(tmp_path):
    import yaml

    from evotrainer.errors import ConfigError as Refused
    from evotrainer.run.rundir import RunDirectory

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(
        yaml.safe_dump({"task": {"name": "code", "sandbox": "unsafe-process"}})
    )
    with pytest.raises(Refused, match="task.sandbox=unsafe-process"):
        RunDirectory.open(run_dir)
    (run_dir / "config.yaml").write_text(yaml.safe_dump({"task": {"name": "code"}}))
    assert RunDirectory.open(run_dir).config.task.sandbox == "auto"


# -- issue 50: a call's limit is CPU time; the wall clock is a backstop scaled to the load -------
SLEEPER = "import time\ndef f(s):\n    time.sleep(s)\n    return 'slept'\n"


def test_a_call_is_limited_in_cpu_seconds_not_in_wall_clock_seconds(box):
    """A loaded machine stretches wall-clock time, not CPU time: a call that waits 1.3 s but
    computes nothing is inside a 1 s limit (the probe's correct answer, 0.4 CPU s, was cut at a
    0.8 s alarm on a machine at load 4 on 2 cores). A loop is still cut, in CPU seconds."""
    ex, r = call(box, SLEEPER, "(1.3,)")
    assert r is not None and r.ok and r.value == "'slept'", ex
    ex, r = call(box, "def f(x):\n    while True:\n        pass\n")
    assert not r.ok and r.raised == "Timeout" and "CPU" in r.error


def test_the_wall_clock_backstop_ends_a_call_that_waits(box):
    ex, r = call(box, SLEEPER, "(60,)")
    assert ex.ran and not r.ok and r.raised == "Timeout" and "wall-clock" in r.error


def test_the_backstop_grows_with_the_machines_load(monkeypatch):
    from evotrainer.tasks.code import sandbox

    monkeypatch.setattr(sandbox.os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    monkeypatch.setattr(sandbox.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert sandbox.load_scale() == 4.0  # load 8 on 2 CPUs
    monkeypatch.setattr(sandbox.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert sandbox.load_scale() == 1.0  # never below the idle machine's limits
    monkeypatch.setattr(sandbox.os, "getloadavg", lambda: (1e6, 1e6, 1e6))
    assert sandbox.load_scale() == sandbox.MAX_LOAD_SCALE
    # a call that waits 2.5 s: past the backstop of an idle machine (2 x 1 s) ...
    monkeypatch.setattr(sandbox, "load_scale", lambda: 1.0)
    ex, r = call(Sandbox("auto", FAST), SLEEPER, "(2.5,)")
    assert not r.ok and r.raised == "Timeout"
    # ... inside the backstop of a machine at 4 times its CPUs (2 x 1 s x 4)
    monkeypatch.setattr(sandbox, "load_scale", lambda: 4.0)
    ex, r = call(Sandbox("auto", FAST), SLEEPER, "(2.5,)")
    assert r is not None and r.ok, ex
