"""Human review: the ratings file (replays, concurrency, crashes), the Bradley-Terry fits, the
review page's refusals of bad submissions, binding and tokens, and a run whose harness choice
changes because of a scripted reviewer's ratings. Fakes only; the browser test is
test_review_browser.py."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from html import unescape
from pathlib import Path

import numpy as np
import pytest

from evotrainer.review.bradley_terry import policy_scores
from evotrainer.review.human_model import fit_human_model
from evotrainer.review.server import access_token_for, is_loopback
from evotrainer.run.ratings import Rating, RatingStore, ReplayedRating
from tests.fake_meetings import RecordingMeetingTask
from tests.fake_review import DECISIONS, PLAIN, SUMMARY, reviewer_prefers, styled_llm
from tests.fake_runs import Killed, kill_at, small_config

flask = pytest.importorskip("flask")

REPO = Path(__file__).resolve().parents[1]


def _rating(i: int, left="pa", right="pb", outcome="left", meeting="m1") -> Rating:
    return Rating(meeting, left, right, outcome, nonce=f"n{i}", issued_at=time.time())


# -- the ratings file --------------------------------------------------------------------------


def test_store_is_wal_and_refuses_a_replayed_nonce(tmp_path):
    store = RatingStore(tmp_path)
    assert store.all() == [] and not store.exists()
    first = store.add(_rating(1))
    with pytest.raises(ReplayedRating):
        store.add(_rating(1, outcome="right"))
    assert [r.id for r in store.all()] == [first] and store.all()[0].outcome == "left"
    import sqlite3

    mode = sqlite3.connect(store.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    with pytest.raises(ValueError):
        store.add(_rating(2, outcome="both"))


def test_concurrent_reviewers_lose_nothing(tmp_path):
    store = RatingStore(tmp_path)
    errors: list[BaseException] = []

    def reviewer(k: int) -> None:
        try:
            for i in range(25):
                store.add(_rating(k * 1000 + i, outcome=random.choice(["left", "right", "tie"])))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reviewer, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and store.count() == 200
    assert len({r.nonce for r in store.all()}) == 200


CRASHER = """
import os, signal, sys, time
from pathlib import Path
from evotrainer.run.ratings import Rating, RatingStore
store = RatingStore(Path(sys.argv[1]))
rid = store.add(Rating("m1", "pa", "pb", "left", "a comment", nonce="crash", issued_at=time.time()))
print(rid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_rating_survives_a_kill_right_after_it_was_stored(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL and proc.stdout.strip() == "1"
    (r,) = RatingStore(tmp_path).all()
    assert r.comment == "a comment" and r.winner == "pa"


def test_a_corrupt_ratings_file_is_a_clear_error(tmp_path):
    (tmp_path / "ratings.sqlite").write_bytes(b"not a database" * 100)
    with pytest.raises(Exception, match="not a readable ratings file"):
        RatingStore(tmp_path).all()


# -- fits ----------------------------------------------------------------------------------------


def test_bradley_terry_recovers_the_order_with_shrinking_uncertainty():
    rng = np.random.default_rng(0)
    strength = {"pa": 1.0, "pb": 0.0, "pc": -1.0}

    def draw(n):
        out = []
        for i in range(n):
            a, b = rng.choice(list(strength), 2, replace=False)
            p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
            out.append(_rating(i, a, b, "left" if rng.random() < p else "right"))
        return out

    few, many = policy_scores(draw(30)), policy_scores(draw(600))
    assert [s.policy_id for s in many] == ["pa", "pb", "pc"]
    assert many[0].score - many[2].score == pytest.approx(2.0, abs=0.4)
    assert max(s.se for s in many) < min(s.se for s in few)
    lo, hi = many[0].ci95
    assert lo < many[0].score < hi and many[0].wins + many[0].losses == many[0].n
    tie = policy_scores([_rating(1, outcome="tie")])
    assert tie[0].score == pytest.approx(0.0) and tie[0].ties == 1


def test_the_human_model_learns_what_people_reward_and_predicts_unrated_policies():
    # people prefer minutes with higher decision recall; ROUGE says the opposite
    rows = {
        "pa": {"m1": {"instance_id": "m1", "rougeL": 0.9, "decision_recall": 0.0, "output": "x"}},
        "pb": {"m1": {"instance_id": "m1", "rougeL": 0.3, "decision_recall": 1.0, "output": "y"}},
        "pc": {"m1": {"instance_id": "m1", "rougeL": 0.5, "decision_recall": 0.2, "output": "z"}},
    }
    ratings = [_rating(i, "pa", "pb", "right") for i in range(6)]
    ratings += [_rating(10 + i, "pc", "pa", "left") for i in range(3)]
    model = fit_human_model(ratings, rows.get, prior=1.0)
    assert model is not None and model.ratings_used == 9
    w = model.feature_weights()
    assert w["decision_recall"] > 0 > w["rougeL"]
    new = {"m1": {"instance_id": "m1", "rougeL": 0.2, "decision_recall": 0.9, "output": "n"}}
    assert model.preference("pnew", new, "pa", rows["pa"]) > 0.7  # nobody rated "pnew"
    assert model.preference("pa", rows["pa"], "pa", rows["pa"]) == 0.5
    assert fit_human_model([_rating(1, "px", "py")], rows.get) is None  # no minutes: unusable


# -- the review page -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def styled_run(tmp_path_factory) -> Path:
    """A finished fake run whose policies write different minutes."""
    from evotrainer.coevolution import CoEvolution

    base = tmp_path_factory.mktemp("styled")
    cfg = _styled_config(base / "cache.sqlite", seed=2)
    task = RecordingMeetingTask()
    CoEvolution(cfg, task=task, llm=styled_llm(task)).run(base / "run")
    return base / "run"


def _styled_config(cache: Path, seed: int, **sections):
    defaults = {
        "validation": {"data": None, "synthetic_size": 6, "confirm": 2},
        "inner": {
            "population": 5,
            "elites": 2,
            "tasks_per_generation": 3,
            "generations": 6,
            "seed_prompts": [SUMMARY, DECISIONS, PLAIN],
        },
        "outer": {"every": 2, "variants": 3},
    }
    return small_config(cache, seed=seed, **{**defaults, **sections})


def _page(client, path="/"):
    resp = client.get(path)
    return resp, resp.data.decode()


def _token(html: str) -> str:
    m = re.search(r'name="pair" value="([^"]+)"', html)
    assert m, html[:2000]
    return m.group(1)


def _app(run_dir, **kw):
    from evotrainer.review.app import create_app

    return create_app(run_dir, rng=random.Random(0), **kw)


def test_the_page_shows_a_blind_pair_with_transcript_and_reference(styled_run):
    resp, html = _page(_app(styled_run).test_client())
    assert resp.status_code == 200
    csp = resp.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert 'href="/static/review.css"' in html
    meeting = re.search(r'<code id="meeting">([^<]+)', html).group(1)
    assert meeting.startswith("syn-")
    assert "Meeting transcript" in html or "transcript" in html.lower()
    a = unescape(re.search(r'<pre id="minutes-a">(.*?)</pre>', html, re.S).group(1))
    b = unescape(re.search(r'<pre id="minutes-b">(.*?)</pre>', html, re.S).group(1))
    assert a and b and a != b
    assert not re.search(r"\bp[0-9a-f]{10}\b", html), "policy ids are never shown"


def test_a_rating_is_stored_and_the_next_pair_follows(styled_run, tmp_path):
    run = _copy_run(styled_run, tmp_path)
    client = _app(run).test_client()
    _, html = _page(client)
    resp = client.post("/rate", data={"pair": _token(html), "choice": "B", "comment": " ok "})
    assert resp.status_code == 303 and resp.headers["Location"].endswith("/?saved=1")
    (r,) = RatingStore(run).all()
    assert r.outcome == "right" and r.comment == "ok" and r.left != r.right
    _, html = _page(client, "/?saved=1")
    assert "Rating #1 saved" in html
    _, scores = _page(client, "/scores")
    assert r.right in scores and "Does the automatic metric agree" in scores


@pytest.mark.parametrize(
    ("form", "status", "says"),
    [
        ({}, 400, "no pair token"),
        ({"pair": "garbage", "choice": "A"}, 400, "altered or was not issued"),
        ({"pair": "{token}x", "choice": "A"}, 400, "altered or was not issued"),
        ({"pair": "{token}", "choice": "C"}, 400, "must be A, B or tie"),
        ({"pair": "{token}"}, 400, "must be A, B or tie"),
        ({"pair": "{token}", "choice": "A", "comment": "x" * 2001}, 400, "at most 2000"),
        ({"pair": "{token}", "choice": "A", "reviewer": "x" * 81}, 400, "at most 2000"),
        ({"pair": "{token}", "choice": "A", "comment": "x" * 70_000}, 413, "larger than 64 KB"),
    ],
)
def test_malformed_submissions_are_refused_with_a_clear_message(
    styled_run, tmp_path, form, status, says
):
    run = _copy_run(styled_run, tmp_path)
    client = _app(run).test_client()
    token = _token(_page(client)[1])
    data = {k: v.replace("{token}", token) for k, v in form.items()}
    resp = client.post("/rate", data=data)
    assert resp.status_code == status
    assert says in unescape(resp.data.decode())
    assert RatingStore(run).count() == 0


def test_a_replayed_submission_is_refused_and_stored_once(styled_run, tmp_path):
    run = _copy_run(styled_run, tmp_path)
    client = _app(run).test_client()
    token = _token(_page(client)[1])
    assert client.post("/rate", data={"pair": token, "choice": "A"}).status_code == 303
    again = client.post("/rate", data={"pair": token, "choice": "B"})
    assert again.status_code == 409 and "rated before" in unescape(again.data.decode())
    # a token from another server (another secret) is foreign, not a replay
    other = _app(run).test_client()
    foreign = other.post("/rate", data={"pair": token, "choice": "A"})
    assert foreign.status_code == 400
    (r,) = RatingStore(run).all()
    assert r.outcome == "left"


def test_an_expired_pair_is_refused(styled_run, tmp_path):
    run = _copy_run(styled_run, tmp_path)
    client = _app(run, max_age_s=1).test_client()
    token = _token(_page(client)[1])
    time.sleep(2.1)
    resp = client.post("/rate", data={"pair": token, "choice": "A"})
    assert resp.status_code == 400 and "expired" in resp.data.decode().lower()
    assert client.get("/rate").status_code == 405


def test_an_access_token_is_required_when_one_is_set(styled_run):
    client = _app(styled_run, access_token="s3cret").test_client()
    assert client.get("/").status_code == 403
    assert client.get("/?token=wrong").status_code == 403
    assert client.get("/?token=s3cret").status_code == 200
    assert client.get("/").status_code == 200, "the cookie set by the first visit is enough"
    assert client.get("/static/review.css").status_code == 200
    stranger = _app(styled_run, access_token="s3cret").test_client()
    assert stranger.post("/rate", data={"choice": "A"}).status_code == 403


def test_review_of_a_directory_that_holds_no_run_is_a_clear_error(tmp_path):
    from typer.testing import CliRunner

    from evotrainer.cli.app import app

    res = CliRunner().invoke(app, ["review", str(tmp_path), "--port", "0"])
    assert res.exit_code == 2 and "not a run directory" in res.output


def test_binding_elsewhere_than_loopback_needs_a_token():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert access_token_for("127.0.0.1", None) is None
    assert access_token_for("127.0.0.1", "t") == "t"
    generated = access_token_for("0.0.0.0", None)
    assert generated and len(generated) >= 20
    assert access_token_for("0.0.0.0", "mine") == "mine"
    with pytest.raises(Exception, match="non-empty"):
        access_token_for("0.0.0.0", " ")


def test_run_force_never_deletes_ratings(styled_run, tmp_path):
    from evotrainer.errors import RunDirectoryError
    from evotrainer.run.rundir import remove_run

    run = _copy_run(styled_run, tmp_path)
    RatingStore(run).add(_rating(1))
    with pytest.raises(RunDirectoryError, match="ratings.sqlite"):
        remove_run(run)
    assert RatingStore(run).count() == 1


def _copy_run(run: Path, tmp_path: Path) -> Path:
    import shutil

    dest = tmp_path / "run"
    shutil.copytree(run, dest)
    return dest


# -- ratings change the harness choice --------------------------------------------------------


def scripted_review(run_dir: Path, meetings: dict, n: int, seed: int = 0) -> list[str]:
    """A scripted reviewer rates ``n`` pairs through the review page; its verdicts."""
    from evotrainer.review.app import create_app

    client = create_app(run_dir, rng=random.Random(seed)).test_client()
    verdicts = []
    for _ in range(n):
        _, html = _page(client)
        meeting = re.search(r'<code id="meeting">([^<]+)', html).group(1)
        a = unescape(re.search(r'<pre id="minutes-a">(.*?)</pre>', html, re.S).group(1))
        b = unescape(re.search(r'<pre id="minutes-b">(.*?)</pre>', html, re.S).group(1))
        verdict = reviewer_prefers(meetings[meeting], a, b)
        resp = client.post("/rate", data={"pair": _token(html), "choice": verdict})
        assert resp.status_code == 303
        verdicts.append(verdict)
    return verdicts


def _outer_steps(run_dir: Path) -> dict[int, dict]:
    events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]
    return {e["outer_step"]: e for e in events if e["type"] == "outer_step"}


def test_ratings_that_disagree_with_rouge_change_the_harness_choice(tmp_path):
    """Two copies of one run are stopped as outer step 1 is decided; in one, a scripted reviewer
    rates 12 pairs on the review page; both are resumed. The reviewer wants decisions listed as
    items (ROUGE-L + action-item F1 reward the reference-like summary prose instead): with its
    ratings the run keeps a harness whose best policy ROUGE ranks lower."""
    from evotrainer.coevolution import CoEvolution

    def style(co, pid):
        text = co.state.policies[pid].render().lower()
        return "decisions" if "decision" in text else "summary" if "summar" in text else "plain"

    # reinject_best off: the ratings then change nothing but the harness choice (with it on,
    # they also change which archived policy is put back into the population)
    cfg = _styled_config(
        tmp_path / "cache.sqlite",
        seed=4,
        meta={"objectives": {"quality": 1.0, "human": 1.0, "diversity": 0.0, "conciseness": 0.0}},
        # rerun: each variant's own trial reaches its own best policy, so the variants differ in
        # quality and the ratings can tip a choice (under rerank, in this small scenario, every
        # variant ranks the same policy first: nothing for the ratings to choose between)
        outer={"every": 2, "variants": 3, "reinject_best": False, "trials": "rerun"},
        inner={
            "population": 5,
            "elites": 2,
            "tasks_per_generation": 3,
            "generations": 8,
            "seed_prompts": [SUMMARY, DECISIONS, PLAIN],
        },
    )
    meetings = {}
    for name in ("without", "with"):
        task = RecordingMeetingTask()
        co = CoEvolution(cfg, task=task, llm=styled_llm(task))
        co.components.events.observers.append(
            kill_at("outer_step", 1)
        )  # stopped before its checkpoint
        with pytest.raises(Killed):
            co.run(tmp_path / name)
        meetings = {i.id: i.payload for i in co.components.validation_set.selection}
    verdicts = scripted_review(tmp_path / "with", meetings, n=12)
    resumed = {}
    for name in ("without", "with"):
        task = RecordingMeetingTask()
        co, path = CoEvolution.resume(tmp_path / name, task=task, llm=styled_llm(task))
        co.run(path)
        resumed[name] = co
    steps_without, steps_with = _outer_steps(tmp_path / "without"), _outer_steps(tmp_path / "with")
    assert all("human" in v for e in steps_with.values() for v in e["objectives"])
    assert not any("human" in v for e in steps_without.values() for v in e["objectives"])
    differ = [
        k for k in steps_with if steps_with[k]["chosen"]["id"] != steps_without[k]["chosen"]["id"]
    ]
    assert differ, "the ratings changed a harness choice"
    k = differ[0]
    before, after = steps_without[k], steps_with[k]
    # the same variants, the same trial bests and s_vals: only the ratings differ
    assert [v["id"] for v in before["variants"]] == [v["id"] for v in after["variants"]]
    assert before["trial_best"] == after["trial_best"] and before["s_vals"] == after["s_vals"]
    ids = [v["id"] for v in after["variants"]]
    i_before, i_after = ids.index(before["chosen"]["id"]), ids.index(after["chosen"]["id"])
    s_vals, humans = after["s_vals"], [v["human"] for v in after["objectives"]]
    assert s_vals[i_after] < s_vals[i_before], "people chose against ROUGE"
    assert humans[i_after] > humans[i_before]
    co_with = resumed["with"]
    assert style(co_with, after["trial_best"][i_before]) == "summary"
    assert style(co_with, after["trial_best"][i_after]) != "summary"
    events = (tmp_path / "with" / "events.jsonl").read_text().splitlines()
    feedback = [json.loads(x) for x in events if '"human_feedback"' in x]
    assert feedback and feedback[0]["ratings"] == 12 and feedback[0]["used"]
    agree = feedback[0]["agreement"]
    assert agree["s_val"]["agreement"] <= 0.5, "s_val is no better than a coin at this"
    assert agree["decision_recall"]["agreement"] > 0.75
    weights = feedback[0]["feature_weights"]
    assert weights["decision_recall"] > 0 > weights["rougeL"], "what people reward is learned"
    summary = json.loads((tmp_path / "with" / "summary.json").read_text())
    assert summary["meta"]["human"]["ratings"] == 12 and summary["meta"]["human"]["used"]
    # what docs/meta-objective.md quotes
    artifacts = REPO / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    doc = {
        "outer_step": k,
        "verdicts": verdicts,
        "feedback": {x: feedback[0][x] for x in ("ratings", "agreement", "feature_weights")},
        "styles": [style(co_with, p) for p in after["trial_best"]],
        "variants": [v["operator"] for v in after["variants"]],
        "without": {x: before[x] for x in ("s_vals", "objectives", "meta_scores", "reason")},
        "with": {x: after[x] for x in ("s_vals", "objectives", "meta_scores", "reason")},
        "chosen": {"without": i_before, "with": i_after},
        "returned": {
            name: {
                "style": style(resumed[name], summ["best_policy"]),
                "final_s_val": summ["final_s_val"],
                "objectives": summ["meta"]["objectives"],
                "confirmation": {
                    x: summ["confirmation"][x] for x in ("measure", "difference", "reason")
                },
            }
            for name in ("without", "with")
            if (summ := json.loads((tmp_path / name / "summary.json").read_text()))
        },
    }
    (artifacts / "human_example.json").write_text(json.dumps(doc, indent=2))


# -- hostile requests and damaged files (issue 33) ---------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["attacker.example.com", "attacker.example.com:8765", "127.0.0.1.nip.io", "localhost.evil"],
)
def test_without_a_token_a_foreign_host_header_is_refused(styled_run, host):
    """DNS rebinding: a page on another site whose name now resolves to 127.0.0.1 reaches the
    server with its own name in the Host header; it gets no transcript and cannot rate."""
    client = _app(styled_run).test_client()
    for resp in (
        client.get("/", headers={"Host": host}),
        client.get("/scores", headers={"Host": host}),
        client.post("/rate", data={"choice": "A"}, headers={"Host": host}),
    ):
        page = unescape(resp.data.decode())
        assert resp.status_code == 403 and "not addressed to this review server" in page
        assert "minutes-a" not in page and "syn-" not in page


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8765", "127.0.0.1:8765", "[::1]:8765", "LOCALHOST.:1"]
)
def test_loopback_host_headers_are_served(styled_run, host):
    resp = _app(styled_run).test_client().get("/", headers={"Host": host})
    assert resp.status_code == 200


