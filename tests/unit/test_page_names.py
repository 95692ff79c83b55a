"""The page names a patient as a clinician does (name, birth date, sex), never by record id; it says nothing
untrue about a patient id that is not on record; after a reload the patient list shows the active patient; the
approval card names its patient and marks each check's severity in a word, its text in sentence case."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_page_evidence import _say
from tests.unit.test_page_session import App

THREAD = "web-" + "f" * 32


def test_after_a_reload_the_patient_list_shows_the_active_patient(tmp_path: Path) -> None:
    """The panel showed Grace Mensah while the list above it said "Choose a patient…"."""
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    _say(app, THREAD, history, "Find patient Grace Mensah")
    listed = app.on.restore(THREAD)[page.matches]
    assert listed["value"].endswith("|Grace Mensah")
    assert app.on.restore("web-" + "0" * 32)[page.matches]["value"] == ""  # no active patient: nothing chosen
    app.store.close()


def test_a_patient_id_not_on_record_is_not_called_the_patient_on_record() -> None:
    """A wrong id read "patient: the patient on record" in the timeline."""
    from docgemma.ui.wording import step_text

    uuid = "12345678-1234-1234-1234-123456789abc"
    args = f"arguments: {{'patient_id': '{uuid}', 'resource_type': 'Condition'}}"
    shown = step_text(args, lambda _: None)
    assert shown == "patient: not found on record · reading: conditions"
    assert step_text(args, lambda _: "Grace Mensah") == "patient: Grace Mensah · reading: conditions"
    assert step_text(args) == "reading: conditions"
    for text in (shown, step_text(args)):
        assert "the patient on record" not in text and uuid not in text


def test_the_card_names_its_patient_and_says_each_checks_severity_in_a_word(tmp_path: Path) -> None:
    """The card printed "Patient ID <uuid>" and its checks in capitals ("ALLERGY CONFLICT (SEVERE): …")."""
    from docgemma.ui.card import check_text

    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    shown = _say(app, THREAD, history, "Prescribe amoxicillin 500 mg three times daily for Grace Mensah")
    card = app.on.workspace.pending(THREAD)
    assert card is not None and card["patient"] is not None
    header = shown[page.approval_md]
    assert card["patient"]["id"] not in header and "Patient ID" not in header
    assert "Grace Mensah" in header and f"born {card['patient']['birth_date']}" in header
    assert '<span class="check-severe">Severe</span> Allergy conflict: recorded allergy' in header
    assert "ALLERGY CONFLICT" not in header and "(SEVERE)" not in header
    assert card["severe"][0].startswith("ALLERGY CONFLICT (SEVERE): ")  # the check itself keeps its words
    assert check_text("IMPLAUSIBLE DOSE: 5000 mg") == "Implausible dose: 5000 mg"
    assert check_text("PAEDIATRIC PATIENT (4 years): adult limits") == "Paediatric patient (4 years): adult limits"
    assert check_text("INR HIGH: 4.1") == "INR high: 4.1"
    assert check_text("amoxicillin is fine") == "amoxicillin is fine"
    # The entry a label removal changes, with its version: in words, never its FHIR reference and id.
    removal = ("LABEL TO REMOVE: 'Allergy to penicillin' [AllergyIntolerance/73738ca2-e1f0-5805-a778-51ac4f0cd7af, "
               "version 1] becomes inactive and refuted")
    assert check_text(removal) == ("Label to remove: 'Allergy to penicillin' (record entry version 1) becomes inactive "
                                   "and refuted")
    app.store.close()


def test_a_patient_search_answer_names_the_patient_by_birth_date_not_record_id(tmp_path: Path) -> None:
    """"Find patient Grace Mensah" answered "… (ID 3f159ed0-…)", and so did the answer under a write or a
    reject: a clinician knows a patient by name and birth date."""
    import re

    from docgemma.ui.wording import answer_text

    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    shown = _say(app, THREAD, history, "Find patient Grace Mensah")[page.chatbot]
    answer = shown[-1]["content"]
    assert "Grace Mensah, born 1991-01-22, female" in answer and not uuid.search(answer), answer
    reopened = app.on.restore(THREAD)[page.chatbot]
    assert not uuid.search(str(reopened)) and "born 1991-01-22" in str(reopened)
    gid = "12345678-1234-1234-1234-123456789abc"
    assert answer_text(f"- Grace Mensah, born 1991-01-22, female (ID {gid})") == \
        "- Grace Mensah, born 1991-01-22, female"
    assert answer_text(f"Grace Mensah (ID {gid}) is now active.", lambda _: "born 1991-01-22, female") == \
        "Grace Mensah (born 1991-01-22, female) is now active."
    assert answer_text(f"Grace Mensah (ID {gid}) is now active.", lambda _: None) == "Grace Mensah is now active."
    app.store.close()


def test_two_patients_of_one_name_and_the_panel_are_told_apart_by_birth_date_not_record_id() -> None:
    """The question "which James Wilson?" and the patient panel's summary printed "(born 1950-02-01, ID <uuid>)"."""
    from docgemma.ui.messages import summary_markdown
    from docgemma.ui.wording import answer_text

    a, b = "054c0519-5547-5bd6-81ce-9063e04f005a", "103db76d-ecc4-5ab3-b300-64dd00d4925a"
    asked = f"Which one? James Wilson (born 1950-02-01, ID {a}); James Wilson (born 1988-11-30, ID {b})"
    assert answer_text(asked) == "Which one? James Wilson (born 1950-02-01); James Wilson (born 1988-11-30)"
    panel = summary_markdown("James Wilson", f"James Wilson is a 37-year-old male (born 1988-11-30, ID {b}).")
    assert b not in panel and "(born 1988-11-30)" in panel


def test_after_a_turn_the_patient_list_shows_the_patient_the_panel_shows(tmp_path: Path) -> None:
    """After "Prescribe … for Grace Mensah" the list still showed the patient picked before (Samuel Kariuki)."""
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    first = _say(app, THREAD, history, "Find patient Samuel Kariuki")
    assert first[page.matches]["value"].endswith("|Samuel Kariuki")
    second = _say(app, THREAD, first[page.chatbot], "Find patient Grace Mensah")
    assert second[page.matches]["value"].endswith("|Grace Mensah") and "Grace Mensah" in second[page.patient_md]
    app.store.close()
