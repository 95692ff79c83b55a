"""In Chromium: Approve writes what the card's form shows. For each write type (prescription, allergy, clinical
note) every field of the form is changed, Approve is pressed (no "Re-check" first), and the record, read through
the app's own ``Ehr``, holds every value as edited; the chat's confirmation lists the values written and each
change from the proposal. The card lists the checks that ran and those that could not. Screenshots of the card
and of the confirmation are kept in ``test-artifacts/`` (``docs/screenshots/30_*.png`` were taken from them).

Before this, Approve sent the card as first proposed: the record got "5 days" and no indication while the chat
said "Done: the change you approved is in the record"."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from docgemma.ehr.service import Ehr
from tests.e2e.test_browser import ARTIFACTS, TIMEOUT_MS, app_url, ask, make_active, page  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow


def _form(tab: Any) -> dict[str, Any]:
    """The card's visible fields by label: label → the field's text box."""
    out = {}
    for i in range(6):
        block = tab.locator(f"#card-field-{i}")
        if block.count() and block.is_visible():
            label = block.locator("[data-testid=block-info], span").first.inner_text().strip()
            out[label] = block.locator("textarea, input").first
    return out


def _edit_and_approve(tab: Any, edits: dict[str, str], written_before: int) -> str:
    """Change every field of the waiting card, press Approve, wait for the confirmation; the chat's last answer."""
    form = _form(tab)
    assert set(form) == set(edits), f"every field is edited: {sorted(form)}"
    for label, value in edits.items():
        form[label].fill(value)
    tab.locator("#approve").click()
    # Values changed on the form are checked again and shown on a new card (issue 43: an approval covers only what
    # its card was checked on); that card, approved as it stands, writes them.
    tab.locator("#approval").get_by_text("checked again", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    tab.wait_for_timeout(1500)  # the new card's form and id settle after its notice is drawn
    tab.locator("#approve").click()
    # The confirmation's badge (the welcome's "nothing is written to the record" matches a case-blind text search).
    confirmations = tab.locator("#chat span.check-ok", has_text="Written to the record")
    confirmations.nth(written_before).wait_for(timeout=TIMEOUT_MS)
    return str(tab.locator("#chat .message-row").last.inner_text())


def _wait_card(tab: Any, label: str) -> None:
    tab.locator("#approval-header").get_by_text(f"Approval needed before writing to the record: {label}",
                                                 exact=False).first.wait_for(timeout=TIMEOUT_MS)
    tab.locator("#approval-header").get_by_text("Checked:", exact=False).first.wait_for(timeout=TIMEOUT_MS)


def test_approve_writes_every_edited_field_of_each_write_type(app_url: tuple[str, Ehr], page: Any) -> None:  # noqa: F811
    url, ehr = app_url
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("#input textarea", timeout=TIMEOUT_MS)
    make_active(page, "Garcia", "Maria Garcia")
    pid = ehr.client.search("Patient", [("name", "Garcia")])[0]["id"]

    # ── prescription: a drug with no dose range known here, so the card says what it could not check
    ask(page, "Prescribe bisoprolol 5 mg once daily for 5 days for this patient")
    _wait_card(page, "Prescription")
    header = page.locator("#approval-header").inner_text()
    assert "Checked: patient identity" in header and "allergies and drug classes" in header
    if "Not checked" in header:  # a check that could not run is never silence: no "No findings" beside it
        assert "No findings" not in header
    page.locator("#approval").first.screenshot(path=str(ARTIFACTS / "30_card_checks.png"))
    chat = _edit_and_approve(page, {
        "Drug": "amlodipine", "Dose": "5 mg", "Frequency": "twice daily", "Duration": "30 days",
        "Indication": "hypertension", "Notes for the order": "check blood pressure in 2 weeks"}, 0)
    [order] = [r for r in ehr.client.search("MedicationRequest", [("patient", pid)])
               if r["medicationCodeableConcept"]["text"] == "amlodipine"]
    dosage = order["dosageInstruction"][0]
    assert dosage["doseAndRate"][0]["doseQuantity"] == {**dosage["doseAndRate"][0]["doseQuantity"], "value": 5, "unit": "mg"}
    assert dosage["timing"]["repeat"]["frequency"] == 2 and dosage["timing"]["repeat"]["boundsDuration"]["value"] == 30
    assert order["reasonCode"][0]["text"] == "hypertension"
    assert [n["text"] for n in order["note"]] == ["check blood pressure in 2 weeks"]
    assert not [r for r in ehr.client.search("MedicationRequest", [("patient", pid)])
                if r["medicationCodeableConcept"]["text"] == "bisoprolol"]
    for change in ("Drug: bisoprolol → amlodipine", "Frequency: once daily → twice daily", "Duration: 5 days → 30 days",
                   "Indication: — → hypertension", "Notes for the order: — → check blood pressure in 2 weeks"):
        assert change in chat, chat
    assert "As written: Drug: amlodipine" in chat.replace("\n", " ") or "As written:" in chat
    # For the screenshot only: a taller chat, so that the whole confirmation is in view.
    page.evaluate("document.querySelector('#chat').style.setProperty('height', '760px', 'important')")
    page.wait_for_timeout(500)
    page.locator("#chat").screenshot(path=str(ARTIFACTS / "30_confirmation_with_changes.png"))
    page.evaluate("document.querySelector('#chat').style.removeProperty('height')")

    # ── allergy
    ask(page, "Record a latex allergy (urticaria) for the active patient")
    _wait_card(page, "Allergy")
    chat = _edit_and_approve(page, {"Substance": "sulfamethoxazole", "Reaction": "rash",
                                    "Severity (mild, moderate or severe)": "moderate"}, 1)
    [allergy] = [a for a in ehr.client.search("AllergyIntolerance", [("patient", pid)])
                 if a["code"]["text"] == "sulfamethoxazole"]
    assert allergy["reaction"][0] == {**allergy["reaction"][0], "manifestation": [{"text": "rash"}], "severity": "moderate"}
    assert not [a for a in ehr.client.search("AllergyIntolerance", [("patient", pid)]) if a["code"]["text"] == "latex"]
    for change in ("Substance: latex → sulfamethoxazole", "Reaction: urticaria → rash", "— → moderate"):
        assert change in chat, chat

    # ── clinical note
    ask(page, "Save a progress note: stable, review in 4 weeks")
    _wait_card(page, "Clinical note")
    # A note has no clinical check of its own: its card lists the patient identity check, and says nothing more.
    header = page.locator("#approval-header").inner_text()
    assert "patient identity" in header and "No findings" in header
    page.locator("#approval").first.screenshot(path=str(ARTIFACTS / "30_note_card_checks.png"))
    chat = _edit_and_approve(page, {"Note type": "follow-up", "Note text": "BP controlled on amlodipine; review in 6 weeks"}, 2)
    notes = [d for d in ehr.client.search("DocumentReference", [("patient", pid)]) if d["type"]["text"] == "follow-up"]
    assert len(notes) == 1
    text = base64.b64decode(notes[0]["content"][0]["attachment"]["data"]).decode()
    assert text == "BP controlled on amlodipine; review in 6 weeks"
    for change in ("Note type: progress → follow-up", "Note text: stable, review in 4 weeks → BP controlled on amlodipine"):
        assert change in chat, chat
    page.screenshot(path=str(ARTIFACTS / "30_after_three_writes.png"), full_page=True)


def test_approve_with_a_change_that_brings_a_severe_finding_writes_nothing(app_url: tuple[str, Ehr],  # noqa: F811
                                                                           page: Any) -> None:  # noqa: F811
    url, ehr = app_url
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(url, wait_until="domcontentloaded")
    page.locator("#status").get_by_text("Model:", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    ask(page, "Prescribe loratadine 10 mg once daily for Grace Mensah")  # penicillin anaphylaxis on record
    _wait_card(page, "Prescription")
    # The card's id is not shown (an internal reference): the new card is told by its notice and its new finding.
    _form(page)["Drug"].fill("amoxicillin")
    page.locator("#approve").click()
    page.locator("#approval-header").get_by_text("Your changes were checked again", exact=False).first.wait_for(
        timeout=TIMEOUT_MS)
    assert "allergy conflict" in page.locator("#approval-header").first.inner_text().lower()
    assert not page.locator("#approve").is_enabled()  # a plain approval is refused for the new card
    assert _form(page)["Drug"].input_value() == "amoxicillin"
    pid = ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    assert ehr.client.search("MedicationRequest", [("patient", pid)]) == []
    chat = page.locator("#chat").inner_text()
    assert chat.count("Approval needed before writing to the record") == 1
    page.locator("#approval").first.screenshot(path=str(ARTIFACTS / "30_approve_new_severe_finding.png"))
