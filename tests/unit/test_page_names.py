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
    assert shown == "patient: not found on record · kind: conditions"
    assert step_text(args, lambda _: "Grace Mensah") == "patient: Grace Mensah · kind: conditions"
    assert step_text(args) == "kind: conditions"
    for text in (shown, step_text(args)):
        assert "the patient on record" not in text and uuid not in text
