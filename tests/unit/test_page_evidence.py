"""What the page says after a turn follows what really happened: a record read that found nothing of a kind is
a fact of the record (high confidence); a write the clinician declined is their decision, not a failure; the
follow-up buttons offer only what this mode can do; a reopened conversation shows the live Sources line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.test_page_session import App

THREAD = "web-" + "e" * 32


def _say(app: App, thread: str, history: list[Any], text: str) -> dict[Any, Any]:
    return app.last(app.on.respond({"text": text, "files": []}, history, thread, None))


def test_nothing_of_a_kind_on_record_for_the_exact_patient_is_high_confidence(tmp_path: Path) -> None:
    """"Amina Okafor — no active allergies on record" said "Confidence: low": the empty read was taken for a
    look-up that found nothing."""
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    history = _say(app, THREAD, history, "Find patient Amina Okafor")[page.chatbot]
    shown = _say(app, THREAD, history, "what are her allergies?")
    answer = shown[page.chatbot][-1]["content"]
    assert "no active allergies on record" in answer
    assert "*Confidence: high*" in answer and "**Confidence:** high" in shown[page.timeline]
    missing = _say(app, THREAD, shown[page.chatbot], "Find patient Zebedee Nobody")  # a search with no match
    assert "Confidence: low" in missing[page.chatbot][-1]["content"]
    app.store.close()


def _reject(app: App, thread: str, history: list[Any]) -> dict[Any, Any]:
    card = app.on.workspace.pending(thread)
    assert card is not None
    return app.last(app.on.decide("reject", "", history, thread, card["card_id"]))


def test_a_rejected_write_reads_as_the_clinicians_decision_not_a_failure(tmp_path: Path) -> None:
    """After Reject the timeline said "Checking the result — failed" and "Handling a problem", and the answer
    "Confidence: low"."""
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    shown = _say(app, THREAD, history, "Prescribe amoxicillin 500 mg three times daily for Grace Mensah")
    rejected = _reject(app, THREAD, shown[page.chatbot])
    chat, timeline = rejected[page.chatbot], rejected[page.timeline]
    assert not [m for m in chat if m.get("metadata")]  # the steps are the timeline's (issue 46)
    told = timeline.replace("**", "")
    assert "Handling a problem" not in told and "failed" not in told and "handle the failure" not in told
    assert "Consulting: Prescription — declined by you" in told  # the technical details
    assert "Checking the result — declined by you" in told
    assert "Prescription — " in told and "→ declined by you: nothing written" in told  # the clinician's timeline
    assert "stop here: declined by you" in timeline
    answer = chat[-1]["content"]
    assert "you declined the Prescription" in answer
    # The patient search before the write is the turn's evidence: an exact match, read from the record.
    assert "Confidence: low" not in answer and "*Confidence: high*" in answer
    app.store.close()


def test_a_turn_that_was_only_a_declined_write_claims_no_confidence(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    history = _say(app, THREAD, history, "Find patient Amina Okafor")[page.chatbot]
    shown = _say(app, THREAD, history, "Record a latex allergy (urticaria) for the active patient")
    rejected = _reject(app, THREAD, shown[page.chatbot])
    answer = rejected[page.chatbot][-1]["content"]
    assert "you declined the" in answer and "Confidence" not in answer
    assert "**Confidence:** n/a" in rejected[page.timeline]
    app.store.close()


def test_an_allergy_conflict_is_said_once_on_the_card(tmp_path: Path) -> None:
    """The conflict's text was at the top of the card and again under the Drug field."""
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    shown = _say(app, THREAD, history, "Prescribe amoxicillin 500 mg three times daily for Grace Mensah")
    card = [shown[page.approval_md], *(str(c["value"]) for c in (shown[b] for b in page.field_checks))]
    text = "\n".join(card)
    assert text.count("Allergy conflict") == 1 and 'class="check-severe">Severe</span> Allergy conflict' in text
    assert card[0].index("Allergy conflict") < card[0].index("Grace Mensah")  # the first thing on the card
    app.store.close()


def test_offline_the_follow_ups_offer_only_the_patient_record() -> None:
    """Offline, the buttons offered FDA and literature look-ups while the page said those services were not
    reachable."""
    from docgemma.agent.answer import follow_ups
    from docgemma.tools.registry import default_registry
    from tests.unit.test_page import _state

    entities = {"patient_ids": [], "patient_names": [], "drug_mentions": ["warfarin"], "action_verbs": [],
                "has_image": False}
    grace = {"id": "gm-001", "name": "Grace Mensah"}
    asked = _state(user_query="Is warfarin safe?", extracted_entities=entities, active_patient=grace)
    registry = default_registry()
    assert follow_ups(asked, registry, offline=True) == ["Show the chart of Grace Mensah"]
    assert len(follow_ups(asked, registry)) == 3  # online, the knowledge look-ups are offered too
    assert follow_ups(_state(user_query="hello", scope="greeting"), registry, offline=True) == []
    assert follow_ups(_state(user_query="what now?", intent="DIRECT"), registry, offline=True) == []
    undecided = _state(user_query="do the thing", undecided=True, extracted_entities=entities)
    assert follow_ups(undecided, registry, offline=True) == []


