"""Terminal control sequences in data never reach the console (issue 33): a meeting id, a policy
text, a file name or a model answer holding ESC/OSC sequences (set the window title, clear the
screen, hide text, make a hyperlink) is printed with those characters written out."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from evotrainer.cli.app import app
from evotrainer.terminal import SafeConsole, printable

cli = CliRunner()
FIXTURE = Path(__file__).parent / "fixtures" / "synthetic_meetings.jsonl"
TITLE = "\x1b]0;owned\x07"  # OSC: set the window title
CLEAR = "\x1b[2J\x1b[H"  # CSI: clear the screen, cursor home
LINK = "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"  # OSC 8 hyperlink
C1 = "\x9b31m"  # 8-bit CSI
BIDI = "\u202e"  # right-to-left override
HOSTILE = TITLE + CLEAR + LINK + C1 + BIDI


def _clean(text: str) -> None:
    active = [c for c in text if c in "\x1b\x07\x9b\u202e" or ord(c) in range(0x80, 0xA0)]
    assert not active, f"control characters reached the console: {active!r}"


def test_printable_writes_control_characters_out():
    assert printable("a\x1b]0;t\x07b") == "a\\x1b]0;t\\x07b"
    assert printable(C1 + BIDI + "\ud800") == "\\x9b31m\\u202e\ufffd"
    assert printable("line one\n\tline two") == "line one\n\tline two"
    assert printable("plain [bold]text[/] ünïcödé") == "plain [bold]text[/] ünïcödé"


def test_the_safe_console_prints_no_control_character():
    buf = io.StringIO()
    SafeConsole(file=buf, width=200, color_system=None).print(f"[bold]id[/] {HOSTILE} end")
    _clean(buf.getvalue())
    assert "id \\x1b]0;owned" in buf.getvalue()


def _hostile_meetings(tmp_path: Path) -> Path:
    lines = [json.loads(x) for x in FIXTURE.read_text().splitlines() if x.strip()]
    for i, r in enumerate(lines):
        r["id"] = f"m{i}{HOSTILE}"
        r["transcript"][-1]["text"] += " " + HOSTILE
    path = tmp_path / f"meet{TITLE}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def test_eval_tables_and_messages_print_no_control_character(tmp_path):
    data = _hostile_meetings(tmp_path)
    cache = ["--set", f"cache.path={tmp_path / 'c.sqlite'}", "--model", "fake:echo"]
    policy = f"Write the minutes {HOSTILE} and list the decisions."
    one = cli.invoke(app, ["eval", "--data", str(data), "--prompt", policy, *cache])
    assert one.exit_code == 0, one.output
    assert "\\x1b" in one.output  # the ids, written out
    two = cli.invoke(
        app, ["eval", "--data", str(data), "--prompt", policy, "--prompt", "seed:A", *cache]
    )
    assert two.exit_code == 0, two.output
    nowhere = str(tmp_path / f"no{CLEAR}.jsonl")
    missing = cli.invoke(app, ["eval", "--data", nowhere, "--prompt", "seed:A", *cache])
    assert missing.exit_code == 2
    for res in (one, two, missing):
        _clean(res.output)


def test_a_run_prints_no_control_character(tmp_path):
    data = _hostile_meetings(tmp_path)
    seeds = [f"Write the minutes {HOSTILE} of the meeting.", "List the decisions and actions."]
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"inner": {"seed_prompts": seeds}}))  # JSON is YAML
    sets = {
        "inner.generations": "1",
        "inner.population": "3",
        "inner.elites": "1",
        "inner.tasks_per_generation": "2",
        "outer.every": "1",
        "report": "false",
        "defences.terminal_data": "null",
        "cache.path": str(tmp_path / "c.sqlite"),
    }
    args = ["run", "-c", str(cfg), "--model", "fake:echo", "--val-data", str(data)]
    args += ["--run-dir", str(tmp_path / "run")]
    args += [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    res = cli.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "best prompt" in res.output
    _clean(res.output)


def test_the_progress_console_writes_events_out(tmp_path):
    from evotrainer.run import events as ev
    from evotrainer.run.console import ConsoleProgress

    buf = io.StringIO()
    progress = ConsoleProgress(Console(file=buf, width=200, color_system=None))
    progress(ev.Event(ev.WARNING, {"message": f"meeting {HOSTILE} skipped"}))
    progress(ev.Event(ev.CONSTITUTION, {"policy_id": "p1", "detail": f"output {HOSTILE}"}))
    progress(ev.Event(ev.VALIDATION, {"role": "seed", "policy_id": TITLE, "s_val": 0.5, "n": 3}))
    _clean(buf.getvalue())
    assert "meeting \\x1b]0;owned" in buf.getvalue()
