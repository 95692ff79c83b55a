"""Issue 26 phrasings in Chromium on the embedded default (SmolLM2-135M, transformers; the demo record, Grace Mensah
active): a prescription being thought about and a drug with a result are asked with buttons (the right one among
them, filled with the drug named), a record question about her is answered, and another patient named in lower
case is searched for — no button names Grace Mensah after it. Screenshots in ``test-artifacts/26_*.png``."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from docgemma.agent.assistant import Assistant
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.ehr_tools import record_facts, record_write_check
from docgemma.tools.patient_roster import record_roster
from docgemma.tools.registry import default_registry
from docgemma.ui.page import build_demo
from docgemma.ui.style import page_options
from docgemma.workspace import Workspace
from tests.e2e.test_browser import ARTIFACTS, TIMEOUT_MS, ask, make_active, page  # noqa: F401  (the Chromium page fixture)
from tests.fixture_api import handler

pytestmark = pytest.mark.slow


@pytest.fixture
def embedded_url(embedded_app: tuple[str, Ehr]) -> str:
    return embedded_app[0]


@pytest.fixture
def embedded_app(embedded: Any, tmp_path: Path) -> Iterator[tuple[str, Ehr]]:
    """The page over the embedded model (loaded once for the module), a fresh demo record and recorded look-ups."""
    llm = embedded
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    clients = knowledge_clients(Settings(), transport=httpx.MockTransport(handler), record=ehr)
    assistant = Assistant(llm, bind_tools(default_registry(), clients), patient_context=ehr.patient_context,
                          patient_roster=record_roster(ehr), record_facts=record_facts(ehr),
                          write_check=record_write_check(ehr))
    demo = build_demo(Workspace(assistant, ehr), "Embedded · CPU", "not clinically meaningful")
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=None, quiet=True,
                            **page_options())
    yield url, ehr
    demo.close()


#: The timeline shows a turn other than the one before, finished or paused at its card (its "model calls" figure is
#: written at the end of a turn): the end-of-turn signal (scripts/walkthrough.py waits on the same).
TIMELINE_CHANGED_JS = """(before) => {
  const t = document.querySelector('#timeline');
  return !!t && t.textContent !== before && t.textContent.includes('model calls');
}"""


def _ask_and_wait(page: Any, text: str) -> None:  # noqa: F811
    """Send ``text`` and wait for its turn to end (the timeline shows it), then for the chat to stop changing."""
    before = page.locator("#timeline").text_content()
    ask(page, text)
    page.wait_for_function(TIMELINE_CHANGED_JS, arg=before, timeout=TIMEOUT_MS)
    _stable(page)


def _stable(page: Any, quiet_s: float = 1.0, poll_ms: int = 200) -> None:  # noqa: F811
    """Wait until the chat has not changed for ``quiet_s`` seconds."""
    deadline, last, since = time.monotonic() + TIMEOUT_MS / 1000, None, time.monotonic()
    while time.monotonic() < deadline:
        text = page.locator("#chat").inner_text()
        if text != last:
            last, since = text, time.monotonic()
        elif time.monotonic() - since > quiet_s:
            return
        page.wait_for_timeout(poll_ms)
    raise AssertionError("the chat never stopped changing")

def _buttons(page: Any) -> list[str]:  # noqa: F811
    """The follow-up buttons shown under the last answer."""
    return [t.strip() for t in page.locator("button.follow-up:visible").all_inner_texts()]


def test_issue_phrasings_in_the_browser_on_the_embedded_default(embedded_url: str, page: Any) -> None:  # noqa: F811
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(embedded_url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    make_active(page, "Mensah", "Grace Mensah")

    ask(page, "she's got a chest infection, thinking co-amoxiclav 625 three times a day for five days")
    page.get_by_role("button", name=re.compile(r"Prescribe amoxicillin-clavulanate 625")).wait_for(timeout=TIMEOUT_MS)
    assert any(t.startswith("Prescribe amoxicillin-clavulanate 625") for t in _buttons(page)), _buttons(page)
    page.screenshot(path=str(ARTIFACTS / "26_embedded_asked_with_buttons.png"), full_page=True)

    ask(page, "should I worry about metformin with that eGFR?")
    page.get_by_role("button", name=re.compile(r"FDA safety warnings for metformin")).wait_for(timeout=TIMEOUT_MS)

    _ask_and_wait(page, "how are her kidneys doing?")
    assert re.search(r"kidney|eGFR|creatinine", page.locator("#chat").inner_text().split("how are her kidneys")[-1])

    _ask_and_wait(page, "does amina okafor have any allergies?")
    shown = _buttons(page)
    for text in shown:
        assert "Grace Mensah" not in text and "this patient" not in text, text
    page.screenshot(path=str(ARTIFACTS / "26_embedded_four_phrasings.png"), full_page=True)


def _decided(page: Any, before: str) -> None:  # noqa: F811
    """After Approve or Reject: wait for the decision's confirmation in the chat (the card's note hides with it)."""
    page.wait_for_function("(before) => document.querySelector('#chat').innerText !== before", arg=before,
                           timeout=TIMEOUT_MS)
    _stable(page)

def _scan_in_chromium(page: Any, prompts: list[str]) -> set[tuple[str, str, str]]:  # noqa: F811
    """Each prompt sent as a clinician would (an image attached where it asks about one, a card approved or, when
    refused, rejected); the whole page's visible text after it scanned as tests/unit/test_page_text.py does."""
    from tests.e2e.test_browser import CT
    from tests.unit.test_page_text import _INTERNAL

    found: set[tuple[str, str, str]] = set()
    for prompt in prompts:
        if "image" in prompt:
            page.locator("#input input[type=file]").set_input_files(str(CT))
        _ask_and_wait(page, prompt)
        if page.locator("#approval:visible").count():
            approve = page.locator("#approve:visible").first
            decided = page.locator("#chat").inner_text()
            (approve if approve.is_enabled() else page.locator("#reject:visible").first).click()
            _decided(page, decided)
        shown = page.locator("body").inner_text()
        for what, pattern in _INTERNAL.items():
            found |= {(prompt, what, m.group(0)) for m in re.finditer(pattern, shown)}
        for untrue, when in (("try again shortly", "retrying cannot help"),
                             ("from the image findings", "image not analysed"),
                             ("Routing: direct answer", "not answered")):
            if untrue in shown and when in shown:
                found.add((prompt, "untrue", untrue))
    return found


