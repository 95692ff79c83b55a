"""The strip above the chat (issue 27: at 390×844 the safety flags were ~2,500 px below the chat): the active
patient's name, birth date and every safety flag of the compiled summary, in words; an unreadable record is said,
never shown as "no flags"."""

from __future__ import annotations

from pathlib import Path

from docgemma.ehr.service import Ehr
from docgemma.ui.strip import NO_ACTIVE, NO_FLAGS, flags, strip_markdown
from docgemma.workspace import NO_PATIENT, UNREADABLE


def _summary(tmp_path: Path, name: str) -> str:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    pid = ehr.client.search("Patient", [("name", name)])[0]["id"]
    return ehr.summary(pid).text


def test_the_strip_names_the_patient_and_each_allergy_and_caution(tmp_path: Path) -> None:
    grace = strip_markdown("Grace Mensah", _summary(tmp_path, "Mensah"))
    assert grace.startswith("**Grace Mensah** · born 1991-01-22")
    assert '<span class="check-severe">Allergy</span> penicillin — Anaphylaxis, criticality high' in grace
    amina = strip_markdown("Amina Okafor", _summary(tmp_path, "Okafor"))
    assert amina.endswith('<span class="check-warning">Renal function</span> eGFR 33 mL/min/1.73 m², falling')
    # Images on record are no caution: the panel lists them, the strip stays short.
    assert "Images" not in strip_markdown("Samuel Kariuki", _summary(tmp_path, "Kariuki"))
    assert strip_markdown("Maria Garcia", _summary(tmp_path, "Garcia")).endswith(NO_FLAGS)


def test_a_flag_of_an_unknown_form_is_kept_and_no_patient_is_said() -> None:
    text = ("## Patient\nX is a 3-year-old (born 2023-01-01).\n## Safety\nALLERGY CHECK INCOMPLETE: could not identify "
            "drug X.\nSomething the compiler says without a kind\n## Allergies\n- peanut\n")
    assert flags(text) == [("Allergy check incomplete", "could not identify drug X", True),
                           ("Caution", "Something the compiler says without a kind", False)]
    assert strip_markdown(None, None) == NO_ACTIVE


def test_the_page_fills_the_strip_from_the_active_patient(tmp_path: Path) -> None:
    from tests.unit.test_page_session import App

    app = App.start(tmp_path)
    thread = "web-" + "5" * 32
    fresh = app.on.restore(thread)
    assert fresh[app.page.patient_strip] == NO_ACTIVE
    pid = app.ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    chosen = app.on.select(f"{pid}|Grace Mensah", fresh[app.page.chatbot], thread)
    assert "Grace Mensah" in chosen[app.page.patient_strip] and "penicillin" in chosen[app.page.patient_strip]
    app.store.close()


def test_an_unreadable_record_is_said_in_the_strip(tmp_path: Path) -> None:
    from docgemma.workspace import PatientPanel
    from tests.unit.test_page_session import App

    app = App.start(tmp_path)
    app.on.workspace.patient_panel = lambda patient: PatientPanel(message=UNREADABLE)  # type: ignore[method-assign]
    assert app.on.patient_view(None)[3] == UNREADABLE
    app.on.workspace.patient_panel = lambda patient: PatientPanel(message=NO_PATIENT)  # type: ignore[method-assign]
    assert app.on.patient_view(None)[3] == NO_ACTIVE
    app.store.close()
