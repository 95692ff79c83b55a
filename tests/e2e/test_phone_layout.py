"""In Chromium at a phone's size (390×844), on the demo rules: the active patient's name and safety flags stay in
view while chatting, the chat gets most of the height, the approval card fits the screen's width, and a turn
leaves the page where the clinician had it (issue 27: the chat box was ~250 px tall, the flags ~2,500 px below
it, and the page moved away after turns: the strip above the chat grew when a patient became active and the
chat and the box below it were pushed down). At 1440×900 the strip is hidden (the panel is beside the chat).
Screenshots: ``test-artifacts/40_phone_*.png``."""

from __future__ import annotations

from typing import Any

import pytest

from docgemma.ehr.service import Ehr
from tests.e2e.test_browser import ARTIFACTS, TIMEOUT_MS, app_url, ask, page  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow
WIDTH, HEIGHT = 390, 844
GEOMETRY = """() => {
  const box = s => { const e = document.querySelector(s); if (!e) return null; const b = e.getBoundingClientRect();
                     return {top: b.top, bottom: b.bottom, height: b.height, shown: getComputedStyle(e).display !== 'none'}; };
  const rows = document.querySelectorAll('#chat .message-row');
  const last = rows.length ? rows[rows.length - 1].getBoundingClientRect() : null;
  return {y: window.scrollY, strip: box('#patient-strip'), chat: box('#chat'), input: box('#input'),
          messages: box('#chat .bubble-wrap'), last: last && {top: last.top, bottom: last.bottom},
          strip_text: document.querySelector('#patient-strip').innerText, page_width: document.documentElement.scrollWidth};
}"""
TYPING_POSITION = ("() => { const b = document.querySelector('#input').getBoundingClientRect();"
                   " window.scrollTo(0, window.scrollY + b.bottom - window.innerHeight + 8); }")


def _in_view(box: dict[str, Any], height: int = HEIGHT) -> bool:
    return box["top"] >= -1 and box["bottom"] <= height + 1


def _turn(tab: Any, question: str, done: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ask from where a clinician types (the box at the bottom of the screen); the page before and after the turn."""
    tab.evaluate(TYPING_POSITION)
    before = tab.evaluate(GEOMETRY)
    ask(tab, question)
    tab.wait_for_function(done, timeout=TIMEOUT_MS)
    tab.wait_for_timeout(1500)  # the chat scrolls to its newest message 300 ms after an update
    return before, tab.evaluate(GEOMETRY)


def _kept_in_place(before: dict[str, Any], after: dict[str, Any], height: int = HEIGHT) -> None:
    """The window did not scroll by itself, the chat is where it was, whole on the screen, and its newest message
    is in its view."""
    assert abs(after["chat"]["top"] - before["chat"]["top"]) <= 2, (before, after)
    assert _in_view(after["chat"], height) and _in_view(after["strip"], height)
    last, messages = after["last"], after["messages"]
    assert last["bottom"] > messages["top"] and last["top"] < messages["bottom"], after


def test_a_phone_keeps_the_patient_and_flags_beside_the_chat(app_url: tuple[str, Ehr], page: Any) -> None:  # noqa: F811
    url, _ = app_url
    ARTIFACTS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.goto(url, wait_until="domcontentloaded")
    page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    assert page.evaluate(GEOMETRY)["strip_text"].startswith("No active patient")

    before, after = _turn(page, "Find patient Amina Okafor and check her chart",
                          "document.querySelector('#patient-strip').innerText.includes('Renal function')"
                          " && document.querySelector('#timeline').innerText.includes('Sources:')")
    assert "Amina Okafor" in after["strip_text"] and "eGFR" in after["strip_text"]
    _kept_in_place(before, after)  # the strip grew by two lines above the chat: the chat did not move
    assert after["chat"]["height"] >= 0.5 * HEIGHT
    assert after["strip"]["bottom"] <= after["chat"]["top"] + 1  # beside the chat, not over it
    page.screenshot(path=str(ARTIFACTS / "40_phone_chat_with_patient_strip.png"))

    before, after = _turn(page, "What were her last kidney function results?",
                          "document.querySelector('#timeline').innerText.includes('Patient Data Query')")
    _kept_in_place(before, after)

    # Reading further down, the strip stays at the top of the screen while any of the chat is in view.
    page.evaluate("() => window.scrollBy(0, document.querySelector('#chat').getBoundingClientRect().height / 2)")
    shown = page.evaluate(GEOMETRY)
    assert shown["chat"]["bottom"] > 0 and _in_view(shown["strip"]) and shown["strip"]["top"] <= 1

    # A prescription for a patient with a penicillin allergy: the card fits the width; the flag stays in view.
    before, after = _turn(page, "Prescribe amoxicillin 500 mg three times daily for Grace Mensah",
                          "document.querySelector('#approval-header')?.innerText.includes('Allergy conflict')")
    assert "Grace Mensah" in after["strip_text"] and "penicillin" in after["strip_text"]
    assert abs(after["chat"]["top"] - before["chat"]["top"]) <= 2 and _in_view(after["chat"])
    page.locator("#reject").scroll_into_view_if_needed()
    card = page.evaluate("""() => { const c = document.querySelector('#approval');
      const wide = [...c.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1);
      return {scroll: c.scrollWidth, client: c.clientWidth, wide: wide.length}; }""")
    assert card["scroll"] <= card["client"] and card["wide"] == 0, card
    shown = page.evaluate(GEOMETRY)
    assert shown["page_width"] <= WIDTH and _in_view(shown["strip"]) and "Allergy" in shown["strip_text"]
    page.screenshot(path=str(ARTIFACTS / "40_phone_card_with_allergy_in_view.png"))

    page.set_viewport_size({"width": 1440, "height": 900})
    page.wait_for_timeout(500)
    assert not page.evaluate(GEOMETRY)["strip"]["shown"]  # beside the chat on a wide screen: the panel itself


def test_a_turn_leaves_the_desktop_page_where_it_was(app_url: tuple[str, Ehr], page: Any) -> None:  # noqa: F811
    """At 1440×900, scrolled to where the box is at the bottom of the screen: after each turn the window is where it
    was, the chat whole on the screen with its newest message in view; no patient strip (the panel is beside)."""
    url, _ = app_url
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(url, wait_until="domcontentloaded")
    page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    for question, done in (("Find patient Amina Okafor and check her chart", "Sources:"),
                           ("What were her last kidney function results?", "Patient Data Query")):
        before, after = _turn(page, question, f"document.querySelector('#timeline').innerText.includes({done!r})")
        _kept_in_place(before, after, 900)
        assert after["y"] == before["y"] and not after["strip"]["shown"]
