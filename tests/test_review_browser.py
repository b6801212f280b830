"""The review page end to end in headless Chromium, with JavaScript switched off: open the page
served by waitress, rate three pairs with a comment, see the ratings stored, and see the
resumed run use them at its next outer step. Needs chromium, chromedriver and selenium (CI
installs them; elsewhere the test is skipped)."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from tests.fake_meetings import RecordingMeetingTask
from tests.fake_review import DECISIONS, PLAIN, SUMMARY, styled_llm
from tests.fake_runs import Killed, kill_at, small_config

REPO = Path(__file__).resolve().parents[1]


def _browser():
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        driver = None
    if not binary or not driver:
        if os.environ.get("CI"):
            pytest.fail("chromium, chromedriver and selenium are needed (.ci/run installs them)")
        pytest.skip(
            "needs chromium, chromedriver (apt-get install chromium chromium-driver), selenium"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,1400",
    ):
        opts.add_argument(arg)
    opts.add_experimental_option(
        "prefs", {"profile.managed_default_content_settings.javascript": 2}
    )
    return webdriver.Chrome(service=Service(driver), options=opts)


def test_rate_in_chromium_then_the_resumed_run_uses_the_ratings(tmp_path):
    from evotrainer.coevolution import CoEvolution
    from evotrainer.review.server import make_server

    cfg = small_config(
        tmp_path / "cache.sqlite",
        seed=4,
        validation={"data": None, "synthetic_size": 6, "confirm": 2},
        inner={
            "population": 5,
            "elites": 2,
            "tasks_per_generation": 3,
            "generations": 6,
            "seed_prompts": [SUMMARY, DECISIONS, PLAIN],
        },
        outer={"every": 2, "variants": 2},
    )
    run = tmp_path / "run"
    task = RecordingMeetingTask()
    co = CoEvolution(cfg, task=task, llm=styled_llm(task), observers=[kill_at("outer_step", 1)])
    with pytest.raises(Killed):  # a run in progress, stopped in its first outer step
        co.run(run)

    browser = _browser()
    # seeded pair draws: the same three pairs on every run of this test
    server, url, token = make_server(run, "127.0.0.1", 0, rng=random.Random(7))
    assert token is None, "no token on the loopback"
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        from selenium.common.exceptions import NoSuchElementException
        from selenium.common.exceptions import StaleElementReferenceException as Stale
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        browser.get(url)
        assert "EvoTrainer review" in browser.title
        for i in range(3):
            meeting = browser.find_element(By.ID, "meeting").text
            a = browser.find_element(By.ID, "minutes-a").text
            b = browser.find_element(By.ID, "minutes-b").text
            assert meeting.startswith("syn-") and a and b and a != b
            assert browser.find_element(By.CSS_SELECTOR, "pre.reference").text
            if i == 0:
                artifacts = REPO / "test-artifacts"
                artifacts.mkdir(exist_ok=True)
                browser.save_screenshot(str(artifacts / "review.png"))
                css = browser.find_element(By.CSS_SELECTOR, "button#choose-a")
                assert css.value_of_css_property("font-weight") in ("600", "bold")  # served CSS
            browser.find_element(By.ID, "comment").send_keys(f"comment {i}: decisions first")
            browser.find_element(By.ID, "choose-a" if i != 1 else "choose-tie").click()
            WebDriverWait(browser, 60, ignored_exceptions=(NoSuchElementException, Stale)).until(
                lambda d, n=i + 1: (
                    f"Rating #{n} saved" in d.find_element(By.ID, "saved").text
                    and d.execute_script("return document.readyState") == "complete"
                )
            )
        browser.get(url + "scores")
        assert "What people said (3 ratings)" in browser.find_element(By.TAG_NAME, "h2").text
    finally:
        browser.quit()
        server.close()
        thread.join(timeout=10)

    con = sqlite3.connect(run / "ratings.sqlite")
    rows = con.execute("SELECT outcome, comment FROM ratings ORDER BY id").fetchall()
    assert rows == [
        ("left", "comment 0: decisions first"),
        ("tie", "comment 1: decisions first"),
        ("left", "comment 2: decisions first"),
    ]
    con.close()

    task = RecordingMeetingTask()
    co, path = CoEvolution.resume(run, task=task, llm=styled_llm(task))
    co.run(path)
    events = [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]
    fb = [e for e in events if e["type"] == "human_feedback"]
    assert fb and fb[0]["ratings"] == 3 and fb[0]["used"] and fb[0]["outer_step"] == 1
    steps = [e for e in events if e["type"] == "outer_step"]
    assert steps and all("human" in v for v in steps[-1]["objectives"]), (
        "used in the meta-objective"
    )
