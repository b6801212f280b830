"""The HTML report: built from a real (fake-LLM) run, from a hand-written run in progress, and
rendered in headless Chromium (images decoded, no console errors, a screenshot)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from evotrainer.errors import EvoTrainerError
from evotrainer.report.build import build_report
from evotrainer.report.data import load_run
from evotrainer.report.html import word_diff

SECTIONS = [
    "s_val per outer step",
    "Fitness per generation",
    "Harness trajectory",
    "Population diversity",
    "Outer steps: harness variants",
    "Operator statistics",
    "Budget",
    "Best policy: lineage and text",
    "Best policy on validation meetings",
    "Score against calls",
    "Lineage of the whole population",
    "Per-meeting difference: returned policy vs best seed",
]
REPO = Path(__file__).resolve().parents[1]


# -- a hand-written run directory ---------------------------------------------------------------

SEED = {
    "id": "pseed00001",
    "name": "A",
    "components": {"system": "You are a professional secretary. Write minutes."},
    "lineage": {"parents": [], "operator": "seed", "generation": 0, "note": ""},
}
CHILD = {
    "id": "pchild0001",
    "name": "",
    "components": {"system": "You are a rigorous secretary. Write concise minutes <b>now</b>."},
    "lineage": {"parents": ["pseed00001"], "operator": "synonym", "generation": 2, "note": ""},
}


def _harness(hid: str, d: float, w: dict) -> dict:
    return {
        "id": hid,
        "difficulty": d,
        "weights": w,
        "task_mix": None,
        "operator": "base",
        "parent": None,
        "note": "",
    }


def write_fixture_run(path: Path, finished: bool = True) -> Path:
    path.mkdir(parents=True)
    (path / "config.yaml").write_text("seed: 1\ninner:\n  generations: 4\n")
    w0 = {"completeness": 0.5, "format": 0.2, "action_count": 0.3}
    w1 = {"completeness": 0.6, "format": 0.2, "action_count": 0.2}
    h0, h1 = _harness("h0", 0.3, w0), _harness("h1", 0.4, w1)
    budget = {
        "llm_calls": 40,
        "prompt_tokens": 9000,
        "completion_tokens": 3000,
        "backend_calls": 30,
        "cache_hits": 10,
        "llm_seconds": 12.5,
    }
    ops = {
        "synonym": {"tried": 5, "produced": 4, "rejected": 1, "improved": 2},
        "crossover": {"tried": 3, "produced": 3, "rejected": 0, "improved": 0},
    }
    events = [
        {"type": "run_started", "t": 1.0, "model": {"backend": "Fake", "model": "fake:x"}},
        {
            "type": "validation_set",
            "t": 1.0,
            "source": "synthetic (held out)",
            "n": 3,
            "message": "no validation data set: falling back to synthetic",
        },
        {
            "type": "warning",
            "t": 1.0,
            "message": "no validation data set: falling back to synthetic",
        },
    ]

    def gen(g: int, h: dict, best: float) -> dict:
        return {
            "type": "generation",
            "t": 2.0 + g,
            "generation": g,
            "best_fitness": best,
            "mean_fitness": best - 0.1,
            "diversity": 0.5 - 0.05 * g,
            "harness": h,
            "operator_stats": ops,
            "budget": budget,
            "elapsed_s": 3.0 + g,
            "total_generations": 4,
        }

    events += [
        gen(0, h0, 0.4),
        {
            "type": "validation",
            "t": 3,
            "policy_id": "pseed00001",
            "s_val": 0.30,
            "generation": 0,
            "outer_step": 0,
        },
        gen(1, h0, 0.5),
        gen(2, h0, 0.6),
        {
            "type": "validation",
            "t": 5,
            "policy_id": "pchild0001",
            "s_val": 0.25,
            "generation": 2,
            "outer_step": 1,
        },
        {
            "type": "rollback",
            "t": 5,
            "to_policy": "pseed00001",
            "to_harness": h0,
            "s_val": 0.30,
            "from_s_val": 0.25,
            "outer_step": 1,
        },
        {
            "type": "validation",
            "t": 5,
            "policy_id": "pchild0001",
            "s_val": 0.33,
            "generation": 2,
            "outer_step": 1,
        },
        {
            "type": "validation",
            "t": 5,
            "policy_id": "pchild0002",
            "s_val": 0.41,
            "generation": 2,
            "outer_step": 1,
        },
        {
            "type": "outer_step",
            "t": 6,
            "outer_step": 1,
            "generation": 3,
            "variants": [h0, h1],
            "s_vals": [0.33, 0.41],
            "chosen": h1,
            "changed": True,
            "reason": "variant 1 (gaussian) had the best s_val 0.4100",
            "rollback": True,
        },
        gen(3, h1, 0.62),
    ]
    if finished:
        events += [
            gen(4, h1, 0.7),
            {
                "type": "validation",
                "t": 9,
                "policy_id": "pchild0001",
                "s_val": 0.45,
                "generation": 4,
                "outer_step": 1,
            },
            {"type": "run_finished", "t": 10, "summary": {}},
        ]
    lines = [json.dumps(e) for e in events]
    (path / "events.jsonl").write_text("\n".join(lines) + '\n{"type": "generation", "gen')  # torn
    if finished:
        (path / "best").mkdir()
        policy = {
            **CHILD,
            "text": CHILD["components"]["system"],
            "s_val": 0.45,
            "train_fitness": 0.7,
            "ancestors": [CHILD, SEED],
        }
        (path / "best" / "policy.json").write_text(json.dumps(policy))
        rows = [
            {
                "instance_id": "m1",
                "output": "# Minutes <script>x</script>",
                "rougeL": 0.4,
                "action_item_f1": 0.5,
                "rewards": {"completeness": 1.0, "format": 1.0},
                "reference": {"summary": ["Budget agreed."], "action_items": ["Ann: send"]},
            },
            {"instance_id": "m2", "output": "# Minutes", "rougeL": 0.2, "rewards": {}},
        ]
        (path / "best" / "validation.json").write_text(json.dumps(rows))
        summary = {
            "stopped": "completed",
            "initial_s_val": 0.30,
            "final_s_val": 0.45,
            "model": "fake:x",
            "validation": {"source": "synthetic (held out)", "n": 3, "synthetic": True},
            "llm_calls": 50,
            "prompt_tokens": 10000,
            "completion_tokens": 4000,
            "runtime": {"backend_calls": 35, "cache_hits": 15, "llm_seconds": 14.0},
            "wall_s": 20.5,
        }
        (path / "summary.json").write_text(json.dumps(summary))
        archive = [
            {"policy": SEED, "harness": h0, "s_val": 0.30, "generation": 0, "outer_step": 0},
            {"policy": CHILD, "harness": h1, "s_val": 0.45, "generation": 4, "outer_step": 1},
        ]
        (path / "archive.json").write_text(json.dumps(archive))
    return path


def _check_page(index: Path, expect_images: int) -> str:
    page = index.read_text(encoding="utf-8")
    for s in SECTIONS:
        assert s in page, s
    imgs = re.findall(r'<img[^>]+src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(imgs) >= expect_images
    assert not re.search(r'(src|href)="(https?:)?//', page), "external resource in the report"
    assert "<script" not in page.lower().replace("&lt;script", "")
    return page


def test_fixture_run_finished(tmp_path):
    run = write_fixture_run(tmp_path / "run")
    index = build_report(run)
    assert index == run / "report" / "index.html"
    page = _check_page(index, 5)
    assert "Synthetic validation fallback" in page
    assert "finished" in page and "0.450" in page and "0.300" in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page  # model output is escaped
    assert "reference not stored" in page  # m2 has no reference; m1 has one
    assert "Ann: send" in page
    assert "rollback" in page and "<ins>" in page and "<del>" in page
    assert sorted(p.name for p in (run / "report").glob("*.png")) == [
        "calls.png",
        "diversity.png",
        "fitness.png",
        "harness.png",
        "lineage.png",
        "operators.png",
        "s_val.png",
    ]
    # no per-meeting rows in this summary: the section says when they come
    assert "Per-meeting scores are written when the run finishes" in page


def test_fixture_run_in_progress_and_torn_line(tmp_path):
    run = write_fixture_run(tmp_path / "run", finished=False)
    data = load_run(run)
    assert data.status == "in progress" and data.summary is None and data.policy is None
    assert [e["generation"] for e in data.generations()] == [0, 1, 2, 3]
    main, trials = data.s_val_track()
    assert [(p.generation, p.kind) for p in main] == [(0, "initial"), (2, "outer")]
    assert [(p.generation, p.s_val) for p in trials] == [(3, 0.33), (3, 0.41)]
    assert data.budget()["llm_calls"] == 40
    page = _check_page(build_report(run), 5)
    assert "in progress" in page and "No best policy yet" in page


def test_not_a_run_dir(tmp_path):
    with pytest.raises(EvoTrainerError, match="not a run directory"):
        build_report(tmp_path)
    with pytest.raises(EvoTrainerError, match="does not exist"):
        build_report(tmp_path / "nope")


def test_word_diff_escapes_and_marks():
    out = word_diff("a <b> c", "a <b> d e")
    assert out.startswith("a &lt;b&gt; ")
    assert "<del>c</del>" in out and "<ins>d e</ins>" in out


# -- a real run with the fake LLM ---------------------------------------------------------------


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> Path:
    from evotrainer.coevolution import CoEvolution
    from evotrainer.config import config_from_dict
    from tests.fake_meetings import RecordingMeetingTask, family_llm

    tmp = tmp_path_factory.mktemp("report")
    cfg = config_from_dict(
        {
            "seed": 1,
            "cache": {"path": str(tmp / "c.sqlite")},
            "report": False,
            "inner": {"population": 4, "elites": 2, "tasks_per_generation": 3, "generations": 6},
            "outer": {"every": 2, "variants": 2},
            "harness": {"real_data": None},
            "validation": {"data": None, "synthetic_size": 3},
        }
    )
    task = RecordingMeetingTask()
    CoEvolution(cfg, task=task, llm=family_llm(task)).run(tmp / "run")
    build_report(tmp / "run")
    return tmp / "run"


def test_real_run_report(real_run, tmp_path):
    page = _check_page(real_run / "report" / "index.html", 5)
    assert "finished" in page and "Synthetic validation fallback" in page
    data = load_run(real_run)
    assert data.policy and data.policy["ancestors"] and data.validation_rows
    main, trials = data.s_val_track()
    assert main and trials and len(data.outer_steps()) == 2
    # truncated mid-run: no summary, no best/, a torn last event line
    cut = tmp_path / "cut"
    shutil.copytree(real_run, cut)
    (cut / "summary.json").unlink()
    shutil.rmtree(cut / "best")
    shutil.rmtree(cut / "report")
    lines = (cut / "events.jsonl").read_text().splitlines()
    (cut / "events.jsonl").write_text("\n".join(lines[: len(lines) // 2]) + "\n" + lines[-1][:20])
    page = _check_page(build_report(cut), 3)
    assert "in progress" in page
    assert "best validated so far" in page  # best policy taken from the newest checkpoint


# -- headless Chromium --------------------------------------------------------------------------

PROBE = """<script>
(function () {
  var errs = [];
  window.addEventListener("error", function (e) {
    errs.push("error: " + (e.message || (e.target && e.target.tagName) || "?"));
  }, true);
  document.addEventListener("securitypolicyviolation", function (e) {
    errs.push("csp: " + e.blockedURI);
  });
  var ce = console.error;
  console.error = function () { errs.push("console: " + [].join.call(arguments, " ")); };
  window.addEventListener("load", function () {
    var imgs = document.images, broken = 0;
    for (var i = 0; i < imgs.length; i++) {
      if (!imgs[i].complete || imgs[i].naturalWidth === 0) broken++;
    }
    var d = document.createElement("div");
    d.id = "probe-result";
    d.setAttribute("data-images", String(imgs.length));
    d.setAttribute("data-broken", String(broken));
    d.setAttribute("data-errors", errs.join(" | "));
    document.body.appendChild(d);
  });
})();
</script>"""


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _chromium_args(binary: str, profile: Path) -> list[str]:
    return [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        "--hide-scrollbars",
    ]


def test_report_renders_in_chromium(real_run, tmp_path):
    binary = _chromium()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run should install it)")
        pytest.skip("chromium not installed: apt-get install chromium (CI installs it)")
    index = real_run / "report" / "index.html"
    page = index.read_text(encoding="utf-8")
    # the probe script is injected into a copy; the report itself forbids scripts by its CSP
    csp = "script-src 'none'"
    assert csp in page
    probe = tmp_path / "probe.html"
    probe.write_text(
        page.replace(csp, "script-src 'unsafe-inline'", 1).replace("<head>", "<head>" + PROBE, 1)
    )
    dom = subprocess.run(
        [
            *_chromium_args(binary, tmp_path / "p1"),
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    m = re.search(r'<div id="probe-result"[^>]*>', dom.stdout)
    assert m, f"page did not finish loading (rc {dom.returncode}):\n{dom.stderr[-3000:]}"
    attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', m.group(0)))
    assert int(attrs["images"]) >= 5
    assert attrs["broken"] == "0", attrs
    assert attrs["errors"] == "", attrs["errors"]
    console = [ln for ln in dom.stderr.splitlines() if "CONSOLE" in ln]
    assert not console, console
    # a screenshot of the real report (not the probe copy) for people to look at
    artifacts = REPO / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    shot = artifacts / "report.png"
    shot.unlink(missing_ok=True)
    res = subprocess.run(
        [
            *_chromium_args(binary, tmp_path / "p2"),
            "--window-size=1280,4000",
            f"--screenshot={shot}",
            index.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert shot.is_file() and shot.stat().st_size > 10_000, res.stderr[-3000:]
    console = [ln for ln in res.stderr.splitlines() if "CONSOLE" in ln]
    assert not console, console
