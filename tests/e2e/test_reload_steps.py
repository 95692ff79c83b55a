"""In the browser: two registers (issue 46) and a reload that keeps them (issue 27). ``python app.py`` on the demo
``fake`` backend (the embedded record, SQLite conversations), two turns: the chat keeps the questions and answers
and no step heading; the clinician's timeline has none of the engineer's words, which the one "Technical details"
control (closed by default) still holds; a reload shows the same timeline, its time included; on a phone the
timeline is one tap from the answer. Screenshots of desktop and phone go to test-artifacts/ (looked at, and
committed under docs/screenshots/46_*)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port
from tests.e2e.test_browser import ARTIFACTS, TIMEOUT_MS, ask, page  # noqa: F401  (fixture)
from tests.e2e.test_restart_browser import AppProcess, chat_text
from tests.unit.test_page_text import CLINICIAN_VIEW, ENGINEERING

pytestmark = pytest.mark.slow
TURNS = [("Find patient Amina Okafor and check her chart", "Patient Record"),
         ("What were her last kidney function results?", "Patient Data Query")]
CHAT_JS = "() => document.querySelector('#chat').innerText"
#: What the browser shows of the timeline: innerText leaves out a closed <details>'s content.
TIMELINE_JS = "() => document.querySelector('#timeline').innerText"


def _internal(text: str) -> list[str]:
    return [m.group(0) for what, pattern in CLINICIAN_VIEW.items() if what != "code identifier"
            for m in re.finditer(pattern, text)]


def _reopen(page: Any) -> None:  # noqa: F811
    """Reload and wait for the reopened conversation and its timeline (by text: a message scrolled out of the
    chat's view is still there)."""
    page.reload(wait_until="domcontentloaded")
    page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function("() => document.querySelector('#chat').textContent.includes('Conversation reopened')"
                           " && document.querySelector('#timeline').textContent.includes('Sources:')",
                           timeout=TIMEOUT_MS)


def test_two_registers_survive_a_reload_and_a_phone_reaches_the_timeline(page: Any, tmp_path: Path) -> None:  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    app = AppProcess(tmp_path, free_port(), "fake")
    try:
        app.start()
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(app.url + "/", wait_until="domcontentloaded")
        page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        for question, tool in TURNS:
            ask(page, question)
            page.wait_for_function(f"() => document.querySelector('#timeline').innerText.includes({tool!r})"
                                   " && document.querySelector('#timeline').innerText.includes('Sources:')",
                                   timeout=TIMEOUT_MS)
        page.locator("#chat").get_by_text("Creatinine", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        chat, timeline = page.evaluate(CHAT_JS), page.evaluate(TIMELINE_JS)
        assert all(q in chat for q, _ in TURNS)
        assert not _internal(chat) and not _internal(timeline), (_internal(chat), _internal(timeline))
        assert "Technical details" in timeline
        page.screenshot(path=str(ARTIFACTS / "46_desktop_clinician_timeline.png"), full_page=False)

        page.locator("#timeline summary").first.click()
        trace = page.evaluate(TIMELINE_JS)
        for what in ("probability", "rule's words", "model calls", "routing"):
            assert re.search(ENGINEERING[what], trace), what
        page.screenshot(path=str(ARTIFACTS / "46_desktop_technical_details.png"), full_page=False)

        _reopen(page)
        assert page.evaluate(TIMELINE_JS) == timeline  # the same lines and figures, the details closed again
        assert all(q in chat_text(page) for q, _ in TURNS) and not _internal(page.evaluate(CHAT_JS))

        page.set_viewport_size({"width": 390, "height": 844})
        _reopen(page)
        link = page.locator("#timeline-link a")
        link.wait_for(timeout=TIMEOUT_MS)
        link.click()  # one tap from the answer
        page.wait_for_timeout(500)
        box = page.locator("#timeline").bounding_box()
        assert box is not None and 0 <= box["y"] < 844, box
        page.screenshot(path=str(ARTIFACTS / "46_phone_timeline_one_tap.png"), full_page=False)
    finally:
        app.stop()