def test_the_host_it_is_bound_to_is_served_and_a_token_guards_the_rest(styled_run):
    bound = _app(styled_run, host="10.1.2.3").test_client()
    assert bound.get("/", headers={"Host": "10.1.2.3:8765"}).status_code == 200
    assert bound.get("/", headers={"Host": "evil.example"}).status_code == 403
    # with an access token the token is what guards the page (a rebound name has no token)
    guarded = _app(styled_run, host="0.0.0.0", access_token="s3cret").test_client()
    assert guarded.get("/", headers={"Host": "review.lan"}).status_code == 403
    assert guarded.get("/?token=s3cret", headers={"Host": "review.lan"}).status_code == 200


def test_the_served_page_checks_the_host_header(styled_run):
    """The same through waitress on a real socket, as a browser would send it."""
    import http.client

    from evotrainer.review.server import make_server

    server, url, access = make_server(styled_run, "127.0.0.1", 0, None)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        statuses = {}
        for host in ("attacker.example.com", f"127.0.0.1:{port}"):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/", headers={"Host": host})
            statuses[host] = conn.getresponse().status
            conn.close()
    finally:
        server.close()
    assert access is None
    assert statuses == {"attacker.example.com": 403, f"127.0.0.1:{port}": 200}


@pytest.mark.parametrize(
    "content",
    [
        "[1, 2, 3]",
        '{"instance_id": "x"}',
        '[{"output": "no id"}, "text", null, [1]]',
        '[{"instance_id": ["a"], "output": 5}]',
        "not json",
    ],
)
def test_a_malformed_best_validation_file_never_breaks_the_page(styled_run, tmp_path, content):
    run = _copy_run(styled_run, tmp_path)
    (run / "best" / "validation.json").write_text(content)
    client = _app(run).test_client()
    for path in ("/", "/scores"):
        resp = client.get(path)
        assert resp.status_code == 200, resp.data.decode()[:2000]


def test_a_corrupt_ratings_file_is_a_clear_page_not_a_server_error(styled_run, tmp_path):
    run = _copy_run(styled_run, tmp_path)
    client = _app(run).test_client()
    token = _token(_page(client)[1])
    (run / "ratings.sqlite").write_bytes(b"not a database" * 100)
    for resp in (
        client.get("/"),
        client.get("/scores"),
        client.get("/health"),
        client.post("/rate", data={"pair": token, "choice": "A"}),
    ):
        page = unescape(resp.data.decode())
        assert resp.status_code == 503, page[:2000]
        assert "not a readable ratings file" in page and "move it aside" in page


def test_a_busy_port_is_named_as_such(styled_run):
    import socket

    from typer.testing import CliRunner

    from evotrainer.cli.app import app

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = CliRunner().invoke(app, ["review", str(styled_run), "--port", str(port)])
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)
    assert f"127.0.0.1:{port}" in res.output and "in use" in res.output
    assert "read or write a file" not in res.output