def test_after_a_wrong_patient_id_nothing_unrelated_is_offered(tmp_path: Path) -> None:
    """After "no patient with id …" the one button was "Find recent studies on this topic"."""
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    shown = _say(app, THREAD, history, "Show the chart of patient 12345678-1234-1234-1234-123456789abc")
    assert "No patient with id" in shown[page.chatbot][-1]["content"]
    offered = [shown[b]["value"] for b in page.follow_buttons if shown[b]["visible"]]
    assert not any("studies" in q for q in offered)
    app.store.close()


def test_a_reopened_conversation_shows_the_same_sources_lines_as_live(tmp_path: Path) -> None:
    """After a reload, "Sources: the patient record of …" was missing under every record answer: the live line
    comes from the turn's tools, which the transcript did not keep."""
    app = App.start(tmp_path)
    page = app.page
    history = app.on.restore(THREAD)[page.chatbot]
    live = []
    for text in ("Find patient Grace Mensah", "what are her allergies?", "what are her current meds?"):
        history = _say(app, THREAD, history, text)[page.chatbot]
        live.append(history[-1]["content"])
    assert "Sources: the patient record (search by name)" in live[0]
    assert all("Sources: the patient record of Grace Mensah" in answer for answer in live[1:])
    app.store.close()

    again = App.start(tmp_path)  # a restarted process, the browser reloading the same conversation
    reopened = [m["content"] for m in again.on.restore(THREAD)[again.page.chatbot]]
    for answer in live:
        assert answer in reopened
    again.store.close()


def test_the_patient_list_says_what_to_do_and_its_button_is_not_the_pages_main_action(tmp_path: Path) -> None:
    """The list showed a blank box until a patient was chosen, and "Make active patient" was the page's most
    prominent button."""
    from docgemma.ui.page import CHOOSE_PATIENT, NO_MATCH

    app = App.start(tmp_path)
    page = app.page
    assert page.use.variant == "secondary"
    assert page.matches.value == "" and page.matches.choices[0] == (CHOOSE_PATIENT, "")
    listed = app.on.restore(THREAD)[page.matches]
    assert listed["value"] == "" and listed["choices"][0] == (CHOOSE_PATIENT, "")
    assert any(label.startswith("Grace Mensah") for label, _ in listed["choices"])
    none = app.on.search("Zebedee Nobody")
    assert none["choices"] == [(NO_MATCH, "")] and none["value"] == ""
    found = app.on.search("Mensah")
    assert found["value"].endswith("|Grace Mensah")
    # The empty choice makes nobody active.
    chosen = app.on.select("", app.on.restore(THREAD)[page.chatbot], THREAD)
    assert "Active patient is now" not in str(chosen[page.chatbot])
    app.store.close()


def test_a_wrong_patient_id_reads_in_clinical_words_in_the_steps() -> None:
    """The timeline showed "error: unknown_patient", "unknown_patient: the clinician must clarify" and
    "patient: , action: show" (the id dropped, its label left)."""
    import typing

    from docgemma.tools.outcome import ErrorType
    from docgemma.ui.wording import ERROR_WORDS, step_text

    assert set(typing.get_args(ErrorType)) <= set(ERROR_WORDS)  # every error type has its clinical words
    uuid = "12345678-1234-1234-1234-123456789abc"
    assert step_text(f"patient_ids: {uuid}, action_verbs: show") == "asked to: show"
    assert step_text("error: unknown_patient") == "failed: no such patient on record"
    assert "unknown_patient" not in step_text("unknown_patient: the clinician must clarify")
    assert step_text(f"patient_ids: {uuid}", lambda _: "Grace Mensah") == "patient: Grace Mensah"


def test_a_record_querys_kind_is_named_in_clinical_words() -> None:
    """The steps read "kind: MedicationRequest · status: active" and "kind: AllergyIntolerance"."""
    from docgemma.ui.wording import step_text

    assert step_text("arguments: {'resource_type': 'MedicationRequest', 'status': 'active'}") == \
        "reading: prescriptions · status: active"
    assert step_text("arguments: {'resource_type': 'AllergyIntolerance'}") == "reading: allergies"
    assert step_text("arguments: {'resource_type': 'Condition'}") == "reading: conditions"
