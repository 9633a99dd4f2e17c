"""The demo in a real browser: ``python app.py`` on a free port, driven by headless Chromium.

Chromium is Debian's package (``make browser`` installs it; ``make test`` runs that first); Playwright
only drives it and never downloads a browser. Screenshots go to ``artifacts/demo/``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from env.eval.run import play
from env.listing import listing_entry
from env.models import DebugAction
from env.server.environment import DebugEnvironment
from env.server.in_process import InProcessDriver
from env.server.local import start_local_demo

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "artifacts" / "demo"
# As the machine's notes advise: no sandbox (root), no GPU, and none of Chromium's own network traffic.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
HYPOTHESIS = "The loop condition left < right skips the last candidate; it must be left <= right."
WAIT_MS = 60_000


def chromium_path() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail("the demo's browser test needs Debian's chromium: run `make browser` (make test does)")
    return found


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log_path = tmp_path_factory.mktemp("demo") / "app.log"
    try:
        proc, url = start_local_demo(str(log_path))
    except RuntimeError:
        pytest.fail("the demo did not start:\n" + log_path.read_text()[-3000:])
    try:
        yield url + "/"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture()
def page(browser: Browser, app_url: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    p = context.new_page()
    p.set_default_timeout(WAIT_MS)
    p.goto(app_url)
    p.wait_for_selector("#start")
    yield p
    context.close()


def text_of(page: Page, selector: str) -> str:
    """A component's text without Gradio's progress overlay (a Markdown's own text, if it is one)."""
    markdown = page.locator(f'{selector} [data-testid="markdown"]')
    return (markdown.first if markdown.count() else page.locator(selector)).inner_text().strip()


def wait_text(page: Page, selector: str, needle: str) -> None:
    """Wait until the component shows ``needle`` and every component has finished updating."""
    page.wait_for_function("([s, n]) => (document.querySelector(s)?.innerText || '').includes(n)", arg=[selector, needle], timeout=WAIT_MS)
    page.wait_for_function("() => document.querySelectorAll('.progress-text').length === 0", timeout=WAIT_MS)


def set_code(page: Page, selector: str, text: str) -> None:
    """Replace a code editor's content as a person would: select all, type."""
    page.locator(f"{selector} .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(text)


def choose(page: Page, selector: str, value: str) -> None:
    box = page.locator(f"{selector} input")
    box.click()
    box.fill(value)
    box.press("Enter")
    page.wait_for_function("([s, v]) => document.querySelector(s + ' input').value.startsWith(v)", arg=[selector, value], timeout=WAIT_MS)


def start(page: Page, task_id: str | None = None) -> None:
    if task_id:
        choose(page, "#task", task_id)
    page.click("#start")
    wait_text(page, "#status", "Step 0 /")


def test_play_easy_to_a_solve_and_replay_it(page: Page, runtime, catalog) -> None:
    fixed = catalog.get("easy").buggy_source.replace("while left < right", "while left <= right")
    direct = DebugEnvironment(runtime)
    direct.reset(task_id="easy", seed=1)
    expected = direct.step(DebugAction(action_type="submit_fix", fixed_code=fixed, hypothesis=HYPOTHESIS))

    start(page)
    assert "while left < right:" in text_of(page, "#code")
    assert text_of(page, "#status") == "Step 0 / 8 · tests 6 / 8 passed · 5 attempts left · step reward +0.000 · cumulative +0.000"
    set_code(page, "#fix-code", fixed)
    page.fill("#hypothesis textarea", HYPOTHESIS)
    page.click("#submit-fix")
    wait_text(page, "#status", "Step 1 / 8")
    assert text_of(page, "#score") == f"Score: {expected.grader_score:.3f} (solved)"
    assert text_of(page, "#status").startswith("Step 1 / 8 · tests 8 / 8 passed")
    assert text_of(page, "#error") == ""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "easy-solved.png"), full_page=True)

    page.click("#replay-mine")
    wait_text(page, "#replay-summary", "every replayed reward matches the recording")
    assert "+    while left <= right:" in text_of(page, "#replay-diff")
    assert "-    while left < right:" in text_of(page, "#replay-diff")
    assert f"Score: {expected.grader_score:.3f}" in text_of(page, "#replay-action")
    page.screenshot(path=str(SHOTS / "easy-replayed.png"), full_page=True)


def test_two_tabs_are_two_episodes(browser: Browser, page: Page, app_url: str) -> None:
    other = page.context.new_page()
    other.set_default_timeout(WAIT_MS)
    other.goto(app_url)
    other.wait_for_selector("#start")
    start(page)
    start(other, "medium")
    page.fill("#hypothesis textarea", "trying the buggy code unchanged")
    page.click("#submit-fix")
    wait_text(page, "#status", "Step 1 / 8")
    assert text_of(other, "#status").startswith("Step 0 / 15 · tests 6 / 10 passed")
    other.click("#query")
    wait_text(other, "#status", "Step 1 / 15")
    assert text_of(page, "#status").startswith("Step 1 / 8")
    assert "hash_password" in text_of(other, "#code") and "binary_search" in text_of(page, "#code")


def test_mistakes_are_shown_never_a_stack_trace(page: Page) -> None:
    start(page, "repo-slice-window")
    assert "Moving average" in text_of(page, "#issue") or text_of(page, "#issue")
    set_code(page, "#tool-args", "{not json")
    page.click("#run-tool")
    wait_text(page, "#error", "not valid JSON")
    assert text_of(page, "#error") == "⚠️ the arguments are not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    assert text_of(page, "#status").startswith("Step 0 / 30")  # not a step: nothing was sent

    choose(page, "#tool", "view_file")
    set_code(page, "#tool-args", '{"path": "../etc/passwd"}')
    page.click("#run-tool")
    wait_text(page, "#status", "Step 1 / 30")
    assert text_of(page, "#error") == "⚠️ '../etc/passwd' is outside the repository"

    set_code(page, "#tool-args", '{"path": "src/sensorkit/window.py"}')
    page.click("#run-tool")
    wait_text(page, "#status", "Step 2 / 30")
    assert text_of(page, "#error") == ""
    assert "def " in text_of(page, "#code")
    assert "Traceback" not in page.content()


def test_watch_the_oracle_play(page: Page, runtime, tmp_path) -> None:
    with InProcessDriver(runtime) as driver:
        expected = play(driver, "oracle", listing_entry(runtime.catalog.get("repo-slice-window").summary()), 0, tmp_path / "steps.jsonl")
    page.get_by_role("tab", name="Watch an agent").click()
    choose(page, "#watch-task", "repo-slice-window")
    page.fill("#watch-seed input", str(expected["seed"]))
    page.click("#watch-play")
    wait_text(page, "#watch-score", "Score: 0.")
    assert text_of(page, "#watch-score") == f"Score: {expected['score']:.3f} (solved)"
    page.screenshot(path=str(SHOTS / "watch-oracle.png"), full_page=True)

    # The evaluation harness's steps file of the same episode, loaded and stepped through.
    page.get_by_role("tab", name="Replay a trajectory").click()
    page.locator("#replay-file input[type=file]").set_input_files(str(tmp_path / "steps.jsonl"))
    wait_text(page, "#replay-summary", "every replayed reward matches the recording")
    assert f"agent oracle, {expected['steps']} steps" in text_of(page, "#replay-summary")
    assert "+++ b/src/sensorkit/window.py" in text_of(page, "#replay-diff")
    page.click("#replay-next")
    wait_text(page, "#replay-action", "Step 2")
    assert f"Score: {expected['score']:.3f}" in text_of(page, "#replay-action")