def test_every_example_and_walkthrough_turn_in_chromium_on_the_embedded_default_shows_only_clinical_true_text(
        embedded_url: str, page: Any) -> None:  # noqa: F811
    """Issue 27's page-text scan in the browser on the real default model: what Chromium shows (chat, steps, card,
    timeline, panel, strip) after each example prompt and each walkthrough message."""
    from docgemma.ui.page import EXAMPLES
    from tests.e2e.test_page_text_embedded import walkthrough_turns

    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(embedded_url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    found = _scan_in_chromium(page, list(EXAMPLES))
    page.screenshot(path=str(ARTIFACTS / "27_embedded_examples_scanned.png"), full_page=True)
    page.locator("#new-conversation").click()
    page.wait_for_function("!document.querySelector('#chat').innerText.includes('Find patient Amina Okafor')",
                           timeout=TIMEOUT_MS)
    found |= _scan_in_chromium(page, walkthrough_turns())
    page.screenshot(path=str(ARTIFACTS / "27_embedded_walkthrough_scanned.png"), full_page=True)
    assert not found, sorted(found)


def test_every_issue_phrasing_in_chromium_is_done_or_asked_never_for_another_patient(
        embedded_app: tuple[str, Ehr], page: Any) -> None:  # noqa: F811
    """All of tests/e2e/test_embedded_phrasings.py's phrasings (the issue's), each in a new conversation with its
    active patient, in the browser: the turn ends in an answer, an approval card (rejected here) or buttons; no
    button names a patient other than the one the message is about, and the timeline counts no model call."""
    from tests.e2e.test_embedded_phrasings import CASES
    from tests.integration.named_patient import demo_patients

    url, ehr = embedded_app
    by_mrn = {p.mrn: p for p in demo_patients(ehr)}
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    previous = ""
    for case in CASES:
        page.locator("#new-conversation").click()
        if previous:  # the new conversation is on screen once the last case's message is gone
            page.wait_for_function("(m) => !document.querySelector('#chat').innerText.includes(m)", arg=previous,
                                   timeout=TIMEOUT_MS)
        previous = case.message[:40]
        active = by_mrn[case.active]
        make_active(page, active.name.split()[-1], active.name)
        named = by_mrn[case.patient] if case.patient else active
        _ask_and_wait(page, case.message.replace("{ref}", by_mrn["DG-1001"].id))
        assert "model calls: 0" in (page.locator("#timeline").text_content() or ""), case.message
        buttons = _buttons(page)
        # The patient the answer is about: the one the case names, else one the message names, else the active one.
        about = {named.name} | {p.name for p in by_mrn.values() if p.name.lower() in case.message.lower()}
        others = [p.name for p in by_mrn.values() if p.name not in about]
        for text in buttons:
            assert not any(o in text for o in others), (case.message, text)
        if page.locator("#approval:visible").count():
            decided = page.locator("#chat").inner_text()
            page.locator("#reject:visible").first.click()
            _decided(page, decided)
    page.screenshot(path=str(ARTIFACTS / "26_embedded_every_phrasing.png"), full_page=True)


def _allergy_card(page: Any, message: str, substance: str) -> list[str]:  # noqa: F811
    """Ask ``message``; the allergy card it gives, surely or through its button "Record an allergy to <substance> for
    this patient": the values of the card's form (what Approve writes, not its text), lower case."""
    _ask_and_wait(page, message)
    if not page.locator("#approval:visible").count():
        wanted = f"Record an allergy to {substance} for this patient"
        assert wanted in _buttons(page), _buttons(page)
        before = page.locator("#timeline").text_content()
        page.get_by_role("button", name=wanted).click()
        page.wait_for_function(TIMELINE_CHANGED_JS, arg=before, timeout=TIMEOUT_MS)
        _stable(page)
    assert page.locator("#approval:visible").count()
    values = page.locator("#approval:visible input, #approval:visible textarea").evaluate_all("els => els.map(e => e.value)")
    return [str(v).strip().lower() for v in values]


def test_the_written_apart_sets_classes_are_asked_with_the_right_button_in_chromium(embedded_url: str,
                                                                                    page: Any) -> None:  # noqa: F811
    """Issue 26, the classes the sets of families written apart found, on the embedded default in the browser: a
    slipped record word ("admisions"), a bare lower-case name, an allergy to something that is no drug. Each is asked
    with the right action as a button; clicking it does that action (a timeline, a search, an allergy's card with
    the substance named), with no model call."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(embedded_url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    make_active(page, "Mensah", "Grace Mensah")

    _ask_and_wait(page, "any admisions for her recently?")
    assert "When was this patient last seen?" in _buttons(page), _buttons(page)
    before = page.locator("#timeline").text_content()
    page.get_by_role("button", name="When was this patient last seen?").click()
    page.wait_for_function(TIMELINE_CHANGED_JS, arg=before, timeout=TIMEOUT_MS)
    _stable(page)
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")

    _ask_and_wait(page, "pt david ochieng")
    assert "Find patient David Ochieng" in _buttons(page), _buttons(page)

    values = _allergy_card(page, "she gets hives with eggs - please record it", "eggs")
    assert "eggs" in values, values
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")
    page.screenshot(path=str(ARTIFACTS / "26_embedded_written_apart_classes.png"), full_page=True)
    decided = page.locator("#chat").inner_text()
    page.locator("#reject:visible").first.click()
    _decided(page, decided)


def test_the_fifth_sets_classes_in_chromium(embedded_url: str, page: Any) -> None:  # noqa: F811
    """Issue 26, the classes the fifth set written apart found, on the embedded default in the browser: a dictated
    "substance -> reaction" is the allergy card with both in its form (it was a note, then an allergy card with no
    substance); a search by family name finds the patient; a name beside another patient's hospital number never
    opens that number's record (it opened James Wilson's for "ines duarte, DG-1009"). No model call."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(embedded_url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    make_active(page, "Mensah", "Grace Mensah")

    shown = _allergy_card(page, "please document for her: latex -> facial swelling", "latex")
    assert "latex" in shown and any("facial swelling" in v for v in shown), shown
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")
    decided = page.locator("#chat").inner_text()
    page.locator("#reject:visible").first.click()
    _decided(page, decided)

    _ask_and_wait(page, "have we got anyone under the name okafor?")
    assert "Amina Okafor" in page.locator("#chat").inner_text().split("under the name okafor")[-1]

    _ask_and_wait(page, "open the record for tunde bello, DG-1009")
    answer = page.locator("#chat").inner_text().split("tunde bello, DG-1009")[-1]
    assert "James Wilson" not in answer and "Patient Record" not in answer, answer
    assert "Find patient Tunde Bello" in _buttons(page), _buttons(page)
    assert not any("DG-1009" in b or "this patient" in b for b in _buttons(page)), _buttons(page)
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")
    page.screenshot(path=str(ARTIFACTS / "26_embedded_fifth_set_classes.png"), full_page=True)


