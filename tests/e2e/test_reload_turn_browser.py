"""In the browser: a reload at any moment keeps the turn (issue 46, item 5). ``python app.py`` on the demo ``fake``
backend (embedded record, SQLite conversations), its FDA look-ups answered by a local openFDA that takes 4 s, so
that an answer is under way for seconds. The page is reloaded 0.2 s and 1 s into an answer, and after it: each time
the message and the turn's outcome (its answer) are on the page. Then the app process is killed mid-answer and
started again: the reloaded page shows the message, one "interrupted" line and one Send again, which answers it.
A message sent while an approval card waits is refused in the chat, and a reload shows the refusal with the card
still waiting; once the card is decided the refusal stays. Screenshots of those states (desktop and phone) go to
test-artifacts/ (looked at, and committed as docs/screenshots/46_reload_*)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from docgemma.ui.messages import INTERRUPTED, STILL_ANSWERING
from tests.conftest import free_port
from tests.e2e.test_browser import ARTIFACTS, TIMEOUT_MS, ask, page  # noqa: F401  (fixture)
from tests.e2e.test_restart_browser import AppProcess, chat_text
from tests.fake_openfda import FakeOpenFDA

pytestmark = pytest.mark.slow
#: How long the local openFDA takes to answer a look-up (the start-up probe, which searches nothing, is answered
#: at once: a slow probe would mark the service offline).
LOOKUP_S = 4.0
#: (message, what its answer says), one drug each: a cached label would answer at once.
TURNS = [("Check FDA warnings for dofetilide", "Drug: dofetilide"),
         ("Check FDA warnings for warfarin", "Drug: warfarin"),
         ("Check FDA warnings for metformin", "Drug: metformin")]
CHAT = "(document.querySelector('#chat')?.innerText ?? '')"
#: A write that waits for its card (a severe finding: penicillin allergy), and a message sent while it waits.
PRESCRIBE = "Prescribe amoxicillin 500 mg three times daily for Grace Mensah"
WHILE_WAITING = "What is her latest creatinine?"
NOT_SENT = "Your message was not sent while this card waits"


@pytest.fixture
def slow_openfda() -> Iterator[str]:
    fake = FakeOpenFDA()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            request = httpx.Request("GET", f"http://openfda{self.path}")
            if request.url.params.get("search"):
                time.sleep(LOOKUP_S)
            answer = fake(request)
            self.send_response(answer.status_code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: no request lines on the test output
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _reopen(page: Any, message: str) -> None:  # noqa: F811
    """Reload; wait for the reopened conversation with ``message`` in it (checked at once: no answer needed)."""
    page.reload(wait_until="domcontentloaded")
    page.wait_for_function(f"() => {CHAT}.includes('Conversation reopened') && {CHAT}.includes({message!r})",
                           timeout=TIMEOUT_MS)


def _answered(page: Any, answer: str) -> None:  # noqa: F811
    page.wait_for_function(f"() => {CHAT}.includes({answer!r}) && !{CHAT}.includes({STILL_ANSWERING!r})",
                           timeout=TIMEOUT_MS)


def _send(page: Any, message: str) -> None:  # noqa: F811
    """Send ``message`` and wait until the page shows it: the turn has started on the server."""
    ask(page, message)
    page.wait_for_function(f"() => {CHAT}.includes({message!r})", timeout=TIMEOUT_MS)


def test_a_reload_at_any_moment_keeps_the_message_and_its_outcome(page: Any, tmp_path: Path,  # noqa: F811
                                                                   slow_openfda: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    app = AppProcess(tmp_path, free_port(), "fake")
    app.env["DOCGEMMA_OPENFDA_URL"] = slow_openfda
    try:
        app.start()
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(app.url + "/", wait_until="domcontentloaded")
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        for (message, answer), after_s in zip(TURNS[:2], (0.2, 1.0), strict=True):
            _send(page, message)
            time.sleep(after_s)
            _reopen(page, message)
            # Under way, and said so (on a machine slow enough to reload after the 4 s look-up: already answered).
            assert STILL_ANSWERING in chat_text(page) or answer in chat_text(page), (after_s, chat_text(page))
            _answered(page, answer)  # the answer follows on the reopened page
            assert "Send again" not in chat_text(page)
        _reopen(page, TURNS[1][0])  # after the answer: both turns whole
        chat = chat_text(page)
        assert all(m in chat and a in chat for m, a in TURNS[:2]) and STILL_ANSWERING not in chat
        assert not page.locator("#send-again").is_visible()

        message, answer = TURNS[2]
        _send(page, message)
        time.sleep(1.0)
        assert app.process is not None
        app.process.kill()  # the process dies mid-answer: its run is gone
        app.process.wait(30)
        app.start()
        _reopen(page, message)
        page.wait_for_function(f"() => {CHAT}.includes('This answer was interrupted')", timeout=TIMEOUT_MS)
        chat = chat_text(page)
        assert INTERRUPTED.strip("*") in chat.split(message)[-1], chat[-400:]  # the line, under the message
        assert chat.count("This answer was interrupted") == 1 and all(a in chat for _, a in TURNS[:2])
        again = page.locator("#send-again")
        assert again.is_visible() and page.get_by_role("button", name="Send again").count() == 1
        assert not page.locator(".follow-up").first.is_visible()  # the previous answer's, not this turn's
        again.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "46_reload_interrupted_desktop.png"), full_page=False)
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(300)
        again.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "46_reload_interrupted_phone.png"), full_page=False)
        page.set_viewport_size({"width": 1440, "height": 900})

        again.click()  # sends exactly that message again
        _answered(page, answer)
        assert not again.is_visible()
        _reopen(page, message)
        chat = chat_text(page)
        assert answer in chat and "Press Send again" not in chat and chat.count(message) == 2
    finally:
        app.stop()


def test_a_message_refused_while_a_card_waits_is_still_said_after_a_reload(page: Any, tmp_path: Path) -> None:  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    app = AppProcess(tmp_path, free_port(), "fake")
    try:
        app.start()
        page.set_viewport_size({"width": 1440, "height": 900})
        page.goto(app.url + "/", wait_until="domcontentloaded")
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        _send(page, PRESCRIBE)
        page.locator("#reject").wait_for(state="visible", timeout=TIMEOUT_MS)
        _send(page, WHILE_WAITING)
        page.wait_for_function(f"() => {CHAT}.includes({NOT_SENT!r})", timeout=TIMEOUT_MS)
        assert "Please approve, edit or reject the pending Prescription first." in chat_text(page)

        _reopen(page, NOT_SENT)  # the refusal is in the reopened conversation, with the card that still waits
        # The status line is filled after the restore: once it shows, the card's reference is the restored one (a
        # click before it was taken for a stale card's).
        page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
        page.locator("#reject").wait_for(state="visible", timeout=TIMEOUT_MS)
        chat = chat_text(page)
        assert f"{NOT_SENT}: “{WHILE_WAITING}”" in chat and chat.count(PRESCRIBE) == 1
        assert chat.rindex("Approval needed before writing to the record") < chat.rindex(NOT_SENT)
        assert "Severe" in page.locator("#approval").first.inner_text()  # the card itself, with its findings
        assert not page.locator("#send-again").is_visible()
        for name, size, above in (("desktop", (1440, 900), 260), ("phone", (390, 844), 240)):
            page.set_viewport_size({"width": size[0], "height": size[1]})
            page.wait_for_timeout(300)
            # The chat's line with the refusal near the top, the card under it.
            page.locator("#chat").get_by_text(NOT_SENT, exact=False).last.evaluate(
                "e => e.scrollIntoView({block: 'start'})")
            page.evaluate(f"() => window.scrollBy(0, -{above})")
            page.screenshot(path=str(ARTIFACTS / f"46_reload_refused_while_card_waits_{name}.png"), full_page=False)
        page.set_viewport_size({"width": 1440, "height": 900})

        page.locator("#reject").click()  # the reopened card is the one that waits: its decision is taken
        page.wait_for_function(f"() => {CHAT}.includes('you declined the Prescription')", timeout=TIMEOUT_MS)
        page.locator("#reject").wait_for(state="hidden", timeout=TIMEOUT_MS)
        _reopen(page, PRESCRIBE)  # the card is gone; what it said is not
        chat = chat_text(page)
        assert chat.count(NOT_SENT) == 1 and chat.index(PRESCRIBE) < chat.index(NOT_SENT)
        assert not page.locator("#reject").is_visible()
    finally:
        app.stop()
