"""In the browser: a reload shows each finished turn's steps and the timeline's figures as they were (issue 27:
the turns came back without their steps, and the timeline's time read 0.0 s). ``python app.py`` on the demo
``fake`` backend (the embedded record, SQLite conversations), two turns, a reload, the same steps and timeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port
from tests.e2e.test_browser import ARTIFACTS, TIMEOUT_MS, ask, page  # noqa: F401  (fixture)
from tests.e2e.test_restart_browser import AppProcess, chat_text

pytestmark = pytest.mark.slow
# A step's header as the chat shows it (a top-level step: a tool call is nested, collapsed, under its choice).
TURNS = [("Find patient Amina Okafor and check her chart", "Choosing a resource — Patient Record"),
         ("What were her last kidney function results?", "Choosing a resource — Patient Data Query")]
CHAT_JS = "() => document.querySelector('#chat').textContent"


def test_a_reload_shows_each_turns_steps_and_the_timelines_figures(page: Any, tmp_path: Path) -> None:  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    app = AppProcess(tmp_path, free_port(), "fake")
    try:
        app.start()
        page.goto(app.url + "/", wait_until="domcontentloaded")
        page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
        # The page is ready once its status line is filled in (an earlier question could be lost: flaky in CI).
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        for question, step in TURNS:
            ask(page, question)
            page.wait_for_function(f"() => document.querySelector('#chat').textContent.includes({step!r})",
                                   timeout=TIMEOUT_MS)
            page.locator("#timeline").get_by_text("Sources:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        page.locator("#chat").get_by_text("Creatinine", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        page.wait_for_function("document.querySelector('#timeline').innerText.includes('Patient Data Query')",
                               timeout=TIMEOUT_MS)
        timeline = page.locator("#timeline").inner_text()
        before = [step for _, step in TURNS if step in page.evaluate(CHAT_JS)]

        page.reload(wait_until="domcontentloaded")
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        page.locator("#chat").get_by_text("Conversation reopened", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        page.screenshot(path=str(ARTIFACTS / "reload_steps.png"), full_page=True)
        assert before == [step for _, step in TURNS]
        assert [step for _, step in TURNS if step in page.evaluate(CHAT_JS)] == before  # each turn's steps
        assert "Conversation reopened" in chat_text(page)
        assert page.locator("#timeline").inner_text() == timeline  # the same figures, the time included
        assert "time: 0.0 s" not in timeline or "time so far" in timeline
    finally:
        app.stop()
