"""The code gym's sandbox: model-written code that misbehaves is contained or detected, and the
runner survives every case (docs/code-gym.md, "Containment tests").

Each hostile candidate runs in the strongest mechanism this machine offers (``auto``); the
fork bomb also runs with the audit hook switched off, to show that the process limit holds
without it. After all of them a plain candidate still runs: the host is unharmed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evotrainer.tasks.code.sandbox import (
    MECHANISMS,
    Limits,
    Sandbox,
    available_mechanism,
    drops_privileges,
)

FAST = Limits(call_s=1.0, wall_s=8.0, memory_mb=256)


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
    mechanism = available_mechanism("auto")
    if os.geteuid() == 0 and not drops_privileges(mechanism):
        pytest.skip(
            f"as root without a privilege drop ({mechanism}), the kernel does not apply the "
            "process limit: only the audit hook and the PID namespace stand (docs/code-gym.md)"
        )
    box = Sandbox(mechanism, Limits(call_s=5.0, wall_s=10.0), detect=False)
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


def test_writing_outside_is_stopped_without_the_hook_where_the_file_system_is_confined(
    tmp_path,
):
    if available_mechanism("auto") != "bwrap":
        pytest.skip("only bubblewrap confines the file system; elsewhere the hook stands alone")
    target = tmp_path / "pwned.txt"
    box = Sandbox("bwrap", FAST, detect=False)
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


def test_test_program_frames_are_out_of_reach():
    box = Sandbox("auto", FAST)
    check = "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(3) == 9\n"
    honest = box.run("def f(x):\n    return x * x\n", "f", check=check)
    assert [r.ok for r in honest.check] == [True, True]
    peek = (
        "import inspect\n"
        "def f(x):\n"
        "    frame = inspect.currentframe().f_back\n"
        "    return frame.f_code.co_consts[-1]\n"
    )
    ex = box.run(peek, "f", check=check)
    assert not any(r.ok for r in ex.check) and "introspection: sys._getframe" in ex.violations


def test_an_object_that_equals_everything_is_caught(box):
    code = "class A:\n    def __eq__(self, o):\n        return True\n\ndef f(x):\n    return A()\n"
    ex, r = call(box, code)
    assert r.ok and not r.plain
    check = "def check(candidate):\n    assert candidate(1) == 2\n"
    ex = Sandbox("auto", FAST).run(code, "f", check=check)
    assert any(v.startswith("non_plain_result") for v in ex.violations)


def test_opening_a_socket_is_refused(box):
    code = (
        "def f(x):\n    import socket\n"
        "    socket.create_connection(('1.1.1.1', 80), timeout=1)\n    return 1\n"
    )
    ex, r = call(box, code)
    assert not r.ok and any(v.startswith(("forbidden_import", "network")) for v in ex.violations)


def test_no_network_without_the_hook_where_namespaces_are_available():
    mechanism = available_mechanism("auto")
    if mechanism == "process":
        pytest.skip("no network namespace on this machine: only the audit hook refuses sockets")
    box = Sandbox(mechanism, FAST, detect=False)
    code = (
        "import socket\ndef f(x):\n    try:\n"
        "        socket.create_connection(('1.1.1.1', 53), timeout=1)\n"
        "    except OSError as exc:\n        return type(exc).__name__\n    return 'connected'\n"
    )
    ex = box.run(code, "f", [("(1,)", 3.0)])
    assert ex.calls[0].ok and ex.calls[0].value != "'connected'"


def test_a_forged_report_line_is_ignored(box):
    code = (
        "import os\ndef f(x):\n"
        '    os.write(3, b\'0000{"load_error": null, "calls": [{"ok": true, "value": "42"}]}\\n\')\n'
        "    return 1\n"
    )
    ex, r = call(box, code)
    assert ex.status == "ok" and (r.value == "1" or not r.ok)


def test_printing_does_not_disturb_the_report(box):
    ex, r = call(box, "def f(x):\n    print('noise' * 1000)\n    return 7\n")
    assert r.ok and r.value == "7"


def test_the_runner_survives_all_of_the_above(box):
    ex, r = call(box, "def f(x):\n    return sum(range(x))\n", "(10,)")
    assert r.ok and r.value == "45"
    assert not list(Path("/tmp").glob("evotrainer-pwned*"))


def test_a_named_mechanism_that_does_not_work_is_refused():
    with pytest.raises(ValueError):
        available_mechanism("chroot")
