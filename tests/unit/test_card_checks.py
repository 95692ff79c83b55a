"""The approval card says which checks ran (with their sources) and which could not (with the reason, as a
warning); "No findings" only when every listed check ran and found nothing. Every write type lists its checks,
a patient-identity check first. On the page, Approve and Override send the form's values (an edit counted only
after "Re-check" and nothing said so), and a re-checked card's chat line is said once (it was doubled)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.approval import ApprovalCard
from docgemma.ehr.service import Ehr
from docgemma.tools.ehr_tools import record_write_check
from docgemma.tools.registry import default_registry
from docgemma.ui.card import approval_markdown, checks_markdown, fields, header_markdown
from tests.unit.test_page_session import App

NO_FINDINGS = "No findings"
SKIPPED = "NOT CHECKED — DOSE RANGE: no dose range is known here for digoxin"


def _card(checks: list[dict[str, Any]], warnings: list[str] = (), severe: list[str] = ()) -> ApprovalCard:  # type: ignore[assignment]
    return {  # type: ignore[typeddict-item]
        "kind": "approval", "tool": "prescribe_medication", "label": "Prescription", "card_id": "a-1-b",
        "args": {"patient_id": "p1", "medication_name": "digoxin", "dosage": "125 micrograms", "frequency": "once daily"},
        "warnings": list(warnings), "severe": list(severe), "override_required": bool(severe), "notice": "",
        "checks": checks, "patient": {"id": "p1", "name": "Ann Lee", "birth_date": "1950-01-01", "gender": "female"},
    }


RAN = [{"name": "Patient identity", "ran": True, "detail": "on the record, named by name and birth date"},
       {"name": "Allergies and drug classes", "ran": True, "detail": "ingredients and classes: WHO ATC, FDA EPC"},
       {"name": "Duplicate and same-class orders", "ran": True, "detail": "the patient's active medication orders"}]


def test_no_findings_only_when_every_listed_check_ran() -> None:
    """It said "No findings — the safety checks found nothing" when no check had data (no dose range known)."""
    clean = header_markdown(_card(RAN), [])
    assert NO_FINDINGS in clean
    assert "**Checked:** patient identity (on the record, named by name and birth date) · allergies and drug " \
           "classes (WHO ATC, FDA EPC) · duplicate and same-class orders" in clean
    skipped = _card([*RAN, {"name": "Dose range", "ran": False, "detail": "no dose range is known here for digoxin"}],
                    warnings=[SKIPPED])
    for text in (header_markdown(skipped, fields(skipped)[1]), approval_markdown(skipped)):
        assert NO_FINDINGS not in text
        # Said once, in the checks list, as a warning with its reason; not again beside the dose field.
        assert text.count("digoxin;") + text.count("for digoxin") == 1
        assert 'class="check-warning">Warning</span> **Not checked: dose range** — no dose range is known here for ' \
               "digoxin" in text
    assert all(not f.checks for f in fields(skipped)[0])
    nothing_listed = _card([])
    assert NO_FINDINGS not in header_markdown(nothing_listed, [])
    assert "No safety checks are listed" in checks_markdown(nothing_listed)


def test_a_severe_skipped_check_is_said_as_severe() -> None:
    severe = "NOT CHECKED — ALLERGIES AND DRUG CLASSES: the product could not be resolved"
    card = _card([{"name": "Allergies and drug classes", "ran": False, "detail": "the product could not be resolved"}],
                 warnings=[severe], severe=[severe])
    assert 'class="check-severe">Severe</span> **Not checked: allergies and drug classes**' in checks_markdown(card)
    assert "**Checked:** nothing" in checks_markdown(card)


@pytest.mark.parametrize(("tool", "args"), [
    ("prescribe_medication", {"medication_name": "loratadine", "dosage": "10 mg", "frequency": "once daily"}),
    ("add_allergy", {"substance": "latex", "reaction": "urticaria"}),
    ("save_clinical_note", {"note_type": "progress", "note_text": "stable, review in 4 weeks"}),
])
def test_every_write_lists_its_checks_with_the_patient_identity_first(tmp_path: Path, tool: str,
                                                                      args: dict[str, str]) -> None:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    pid = ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    review = record_write_check(ehr)(default_registry()[tool], {"patient_id": pid, **args}, None)
    checks = review.get("checks", [])
    assert checks and checks[0]["name"] == "Patient identity" and checks[0]["ran"]
    assert all(c["detail"] for c in checks)


ALLERGY = "Add a penicillin allergy for Amina Okafor"


def _shown(app: App, thread: str, text: str) -> dict[Any, Any]:
    history = app.on.restore(thread)[app.page.chatbot]
    return app.last(app.on.respond({"text": text, "files": []}, history, thread, None))


def _form(app: App, shown: dict[Any, Any]) -> list[str]:
    return [str(shown[b]["value"]) for b in app.page.field_boxes]


def test_approve_writes_what_the_form_shows_and_says_what_changed(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    page, thread = app.page, "web-" + "4" * 32
    shown = _shown(app, thread, "Add a latex allergy (urticaria) for Amina Okafor")
    labels = [shown[b]["label"] for b in page.field_boxes if shown[b]["visible"]]
    values = _form(app, shown)
    values[labels.index("Reaction")] = "anaphylaxis"
    values[labels.index("Severity (mild, moderate or severe)")] = "severe"
    # The page's Approve: the form's values become the /approve JSON, then the decision.
    sent = app.on.fields_json(thread, shown[page.approval_args], *values)
    again = app.last(app.on.decide("approve", sent, shown[page.chatbot], thread, shown[page.card_ref]))
    # Issue 43: values the card did not show are checked and shown on a new card first, never written unseen.
    assert again[page.approval]["visible"] and again[page.card_ref] != shown[page.card_ref]
    assert not [a for a in app.allergies("Okafor") if "latex" in str(a).lower()]
    sent = app.on.fields_json(thread, again[page.approval_args], *_form(app, again))
    done = app.last(app.on.decide("approve", sent, again[page.chatbot], thread, again[page.card_ref]))
    [allergy] = app.allergies("Okafor")[-1:]
    assert allergy["reaction"][0]["manifestation"][0]["text"] == "anaphylaxis"
    assert allergy["criticality"] == "high" or allergy["reaction"][0].get("severity") == "severe"
    chat = done[page.chatbot][-1]["content"]
    assert "Written to the record" in chat and "urticaria → anaphylaxis" in chat and "— → severe" in chat
    app.store.close()


def test_override_sends_the_forms_values_and_an_api_approve_without_values_approves_the_card(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    page, thread = app.page, "web-" + "5" * 32
    shown = _shown(app, thread, "Prescribe amoxicillin 500 mg three times daily for Grace Mensah")
    values = _form(app, shown)
    values[4] = "otitis media"  # Indication
    form = app.on.fields_json(thread, shown[page.approval_args], *values)
    again = app.last(app.on.decide("override", "tolerated a challenge", shown[page.chatbot], thread,
                                   shown[page.card_ref], form=form))
    assert again[page.approval]["visible"], "the changed values are shown on a new card before any write"
    form = app.on.fields_json(thread, again[page.approval_args], *_form(app, again))
    done = app.last(app.on.decide("override", "tolerated a challenge", again[page.chatbot], thread,
                                  again[page.card_ref], form=form))
    pid = app.ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    [order] = [r for r in app.ehr.client.search("MedicationRequest", [("patient", pid)])
               if "amoxicillin" in r["medicationCodeableConcept"]["text"]]
    assert order["reasonCode"][0]["text"] == "otitis media" and "— → otitis media" in done[page.chatbot][-1]["content"]
    # An API client's /approve sends "{}" (or the card's own JSON, or nothing): the card as shown.
    thread2 = "web-" + "6" * 32
    card = _shown(app, thread2, ALLERGY)
    bad = app.last(app.on.decide("approve", "not json", card[page.chatbot], thread2, card[page.card_ref]))
    assert "not valid JSON" in bad[page.decision_note] and app.allergies("Okafor") == []
    approved = app.last(app.on.decide("approve", "{}", card[page.chatbot], thread2, card[page.card_ref]))
    assert "Written to the record" in approved[page.chatbot][-1]["content"] and len(app.allergies("Okafor")) == 1
    app.store.close()


def _from_browser(history: list[Any]) -> list[Any]:
    """The chat as the page sends it back: through Gradio's Chatbot (each message's text as content blocks)."""
    import gradio as gr

    chatbot = gr.Chatbot()
    return list(chatbot.preprocess(chatbot.postprocess(history)))


@pytest.mark.parametrize("decision", ["edit", "approve"])
def test_after_a_new_card_the_approval_line_is_said_once(tmp_path: Path, decision: str) -> None:
    """Issue 27: after "Re-check with my changes" the chat said "Approval needed…" twice (and so did an Approve whose
    changed values brought a new finding). The page sends the chat back as Gradio's content blocks, not strings."""
    app = App.start(tmp_path)
    page, thread = app.page, "web-" + "7" * 32
    shown = _shown(app, thread, "Prescribe loratadine 10 mg once daily for Grace Mensah")
    changed = json.dumps({"medication_name": "amoxicillin"})  # a penicillin for a patient with penicillin anaphylaxis
    out = app.last(app.on.decide(decision, changed, _from_browser(shown[page.chatbot]), thread, shown[page.card_ref]))
    chat = [json.dumps(m["content"]) for m in _from_browser(out[page.chatbot])]
    assert sum("Approval needed before writing" in c for c in chat) == 1
    assert ("run again" if decision == "edit" else "checked again") in chat[-1]
    pid = app.ehr.client.search("Patient", [("name", "Mensah")])[0]["id"]
    assert app.ehr.client.search("MedicationRequest", [("patient", pid)]) == []
    app.store.close()


