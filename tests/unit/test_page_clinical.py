"""The page as a clinician reads it and the approval decisions it sends:
a decision names the card shown and anything else is stale; an empty message keeps the screen; the card is a
form with its checks beside its fields; clinical words instead of internal ones; sentences true in each mode;
confidence that follows the evidence; a reopened conversation whole, past the prompt history's cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.approval import NO_PENDING, ApprovalCard
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.modes import capabilities, limits, mode_of
from docgemma.agent.nodes.synthesize import CONVERSATION_CAP
from docgemma.llm.fake import FakeLLM
from docgemma.tools.registry import default_registry
from docgemma.ui.card import approval_markdown, edited_args, fields, header_markdown
from docgemma.ui.messages import final_markdown, timeline_markdown
from docgemma.ui.page import STALE_CLICK
from docgemma.ui.wording import WORDS, step_text
from docgemma.workspace import tool_views
from tests.unit.test_page_session import App

#: The tools as the workspace hands them to the page (the running registry's: here the catalog's).
TOOLS = tool_views(default_registry())

ALLERGY = "Add a penicillin allergy for Amina Okafor"


def _card(app: App, thread: str, text: str) -> dict[Any, Any]:
    history = app.on.restore(thread)[app.page.chatbot]
    return app.last(app.on.respond({"text": text, "files": []}, history, thread, None))


def test_approve_decides_only_the_card_it_names(tmp_path: Path) -> None:
    """An Approve without the card's reference approved whatever card was current on the server: after an edit,
    a write the clinician had not seen (2 of 22 trials). Now it must name the card shown, or it is stale."""
    app = App.start(tmp_path)
    page, thread = app.page, "web-" + "1" * 32
    shown = _card(app, thread, ALLERGY)
    first = shown[page.card_ref]
    assert first and first == shown[page.card_id]
    for missing in ("", None):  # no card named (an API call that leaves it out): refused, nothing written
        note = app.last(app.on.decide("approve", "{}", shown[page.chatbot], thread, missing))[page.decision_note]
        assert STALE_CLICK in note and app.allergies("Okafor") == []
    edited = app.last(app.on.decide("edit", '{"substance": "penicillin", "reaction": "hives and 5000 mg"}',
                                    shown[page.chatbot], thread, first))
    second = edited[page.card_ref]
    assert second and second != first and "hives and 5000 mg" in str(edited[page.field_boxes[1]])
    stale = app.last(app.on.decide("approve", "{}", edited[page.chatbot], thread, first))  # the card before the edit
    assert STALE_CLICK in stale[page.decision_note] and app.allergies("Okafor") == []
    written = app.last(app.on.decide("approve", "{}", edited[page.chatbot], thread, second))
    assert "Written to the record" in written[page.chatbot][-1]["content"] and len(app.allergies("Okafor")) == 1
    again = app.last(app.on.decide("approve", "{}", written[page.chatbot], thread, second))
    assert NO_PENDING in again[page.decision_note] and len(app.allergies("Okafor")) == 1
    app.store.close()


def test_an_empty_message_keeps_the_screen_as_it_was(tmp_path: Path) -> None:
    """It replaced the last answer with "Please type a question"."""
    import gradio as gr

    app = App.start(tmp_path)
    thread = "web-" + "2" * 32
    answered = _card(app, thread, "What is hypertension?")[app.page.chatbot]
    for empty in ({"text": "", "files": []}, {"text": "   ", "files": []}, None):
        updates = list(app.on.respond(empty, answered, thread, None))  # type: ignore[arg-type]
        assert updates == [{app.page.chatbot: gr.skip()}]
    app.store.close()


CARD: ApprovalCard = {  # type: ignore[typeddict-item]
    "kind": "approval", "tool": "prescribe_medication", "label": "Prescription", "card_id": "abc-1-def",
    "args": {"patient_id": "p1", "medication_name": "metformin", "dosage": "5000000 mg", "frequency": "every minute",
             "duration": "7 days"},
    "warnings": ["DUPLICATE ORDER: an active order already exists: metformin 1000 MG",
                 "IMPLAUSIBLE DOSE: 5000000 mg per dose is above 3000 mg", "IMPLAUSIBLE FREQUENCY: 'every minute'",
                 "RENAL: eGFR 33"],
    "severe": ["IMPLAUSIBLE DOSE: 5000000 mg per dose is above 3000 mg"], "override_required": True,
    "patient": {"id": "p1", "name": "Joseph Mwangi", "birth_date": "1950-01-01", "gender": "male"}, "notice": "",
}


def test_the_card_is_a_form_with_each_check_beside_its_field_and_severity_in_words() -> None:
    shown, general = fields(CARD, TOOLS)
    assert [(f.label, f.value) for f in shown] == [("Drug", "metformin"), ("Dose", "5000000 mg"),
                                                  ("Frequency", "every minute"), ("Duration", "7 days"),
                                                  # optional ones left out are still fields
                                                  ("Indication", ""), ("Notes for the order", "")]
    by_label = {f.label: f for f in shown}
    assert by_label["Dose"].checks == []  # its severe finding is at the top, said once
    assert "IMPLAUSIBLE FREQUENCY" in by_label["Frequency"].checks[0].text
    assert "DUPLICATE ORDER" in by_label["Drug"].checks[0].text
    # a severe finding and a check that names no field are at the top
    assert [c.text for c in general] == ["IMPLAUSIBLE DOSE: 5000000 mg per dose is above 3000 mg", "RENAL: eGFR 33"]
    header = header_markdown(CARD, general)
    assert header.index("Severe") < header.index("Implausible dose") < header.index("Joseph Mwangi")
    text = approval_markdown(CARD, TOOLS)
    assert "⛔" not in text and "✅" not in text and '"dosage"' not in text  # words and colour, no raw JSON
    assert 'class="check-severe">Severe' in text and 'class="check-warning">Warning' in text
    assert edited_args(CARD, ["metformin", "500 mg", "twice daily", ""], TOOLS) == {
        "medication_name": "metformin", "dosage": "500 mg", "frequency": "twice daily", "duration": None}
    assert edited_args(CARD, ["", "", "", ""], TOOLS) is None  # nothing from the form: an API call's JSON is used


def test_a_refused_card_greys_out_approve(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    shown = _card(app, "web-" + "3" * 32, "Prescribe amoxicillin 500 mg three times daily for Grace Mensah")
    assert shown[app.page.approve]["interactive"] is False and shown[app.page.approve]["variant"] == "secondary"
    assert shown[app.page.override_row]["visible"]
    app.store.close()


def test_the_chat_and_timeline_speak_clinical_words(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    thread = "web-" + "4" * 32
    _card(app, thread, "Find patient Amina Okafor and check her chart")
    done = _card(app, thread, "What were her last kidney function results?")
    pid = app.ehr.client.search("Patient", [("name", "Okafor")])[0]["id"]
    shown = "\n".join(str(m["content"]) + str((m.get("metadata") or {}).get("title", ""))
                      for m in done[app.page.chatbot]) + done[app.page.timeline]
    for internal in [*WORDS, "prescribe_medication", "query_patient_data", "{'", "patient_id", "Observation "]:
        assert internal not in shown, internal
    assert pid not in done[app.page.timeline]  # the patient by name (a search result still lists the record id)
    assert "patient: Amina Okafor" in shown and "looking for: kidney function" in shown
    assert "the patient record of Amina Okafor" in done[app.page.timeline]  # the record is a source
    assert "Confidence: high" in shown  # facts read from the record at the first attempt
    app.store.close()


def test_step_words() -> None:
    assert step_text("tool result is error_retryable") == "tool result is failed, can be retried"
    assert step_text("error: offline") == "failed: not reachable (offline)"
    assert step_text("declined by the clinician; arguments: {}") == "declined by the clinician"
    assert step_text("decided by rule (demo model): retry_same (retry 1 of 2)").endswith("try again unchanged (retry 1 of 2)")


def test_every_mode_says_only_what_it_can_do() -> None:
    rules, medgemma = mode_of(demo_llm()), mode_of(FakeLLM(name="MedGemma 1.5 4B IT"))
    embedded = mode_of(FakeLLM(name="SmolLM2-135M-Instruct (embedded CPU demo model — not clinically meaningful)",
                               supports_images=False, clinically_meaningful=False))
    assert "runs on rules, without a language model" in limits(rules, False) and "small demo model" not in limits(rules, False)
    assert "SmolLM2-135M-Instruct, is a small demo model" in limits(embedded, False)
    offline = capabilities(embedded, True)
    assert "FDA drug safety" not in offline and "cannot be reached" in offline and "image" not in offline.split(".")[0]
    assert "FDA drug safety" not in limits(rules, True)
    online = capabilities(medgemma, False)
    assert "clinical questions" in online and "analysis of an attached medical image" in online
    assert "writes no medical text" not in online


def test_a_reopened_conversation_has_every_turn_past_the_prompt_cap(tmp_path: Path) -> None:
    app = App.start(tmp_path)
    thread = "web-" + "5" * 32
    questions = [f"What is hypertension? ({i})" for i in range(CONVERSATION_CAP // 2 + 3)]
    for q in questions:
        _card(app, thread, q)
    shown = app.on.restore(thread)
    text = "\n".join(str(m["content"]) for m in shown[app.page.chatbot])
    assert all(q in text for q in questions)
    assert "Writing the answer" in shown[app.page.timeline]  # the last turn's timeline, not "No turn yet"
    app.store.close()


def test_a_write_confirmation_says_its_kind_in_words_and_keeps_the_override_reason() -> None:
    from docgemma.agent.events import TurnResult

    result = TurnResult(answer="Done.", writes=[
        "Saved: amoxicillin 500 mg three times daily [MedicationRequest/abc-123] — severe allergy conflict "
        "overridden; reason: tolerated a challenge"])
    text = final_markdown(result)
    assert "MedicationRequest" not in text and "abc-123" not in text
    assert "prescription" in text and "tolerated a challenge" in text
    assert "✅" not in text and timeline_markdown(result) == "*No turn yet.*"


@pytest.mark.parametrize("text", ["I can help with", "Hello"])
def test_the_welcome_follows_the_mode(tmp_path: Path, text: str) -> None:
    app = App.start(tmp_path)
    welcome = app.on.welcome()
    assert text in welcome and "writes no medical text and reads no images" in welcome
    assert "You can attach an image" not in welcome  # the demo rules read no image
    app.store.close()


def test_a_service_this_machine_cannot_reach_is_said_so_and_not_retried() -> None:
    import httpx

    from docgemma.agent.assistant import Assistant, TurnResult
    from docgemma.config import Settings
    from docgemma.tools.binding import bind_tools, knowledge_clients
    from docgemma.tools.registry import default_registry

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("no route to host", request=request)

    registry = bind_tools(default_registry(), knowledge_clients(Settings(), transport=httpx.MockTransport(refuse)))
    result = Assistant(demo_llm(), registry).run_turn("t", "Check FDA warnings for dofetilide")
    assert isinstance(result, TurnResult)
    assert "RETRY" not in result.router_actions and "SKIP" in result.router_actions
    assert "cannot be reached from this machine" in result.answer and "try again shortly" not in result.answer
    assert [t["error_type"] for t in result.tools] == ["offline"]


def test_the_record_is_a_source_named_for_whom_it_was_read() -> None:
    from docgemma.agent.events import TurnResult
    from docgemma.ui.messages import source_line

    grace = {"id": "g1", "name": "Grace Mensah"}
    chart = TurnResult(answer="", active_patient=grace, tools=[{"tool": "get_patient_chart", "status": "success"}])
    search = TurnResult(answer="", active_patient=grace, tools=[{"tool": "search_patient", "status": "success"}])
    failed = TurnResult(answer="", active_patient=grace, tools=[{"tool": "get_patient_chart", "status": "error"}])
    assert source_line(chart, TOOLS) == "the patient record of Grace Mensah"
    assert source_line(search, TOOLS) == "the patient record (search by name)"  # not Grace's record: a search of names
    assert source_line(failed, TOOLS) == ""
    assert source_line(chart) == ""  # the record's tools are known by the running registry's kinds, not by name
