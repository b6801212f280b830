"""One call count (issue 51): the backend calls (what budget.max_calls caps, counted once across
resumes, the cache's answers beside them as "cached") are the number the console, summary.json,
the report, a resume's "spent before" and the trackers give. A capped run on the fake model and
its resume must say the same number everywhere; outer steps are counted alike too."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from evotrainer.cli.app import app

cli = CliRunner()
SETS = {
    "validation.data": "null",  # synthetic validation and training: the test needs no data
    "harness.real_data": "null",
    "defences.terminal_data": "null",
    "inner.population": 4,
    "inner.elites": 2,
    "inner.tasks_per_generation": 3,
    "inner.generations": 4,
    "outer.every": 2,
    "validation.synthetic_size": 6,
    "validation.confirm": 2,
}


def _closing(output: str) -> tuple[int, int]:
    """The closing line's backend calls and cached answers."""
    m = re.search(
        r"^generations \d+, outer steps .*?backend calls (\d+)(?: \+ (\d+) cached)?", output, re.M
    )
    assert m, output
    return int(m.group(1)), int(m.group(2) or 0)


def _summary_calls(run_dir) -> tuple[int, int, dict]:
    s = json.loads((run_dir / "summary.json").read_text())
    return s["runtime"]["backend_calls"], s["runtime"]["cache_hits"], s


def _report_calls(run_dir) -> str:
    page = (run_dir / "report" / "index.html").read_text()
    m = re.search(r'backend calls</div><div class="value ">([^<]*)</div>', page)
    assert m, "no backend calls card in the report"
    return m.group(1)


def test_a_capped_run_and_its_resume_count_calls_alike_everywhere(tmp_path):
    rd = tmp_path / "run"
    sets = [a for k, v in {**SETS, "cache.path": str(tmp_path / "c.sqlite")}.items()
            for a in ("--set", f"{k}={v}")]  # fmt: skip
    res = cli.invoke(
        app,
        ["run", "--model", "fake:minutes", "--run-dir", str(rd), "--max-calls", "60", *sets],
    )
    assert res.exit_code == 0, res.output
    out = res.output
    calls, cached = _closing(out)
    s_calls, s_cached, summary = _summary_calls(rd)
    assert summary["stopped"] == "budget" and calls <= 60
    assert (calls, cached) == (s_calls, s_cached)
    assert _report_calls(rd) == (f"{calls} + {cached} cached" if cached else f"{calls}")
    stopped = re.search(r"budget spent: (\d+) backend calls made of max_calls=60", out)
    assert stopped and int(stopped.group(1)) <= calls, out
    seen = [int(x) for x in re.findall(r"\| backend calls (\d+)", out)]
    assert seen and seen == sorted(seen) and seen[-1] <= calls
    assert f"outer steps {summary['outer_steps']}" in out

    res = cli.invoke(app, ["resume", str(rd), "--more-generations", "2", "--max-calls", "400"])
    assert res.exit_code == 0, res.output
    out2 = res.output
    # the resume goes on from every call the first session made, its final validation included
    assert f"{calls} backend calls spent before this resume" in out2, out2
    calls2, cached2 = _closing(out2)
    s_calls2, s_cached2, summary2 = _summary_calls(rd)
    assert (calls2, cached2) == (s_calls2, s_cached2) and calls2 >= calls
    assert _report_calls(rd) == (f"{calls2} + {cached2} cached" if cached2 else f"{calls2}")
    page = (rd / "report" / "index.html").read_text()
    outer_events = [
        e for line in (rd / "events.jsonl").read_text().splitlines()
        if (e := json.loads(line))["type"] == "outer_step"
    ]  # fmt: skip
    assert summary2["outer_steps"] == len({e["outer_step"] for e in outer_events})
    assert f"outer steps {summary2['outer_steps']}" in out2
    assert "progress" not in {
        json.loads(x)["type"] for x in (rd / "events.jsonl").read_text().splitlines()
    }
    assert "backend calls" in page