def test_the_sixth_sets_classes_in_chromium(embedded_url: str, page: Any) -> None:  # noqa: F811
    """Issue 26, the classes the sixth set written apart found, on the embedded default in the browser: a name in the
    possessive that the roster does not know is never answered from the active patient's record (it was, surely);
    "who is <hospital number>?" finds that patient (it opened a chart); a note followed by the request to save it is
    that note's card. No model call."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(embedded_url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    make_active(page, "Mensah", "Grace Mensah")

    _ask_and_wait(page, "what was Otieno's last sodium?")
    answer = page.locator("#chat").inner_text().split("Otieno's last sodium?")[-1]
    assert "Grace Mensah" not in answer and "sodium" not in answer.lower().split("find patient")[0], answer
    assert "Find patient Otieno" in _buttons(page), _buttons(page)
    assert not any("this patient" in b for b in _buttons(page)), _buttons(page)
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")

    _ask_and_wait(page, "who is DG-1005?")
    assert "Kofi Asante" in page.locator("#chat").inner_text().split("who is DG-1005?")[-1]

    _ask_and_wait(page, "amlodipine stopped because of ankle swelling. that's the plan, save it to the record")
    assert page.locator("#approval:visible").count()
    values = page.locator("#approval:visible input, #approval:visible textarea").evaluate_all("els => els.map(e => e.value)")
    assert "amlodipine stopped because of ankle swelling" in [str(v).strip().lower() for v in values], values
    # The search by number found one patient, who became the active one (as a search by name does): the card says so.
    assert "Kofi Asante" in page.locator("#approval:visible").first.inner_text()
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")
    page.screenshot(path=str(ARTIFACTS / "26_embedded_sixth_set_classes.png"), full_page=True)
    decided = page.locator("#chat").inner_text()
    page.locator("#reject:visible").first.click()
    _decided(page, decided)


def test_the_eighth_stops_classes_in_chromium(embedded_url: str, page: Any) -> None:  # noqa: F811
    """Issue 26, this stop's classes on the embedded default in the browser: a connection question names its start in
    words and the connections tool runs (it asked "which record item?" for every such question); one family name
    where only a patient can stand is never answered from the active patient's record. No model call."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(embedded_url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    make_active(page, "Okafor", "Amina Okafor")

    _ask_and_wait(page, "why is she on lisinopril?")
    answer = page.locator("#chat").inner_text().split("why is she on lisinopril?")[-1]
    assert "Essential hypertension" in answer and "which record item" not in answer.lower(), answer
    assert "duplicates" not in answer, answer
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")

    _ask_and_wait(page, "what meds is Nwosu on")
    answer = page.locator("#chat").inner_text().split("what meds is Nwosu on")[-1]
    # Amina Okafor's medications (metformin, lisinopril, atorvastatin) are never the answer about Nwosu.
    assert not any(drug in answer.lower() for drug in ("metformin", "lisinopril", "atorvastatin")), answer
    assert "Nwosu" in answer, answer
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")
    page.screenshot(path=str(ARTIFACTS / "26_embedded_eighth_stop_classes.png"), full_page=True)