def test_an_unreadable_record_is_said_once_as_severe_and_lists_no_check_as_run(tmp_path: Path) -> None:
    from docgemma.ehr.client import FhirClientError
    from docgemma.tools.review_types import WriteReview

    class Unreadable:
        def compartment(self, patient_id: str) -> list[dict[str, Any]]:
            raise FhirClientError(503, "down")

    spec = default_registry()["save_clinical_note"]
    review: WriteReview = record_write_check(Unreadable())(spec, {"patient_id": "p1", "note_type": "progress",  # type: ignore[arg-type]
                                                                   "note_text": "stable"}, None)
    card = _card(list(review.get("checks", [])), warnings=review.get("warnings", []), severe=review.get("severe", []))
    text = header_markdown(card, fields(card)[1])
    assert NO_FINDINGS not in text and "**Checked:** nothing" in text
    assert text.count("could not be read, so allergies") == 1
    assert 'class="check-severe">Severe</span> **Not checked: the patient record**' in text


def test_the_decision_apis_keep_their_inputs() -> None:
    """The form's values reach Approve and Override through page steps and a State: an API client's calls are
    unchanged (Override's form values must not become a parameter, nor rename its first one)."""
    from docgemma.agent.assistant import Assistant
    from docgemma.agent.demo_llm import demo_llm
    from docgemma.ui.page import build_demo
    from docgemma.workspace import Workspace

    named = build_demo(Workspace(Assistant(demo_llm(), default_registry()), None), "Demo rules · CPU"
                       ).get_api_info()["named_endpoints"]
    for api in ("/approve", "/edit", "/override", "/reject"):
        assert [p["parameter_name"] for p in named[api]["parameters"]] == ["edited", "history", "card"], api


def test_a_source_with_a_colon_inside_its_parenthesis_is_shown_whole() -> None:
    """Seen in the browser: "dose range (once weekly, 7.5-25 mg) / ISMP)" (the source cut at its inner colon)."""
    from docgemma.ui.card import _source

    detail = "US label (methotrexate tablets: once weekly, 7.5-25 mg) / ISMP"
    assert _source(detail) == detail
    assert _source("ingredients and classes: WHO ATC, FDA EPC") == "WHO ATC, FDA EPC"