def test_the_whole_records_medication_map_in_chromium(embedded_url: str, page: Any) -> None:  # noqa: F811
    """Issue 26, the ninth stop: "which of her meds are for which condition?" is the connections tool's map of her
    active orders and their recorded reasons (it showed the chart, or asked "which record item?"), in clinical
    words on the page: no record ids, no FHIR type names. No model call."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(embedded_url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    make_active(page, "Okafor", "Amina Okafor")

    question = "which of her meds are for which condition?"
    _ask_and_wait(page, question)
    answer = page.locator("#chat").inner_text().split(question)[-1]
    assert "Type 2 diabetes" in answer and "Essential hypertension" in answer, answer
    assert "no reason recorded on the order" in answer and "Chronic kidney disease" in answer, answer
    assert "which record item" not in answer.lower(), answer
    assert "MedicationRequest" not in answer and not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-", answer), answer
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")
    page.screenshot(path=str(ARTIFACTS / "26_embedded_medication_map.png"), full_page=True)


def test_the_tenth_sets_other_patient_buttons_in_chromium(embedded_url: str, page: Any) -> None:  # noqa: F811
    """Issue 26, the tenth set's second look: with Grace Mensah open, an order, a visit question and a note that name
    another patient in a form no reader knew were offered as buttons for "this patient" (the open one). On the
    embedded default in the browser each button now names the patient the clinician named, and the search for them
    comes first; clicking it searches. No model call."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(embedded_url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    make_active(page, "Mensah", "Grace Mensah")

    for message, name in (("write up ftaima bello for ergonovine 25 mcg every 8 hours", "Ftaima Bello"),
                          ("last cliinc visit for Karim?", "Karim"),
                          ("document for thomas banda - chest infection, plan review in 48h", "Thomas Banda")):
        _ask_and_wait(page, message)
        offered = _buttons(page)
        assert offered and offered[0] == f"Find patient {name}", offered
        assert not any("this patient" in b for b in offered), offered
        assert "model calls: 0" in (page.locator("#timeline").text_content() or "")
    page.screenshot(path=str(ARTIFACTS / "26_embedded_tenth_set_other_patient_buttons.png"), full_page=True)

    before = page.locator("#timeline").text_content()
    page.get_by_role("button", name="Find patient Thomas Banda").click()
    page.wait_for_function(TIMELINE_CHANGED_JS, arg=before, timeout=TIMEOUT_MS)
    _stable(page)
    answer = page.locator("#chat").inner_text().split("Find patient Thomas Banda")[-1]
    assert "Thomas Banda" in answer, answer
    assert "model calls: 0" in (page.locator("#timeline").text_content() or "")


def _card_text(page: Any) -> str:  # noqa: F811
    page.locator("#approval:visible").first.wait_for(timeout=TIMEOUT_MS)
    return page.locator("#approval:visible").first.inner_text()


def test_the_pharmacists_checks_in_chromium_on_the_embedded_default(embedded_app: tuple[str, Ehr],
                                                                     page: Any) -> None:  # noqa: F811
    """Issue 42 on the real default, in the browser: the pregnant patient's ACE inhibitor, a DOAC with an NSAID, and
    a penicillin asked about for a named patient who is not the open one each show their finding; Approve is not
    offered as one click on the first two, and nothing is written. Screenshots in ``test-artifacts/42_*.png``."""
    url, ehr = embedded_app
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)

    def orders(family: str) -> int:
        pid = ehr.client.search("Patient", [("name", family)], limit=1)[0]["id"]
        return sum(r.get("resourceType") == "MedicationRequest" for r in ehr.compartment(str(pid)))

    for family, name, message, finding, shot in (
            ("Bello", "Fatima Bello", "Prescribe lisinopril 10 mg once daily", "PREGNANCY (CONTRAINDICATED)",
             "42_pregnant_ace_inhibitor.png"),
            ("Oduya", "Margaret Oduya", "Prescribe naproxen 500 mg twice daily", "apixaban",
             "42_doac_with_nsaid.png")):
        before = orders(family)
        page.locator("#new-conversation").click()
        make_active(page, family, name)
        ask(page, message)
        text = _card_text(page)
        assert finding.lower() in text.lower(), text
        assert not page.locator("#approve:visible").first.is_enabled()
        page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
        decided = page.locator("#chat").inner_text()
        page.locator("#reject:visible").first.click()
        _decided(page, decided)
        assert orders(family) == before

    page.locator("#new-conversation").click()
    make_active(page, "Asante", "Kofi Asante")
    _ask_and_wait(page, "is co-amoxiclav safe for Grace Mensah?")
    answer = page.locator("#chat").inner_text().split("is co-amoxiclav safe for Grace Mensah?")[-1]
    assert "Grace Mensah" in answer and "penicillin" in answer and "NOT checked" not in answer, answer
    page.screenshot(path=str(ARTIFACTS / "42_named_patient_not_open.png"), full_page=True)


def _press(page: Any, button: str) -> None:  # noqa: F811
    """Press a follow-up button and wait for its turn to end (an answer, or its card)."""
    before = page.locator("#timeline").text_content()
    page.get_by_role("button", name=button).click()
    page.wait_for_function(TIMELINE_CHANGED_JS, arg=before, timeout=TIMEOUT_MS)
    _stable(page)


def _card_notice(page: Any, words: str) -> None:  # noqa: F811
    """Wait for the waiting card's notice that starts with ``words`` (a decision answered with a new card)."""
    page.locator("#approval-header").get_by_text(words, exact=False).first.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_timeout(1500)  # the new card's form and id settle after its notice is drawn (test_card_form.py)


def test_the_allergy_statements_in_chromium_on_the_embedded_default(embedded_app: tuple[str, Ehr],
                                                                    page: Any) -> None:  # noqa: F811
    """Issue 42's allergy flows walked on the real default, in the browser. Grace Mensah (penicillin anaphylaxis on
    record): "NKDA" asked to be written is refused outright, no card; "penicillin: none known" writes nothing and
    offers the two writes it may mean; the removal's button gives a card whose Reason field is to be filled in (an
    approval without it is refused), and once it is, the label becomes inactive and refuted, the reason in its note,
    in one update. Joseph Mwangi (no allergy on record): NKDA is a card, approved as the one coded entry (SNOMED CT
    409137002); a denial asked to be documented writes no allergy. Screenshots in ``test-artifacts/42_allergy_*.png``."""
    from docgemma.fhir import concept_code
    from docgemma.tools.write_checks import active_allergies
    from tests.e2e.test_card_form import _form
    from tests.unit.test_page_text import _INTERNAL

    url, ehr = embedded_app
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)

    def allergies(family: str) -> list[dict[str, Any]]:
        pid = ehr.client.search("Patient", [("name", family)], limit=1)[0]["id"]
        return ehr.client.search("AllergyIntolerance", [("patient", str(pid))])

    def answer_to(message: str) -> str:
        return page.locator("#chat").inner_text().split(message)[-1]

    def internal_words() -> list[str]:
        """What the page shows (chat, card, timeline, panel) in words no clinician writes: record ids, references."""
        shown = page.locator("body").inner_text()
        return [m.group(0) for pattern in _INTERNAL.values() for m in re.finditer(pattern, shown)]

    # ── Grace Mensah: NKDA contradicts her penicillin allergy, refused with no card
    [label] = allergies("Mensah")
    make_active(page, "Mensah", "Grace Mensah")
    message = "Record allergy for Grace Mensah: NKDA"
    _ask_and_wait(page, message)
    answer = answer_to(message)
    assert "contradicts the active allergy list" in answer and "penicillin" in answer.lower(), answer
    assert "nothing was written" in answer and "remove its label first" in answer, answer
    assert not page.locator("#approval:visible").count()
    assert allergies("Mensah") == [label]
    page.screenshot(path=str(ARTIFACTS / "42_allergy_nkda_refused.png"), full_page=True)

    # ── a bare negative: read as a statement, nothing written, the two writes it may mean offered
    message = "penicillin: none known"
    _ask_and_wait(page, message)
    answer = answer_to(message)
    assert "reads as a statement that there is no penicillin allergy" in answer, answer
    assert "nothing was written" in answer and "not recognised" not in answer, answer
    remove = "Remove the penicillin allergy label for this patient"
    assert _buttons(page) == ["Record NKDA for this patient", remove], _buttons(page)
    assert allergies("Mensah") == [label]
    page.screenshot(path=str(ARTIFACTS / "42_allergy_bare_negative_offers.png"), full_page=True)

    # ── the removal's button: a card with its Reason field to fill in, no override offered
    _press(page, remove)
    text = _card_text(page)
    assert "Allergy Label Removal" in text and "Reason needed" in text, text
    form = _form(page)
    assert form["Reason"].input_value() == "not specified" and form["Substance"].input_value() == "penicillin", form
    assert page.locator("#approve:visible").first.is_enabled() and not page.locator("#override:visible").count()
    # The entry it changes in words (it showed "[AllergyIntolerance/<id>, version 1]"), and no warning against the
    # removal itself ("Safety: penicillin — Grace Mensah has a recorded penicillin allergy" stood on this card).
    assert "record entry version 1" in text and "Safety: penicillin" not in text, text
    assert not internal_words(), internal_words()
    page.screenshot(path=str(ARTIFACTS / "42_allergy_remove_label_card.png"), full_page=True)

    # Approved without a reason: refused, the card waits on with the reason asked for, nothing written.
    page.locator("#approve:visible").first.click()
    _card_notice(page, "Approval refused: this card still needs the reason")
    assert allergies("Mensah") == [label]
    page.screenshot(path=str(ARTIFACTS / "42_allergy_approve_without_reason_refused.png"), full_page=True)

    # The reason filled in and approved: shown on a new card first (an approval covers only what its card showed).
    reason = "tolerated an amoxicillin oral challenge"
    _form(page)["Reason"].fill(reason)
    page.locator("#approve:visible").first.click()
    _card_notice(page, "Your changes were checked again")
    assert "Reason needed" not in _card_text(page) and _form(page)["Reason"].input_value() == reason
    assert allergies("Mensah") == [label]
    decided = page.locator("#chat").inner_text()
    page.locator("#approve:visible").first.click()
    _decided(page, decided)
    [saved] = allergies("Mensah")
    assert saved["id"] == label["id"] and saved["code"] == label["code"]  # the same entry, changed: no new one
    assert (concept_code(saved, "clinicalStatus"), concept_code(saved, "verificationStatus")) == ("inactive", "refuted")
    assert [n["text"] for n in saved["note"]][-1] == f"Allergy label removed: {reason}"
    assert int(saved["meta"]["versionId"]) == int(label["meta"]["versionId"]) + 1  # written exactly once
    assert not page.locator("#approval:visible").count()
    assert "_history" not in (page.locator("#timeline").inner_text()) and not internal_words(), internal_words()
    page.screenshot(path=str(ARTIFACTS / "42_allergy_label_removed.png"), full_page=True)

    # ── Joseph Mwangi, no allergy on record: NKDA is a card; approved, the one coded entry
    assert allergies("Mwangi") == []
    page.locator("#new-conversation").click()
    page.wait_for_function("(m) => !document.querySelector('#chat').innerText.includes(m)", arg=message,
                           timeout=TIMEOUT_MS)
    make_active(page, "Mwangi", "Joseph Mwangi")
    _ask_and_wait(page, "Record allergy for Joseph Mwangi: NKDA")
    assert "Allergy Documentation" in _card_text(page)
    assert _form(page)["Substance"].input_value() == "NKDA"
    page.screenshot(path=str(ARTIFACTS / "42_allergy_nkda_card.png"), full_page=True)
    decided = page.locator("#chat").inner_text()
    page.locator("#approve:visible").first.click()
    _decided(page, decided)
    [nkda] = allergies("Mwangi")
    assert nkda["code"]["coding"][0]["system"] == "http://snomed.info/sct"
    assert nkda["code"]["coding"][0]["code"] == "409137002", nkda["code"]
    assert active_allergies([nkda]) == []  # a statement, never an allergen
    # The panel lists it under Allergies, not as a safety flag (it showed "ALLERGY: No known drug allergy").
    page.locator("#patient-summary").get_by_text("No known drug allergy", exact=False).first.wait_for(
        timeout=TIMEOUT_MS)
    assert "ALLERGY: No known drug allergy" not in page.locator("#patient-summary").inner_text()

    # ── a denial asked to be documented: no allergy written
    message = "denies any penicillin allergy, please document that"
    _ask_and_wait(page, message)
    answer = answer_to(message)
    assert "not recorded as an allergy" in answer and "nothing was written" in answer, answer
    assert not page.locator("#approval:visible").count()
    after = allergies("Mwangi")
    assert [a["id"] for a in after] == [nkda["id"]] and active_allergies(after) == []
    page.screenshot(path=str(ARTIFACTS / "42_allergy_denial_not_written.png"), full_page=True)
