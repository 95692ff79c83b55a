"""Writes: exactly once, always checked. One approval card is consumed once whichever
button or call comes first; an edit is a new card with every check re-run; a severe allergy conflict needs an
override with a reason; doses are parsed and implausible ones flagged; the card names the patient once and
the chat confirms what was written."""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.agent.events import TurnDone
from docgemma.ehr.service import Ehr, validate_resource
from docgemma.ehr.summary import compile_summary
from docgemma.llm.fake import Call, FakeLLM
from docgemma.tools.binding import ToolClients, bind_tools
from docgemma.tools.ehr_tools import record_write_check
from docgemma.tools.registry import ToolContext, ToolRegistry, default_registry
from docgemma.ui.card import approval_markdown
from docgemma.ui.messages import apply_event, final_markdown


@pytest.fixture
def ehr(tmp_path: Path) -> Ehr:
    return Ehr.embedded(tmp_path / "record.sqlite")


# Imported where used (not here), so that on the code before this change each test fails on its own behaviour.
ALREADY_HANDLED = (
    "This approval card was already handled (approved, edited or rejected by an earlier click or call); "
    "nothing more was written."
)


def registry(ehr: Ehr) -> ToolRegistry:
    return bind_tools(default_registry(), ToolClients(record=ehr))


def pid_of(ehr: Ehr, name: str) -> str:
    return str(ehr.client.search("Patient", [("name", name)])[0]["id"])


def count(ehr: Ehr, kind: str, pid: str) -> int:
    return len(ehr.client.search(kind, [("patient", pid)]))


def orders(ehr: Ehr, pid: str, drug: str) -> list[dict[str, Any]]:
    """The patient's MedicationRequests for ``drug`` (demo patients have orders of their own)."""
    return [r for r in ehr.client.search("MedicationRequest", [("patient", pid)])
            if drug in r.get("medicationCodeableConcept", {}).get("text", "").lower()]


def prescriber(args: dict[str, Any]) -> FakeLLM:
    """A thread-safe model that proposes ``args`` as a prescription and answers briefly (no queue to race on)."""

    def respond(call: Call) -> Any:
        name = call.schema.__name__ if call.schema is not None else ""
        if name == "IntentClassification":
            return {"intent": "TOOL_NEEDED", "task_summary": "prescribe", "suggested_tool": "prescribe_medication"}
        if name == "ToolSelection":
            return {"tool_name": "prescribe_medication"}
        if name == "ResultAssessment":
            return {"quality": "success_rich"}
        if name == "RetryStrategy":
            return {"strategy": "retry_same"}
        if call.schema is not None:  # stage 2 asks only for the fields code could not read off the message
            return {k: v for k, v in args.items() if k in call.schema.model_fields}
        return "Done."

    return FakeLLM(responder=respond)


PROPOSALS: dict[int, dict[str, Any]] = {}


def assistant_for(ehr: Ehr, args: dict[str, Any]) -> Assistant:
    assistant = Assistant(prescriber(args), registry(ehr), patient_context=ehr.patient_context,
                          write_check=record_write_check(ehr))
    PROPOSALS[id(assistant)] = args
    return assistant


def propose(assistant: Assistant, thread: str, pid: str) -> dict[str, Any]:
    """The clinician asks for the order in words (code reads drug, dose and frequency off the message)."""
    args = PROPOSALS[id(assistant)]
    card = assistant.run_turn(
        thread, f"Prescribe {args['medication_name']} {args['dosage']} {args['frequency']} for patient {pid}"
        + (f", {args['notes']}" if args.get("notes") else ""))
    assert isinstance(card, dict) and card["kind"] == "approval", card
    return card


def test_the_message_is_the_one_the_assistant_sends() -> None:
    from docgemma.agent.approval import ALREADY_HANDLED as sent

    assert sent == ALREADY_HANDLED


# ── 1. one card, one write ──────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("with_card_id", [True, False], ids=["ui-sends-card-id", "api-without-card-id"])
def test_concurrent_approve_edit_reject_consume_the_card_once(ehr: Ehr, with_card_id: bool) -> None:
    pid = pid_of(ehr, "Garcia")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "lisinopril", "dosage": "10 mg",
                                    "frequency": "once daily"})
    decisions = [{"action": "approve"}, {"action": "edit", "args": {"dosage": "20 mg"}}, {"action": "approve"},
                 {"action": "edit", "args": {"dosage": "5 mg"}}, {"action": "reject"}, {"action": "approve"}]
    writes_seen = 0
    for trial in range(4):
        thread = f"t{trial}"
        card = propose(assistant, thread, pid)
        before = count(ehr, "MedicationRequest", pid)
        barrier = threading.Barrier(len(decisions))
        outcomes: list[Any] = [None] * len(decisions)

        def click(i: int, card: dict[str, Any] = card, thread: str = thread, barrier: threading.Barrier = barrier,
                  outcomes: list[Any] = outcomes) -> None:
            decision = {**decisions[i], **({"card_id": card["card_id"]} if with_card_id else {})}
            barrier.wait()
            outcomes[i] = assistant.resume(thread, decision)

        threads = [threading.Thread(target=click, args=(i,)) for i in range(len(decisions))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        handled = [o for o in outcomes if isinstance(o, TurnResult) and o.answer == ALREADY_HANDLED]
        applied = [o for o in outcomes if not (isinstance(o, TurnResult) and o.answer == ALREADY_HANDLED)]
        if with_card_id:  # every click names the card it was made on: exactly one of them is applied
            assert len(applied) == 1 and len(handled) == len(decisions) - 1, outcomes
        rejected = any(isinstance(o, TurnResult) and "declined" in o.answer for o in applied)
        new = count(ehr, "MedicationRequest", pid) - before
        assert new <= 1
        pending = assistant.pending_approval(thread)
        if pending is not None:  # an edit won: its new card, with the edited dose, waits for its own approval
            assert pending["card_id"] != card["card_id"] and new == 0
            assert isinstance(assistant.resume(thread, {"action": "approve", "card_id": pending["card_id"]}), TurnResult)
            new = count(ehr, "MedicationRequest", pid) - before
        assert new == (0 if rejected else 1), outcomes  # one card: exactly one order, none if Reject came first
        writes_seen += new
        assert assistant.pending_approval(thread) is None
    orders = [r for r in ehr.client.search("MedicationRequest", [("patient", pid)]) if "lisinopril" in str(r)]
    provenance = [p for p in ehr.compartment(pid) if p["resourceType"] == "Provenance"]
    assert len(orders) == writes_seen and len(provenance) == writes_seen  # one Provenance per write, no more


def test_one_action_writes_once_and_a_replay_with_other_arguments_is_not_already_saved(ehr: Ehr) -> None:
    """Two processes resuming the same action (one with edited arguments) still write once; the one with other
    arguments is refused, naming the resource written, never told "already saved" (issue 43: the key is the card's
    identity and its exact arguments)."""
    pid = pid_of(ehr, "Garcia")
    spec = registry(ehr)["prescribe_medication"]
    context = ToolContext(scope="action-0123456789abcdef")
    before = count(ehr, "MedicationRequest", pid), count(ehr, "Provenance", pid)
    first = spec.run(spec.args_model(patient_id=pid, medication_name="lisinopril", dosage="10 mg", frequency="daily"), context)
    second = spec.run(spec.args_model(patient_id=pid, medication_name="lisinopril", dosage="20 mg", frequency="daily"), context)
    assert first["data"]["created"] is True and second["status"] == "error"
    assert first["data"]["resource"] in str(second["details"]) and "nothing more was written" in str(second["details"])
    assert (count(ehr, "MedicationRequest", pid), count(ehr, "Provenance", pid)) == (before[0] + 1, before[1] + 1)
    replay = spec.run(spec.args_model(patient_id=pid, medication_name="lisinopril", dosage="10 mg", frequency="daily"),
                      context)
    assert replay["data"]["created"] is False and replay["data"]["resource"] == first["data"]["resource"]


def test_two_writers_racing_on_one_action_write_one_resource_and_one_provenance(tmp_path: Path) -> None:
    """Two record services on the same file (two processes) approve the same action at once, one with edited
    arguments: one MedicationRequest and one Provenance per action, every time."""
    first, second = Ehr.embedded(tmp_path / "r.sqlite"), Ehr.embedded(tmp_path / "r.sqlite")
    pid = pid_of(first, "Garcia")
    before = count(first, "MedicationRequest", pid), count(first, "Provenance", pid)
    specs = [registry(e)["prescribe_medication"] for e in (first, second)]
    for trial in range(6):
        barrier = threading.Barrier(2)

        def write(i: int, trial: int = trial, barrier: threading.Barrier = barrier) -> None:
            args = specs[i].args_model(patient_id=pid, medication_name="lisinopril", dosage=f"{10 + 10 * i} mg",
                                       frequency="daily")
            barrier.wait()
            specs[i].run(args, ToolContext(scope=f"action-{trial}"))

        threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert count(first, "MedicationRequest", pid) - before[0] == 6
    assert count(first, "Provenance", pid) - before[1] == 6


def test_a_decision_on_a_replaced_card_changes_nothing(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Garcia")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "lisinopril", "dosage": "10 mg",
                                    "frequency": "once daily"})
    card = propose(assistant, "t", pid)
    edited = assistant.resume("t", {"action": "edit", "args": {"dosage": "20 mg"}, "card_id": card["card_id"]})
    assert isinstance(edited, dict) and edited["args"]["dosage"] == "20 mg"
    late = assistant.resume("t", {"action": "approve", "card_id": card["card_id"]})  # the click on the old card
    assert isinstance(late, TurnResult) and late.answer == ALREADY_HANDLED
    assert orders(ehr, pid, "lisinopril") == [] and assistant.pending_approval("t") is not None


# ── 2. an edit is a new card, every check re-run ───────────────────────────────────────────────────


def test_edit_to_a_conflicting_drug_shows_a_new_card_and_writes_nothing(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mensah")  # penicillin anaphylaxis
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "loratadine", "dosage": "10 mg",
                                    "frequency": "once daily"})
    card = propose(assistant, "t", pid)
    assert not any("ALLERGY" in w for w in card["warnings"]) and not card["override_required"]
    new_card = assistant.resume("t", {"action": "edit", "args": {"medication_name": "amoxicillin", "dosage": "500 mg",
                                                                 "frequency": "three times daily"}})
    assert isinstance(new_card, dict), "an edit must be shown as a new card, not written"
    assert new_card["args"]["medication_name"] == "amoxicillin" and new_card["card_id"] != card["card_id"]
    assert any(w.startswith("ALLERGY CONFLICT") and "penicillin" in w for w in new_card["warnings"])
    assert new_card["override_required"] and "run again" in new_card["notice"]
    assert count(ehr, "MedicationRequest", pid) == 0
    refused = assistant.resume("t", {"action": "approve"})
    assert isinstance(refused, dict) and count(ehr, "MedicationRequest", pid) == 0


def test_edit_that_creates_a_duplicate_or_implausible_dose_is_flagged(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Okafor")  # on metformin already
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "amlodipine", "dosage": "5 mg",
                                    "frequency": "once daily"})
    card = propose(assistant, "t", pid)
    assert not any(w.startswith(("DUPLICATE", "IMPLAUSIBLE")) for w in card["warnings"])
    new_card = assistant.resume("t", {"action": "edit", "args": {"medication_name": "metformin", "dosage": "5000000 mg",
                                                                 "frequency": "every minute"}})
    assert isinstance(new_card, dict)
    assert any(w.startswith("DUPLICATE ORDER") for w in new_card["warnings"])
    assert any(w.startswith("IMPLAUSIBLE DOSE") for w in new_card["warnings"])
    assert any(w.startswith("IMPLAUSIBLE FREQUENCY") for w in new_card["warnings"])


# ── 3. a severe conflict needs an override with a reason ───────────────────────────────────────────


def test_severe_conflict_refuses_plain_approval_and_records_the_override(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mensah")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "amoxicillin", "dosage": "500 mg",
                                    "frequency": "three times daily"})
    card = propose(assistant, "t", pid)
    assert card["override_required"] and card["severe"] and "(SEVERE)" in card["severe"][0]
    assert "Anaphylaxis" in card["severe"][0]
    again = assistant.resume("t", {"action": "approve"})
    assert isinstance(again, dict) and "Plain approval refused" in again["notice"]
    assert "Plain approval refused" in approval_markdown(again)
    assert count(ehr, "MedicationRequest", pid) == 0
    no_reason = assistant.resume("t", {"action": "override", "reason": "  "})
    assert isinstance(no_reason, dict) and count(ehr, "MedicationRequest", pid) == 0
    reason = "tolerated amoxicillin challenge in allergy clinic 2024"
    result = assistant.resume("t", {"action": "override", "reason": reason})
    assert isinstance(result, TurnResult)
    orders = ehr.client.search("MedicationRequest", [("patient", pid)])
    assert len(orders) == 1 and any(reason in n["text"] for n in orders[0]["note"])
    provenance = [p for p in ehr.compartment(pid) if p["resourceType"] == "Provenance"]
    assert len(provenance) == 1 and reason in provenance[0]["reason"][0]["text"]
    assert result.writes and reason in result.writes[0]
    chat = apply_event([], TurnDone(result))[-1]["content"]
    assert "Written to the record" in chat and reason in chat
    assert f"MedicationRequest/{orders[0]['id']}" not in chat  # the record reference stays in the audit, not the chat


def test_mild_allergy_conflict_is_a_warning_not_an_override(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Garcia")
    registry(ehr)["add_allergy"].run(
        registry(ehr)["add_allergy"].args_model(patient_id=pid, substance="ibuprofen", reaction="rash", severity="mild"),
        ToolContext(scope="allergy-1"),
    )
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "ibuprofen", "dosage": "400 mg",
                                    "frequency": "every 6 hours as needed"})
    card = propose(assistant, "t", pid)
    assert any(w.startswith("ALLERGY CONFLICT") for w in card["warnings"]) and not card["override_required"]
    assert isinstance(assistant.resume("t", {"action": "approve"}), TurnResult)
    assert len(orders(ehr, pid, "ibuprofen")) == 1


# ── 4. doses parsed, implausible ones flagged; an unknown patient is one clear error ───────────────


def test_dose_and_frequency_are_parsed_into_structured_fhir() -> None:
    from docgemma.clinical.dosing import dosage_instruction, parse_dose, parse_frequency

    dosage = dosage_instruction("500 mg", "three times daily", "oral")
    assert dosage["doseAndRate"][0]["doseQuantity"] == {"value": 500, "unit": "mg", "system": "http://unitsofmeasure.org",
                                                        "code": "mg"}
    assert dosage["timing"]["repeat"] == {"frequency": 3, "period": 1, "periodUnit": "d"}
    assert dosage["route"]["coding"][0]["code"] == "26643006" and dosage["text"] == "500 mg three times daily"
    assert parse_frequency("q6h") is not None and parse_frequency("q6h").interval_hours == 6  # type: ignore[union-attr]
    assert parse_frequency("every other day").per_day == 0.5  # type: ignore[union-attr]
    assert parse_frequency("bid").frequency == 2 and parse_frequency("whenever") is None  # type: ignore[union-attr]
    assert parse_dose("1 g").mg == 1000 and parse_dose("250 mcg").mg == 0.25  # type: ignore[union-attr]
    assert parse_dose("1/2 tablet").value == 0.5  # type: ignore[union-attr]
    ranged = dosage_instruction("500-1000 mg", "every 6 hours")
    assert ranged["doseAndRate"][0]["doseRange"]["high"]["value"] == 1000 and parse_dose("500-1000 mg").mg == 1000  # type: ignore[union-attr]
    prn = dosage_instruction("400 mg", "every 6 hours as needed")
    assert prn["asNeededBoolean"] is True and prn["timing"]["repeat"]["period"] == 6
    validate_resource({"resourceType": "MedicationRequest", "status": "active", "intent": "order",
                       "subject": {"reference": "Patient/x"}, "medicationCodeableConcept": {"text": "m"},
                       "dosageInstruction": [dosage, prn, ranged, dosage_instruction("10 mg", "once")]})


def test_implausible_orders_warn() -> None:
    from docgemma.clinical.dose_check import review_dose

    def dose_warnings(drug: str, dose: str, frequency: str) -> list[str]:
        return [f.text for f in review_dose((drug,), drug, dose, frequency).findings]

    absurd = dose_warnings("metformin", "5000000 mg", "every minute")
    assert any(w.startswith("IMPLAUSIBLE DOSE") for w in absurd)
    assert any(w.startswith("IMPLAUSIBLE FREQUENCY") for w in absurd)
    assert any(w.startswith("TOTAL DOSE ABOVE MAXIMUM") and "2,550 mg per day" in w for w in absurd)
    assert any("ABOVE MAXIMUM" in w for w in dose_warnings("acetaminophen", "1000 mg", "every 4 hours"))  # 6 g/day
    assert any("ABOVE MAXIMUM" in w for w in dose_warnings("warfarin", "50 mg", "once daily"))
    assert any(w.startswith("DOSE NOT UNDERSTOOD") for w in dose_warnings("metformin", "lots", "twice daily"))
    assert any(w.startswith("FREQUENCY NOT GIVEN") for w in dose_warnings("metformin", "500 mg", "not specified"))
    assert any(w.startswith("FREQUENCY NOT UNDERSTOOD") for w in dose_warnings("metformin", "500 mg", "whenever"))
    assert any(w.startswith("IMPLAUSIBLE DOSE") for w in dose_warnings("newdrug", "20 g", "once daily"))  # per unit
    for drug, dose, frequency in [("metformin", "1000 mg", "twice daily"), ("amoxicillin", "500 mg", "every 8 hours"),
                                  ("ibuprofen", "400 mg", "three times daily"), ("lisinopril", "10 mg", "once daily"),
                                  ("paracetamol", "1 g", "four times daily"), ("warfarin", "5 mg", "daily")]:
        assert dose_warnings(drug, dose, frequency) == [], (drug, dose, frequency)


def test_written_order_has_structured_dosage(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Garcia")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "lisinopril", "dosage": "10 mg",
                                    "frequency": "once daily", "notes": "oral, morning"})
    propose(assistant, "t", pid)
    assert isinstance(assistant.resume("t", {"action": "approve"}), TurnResult)
    [order] = orders(ehr, pid, "lisinopril")
    dosage = order["dosageInstruction"][0]
    assert dosage["doseAndRate"][0]["doseQuantity"]["value"] == 10 and dosage["timing"]["repeat"]["frequency"] == 1
    assert dosage["route"]["text"] == "Oral route"


def test_absurd_order_from_the_message_warns_on_the_card(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Okafor")
    assistant = Assistant(demo_llm(), registry(ehr), patient_context=ehr.patient_context, write_check=record_write_check(ehr))
    card = assistant.run_turn("t", f"Prescribe metformin 5000000 mg every 6 hours for patient {pid}")
    assert isinstance(card, dict)
    assert any(w.startswith("IMPLAUSIBLE DOSE") for w in card["warnings"]), card["warnings"]


def test_order_for_a_patient_that_does_not_exist_is_one_clear_error(ehr: Ehr) -> None:
    assistant = assistant_for(ehr, {"patient_id": "abc-999", "medication_name": "metformin", "dosage": "500 mg",
                                    "frequency": "twice daily"})
    total = ehr.client.http.get(f"{ehr.client.base_url}/MedicationRequest").json()["total"]
    result = assistant.run_turn("t", "Prescribe metformin 500 mg twice daily for patient abc-999")
    assert isinstance(result, TurnResult), "no approval card for a patient who is not on the record"
    assert "no patient 'abc-999' is on the record" in (result.clarification or result.answer)
    assert [t["tool"] for t in result.tools] == ["prescribe_medication"]  # once: no retry, no second card
    assert assistant.pending_approval("t") is None
    assert ehr.client.http.get(f"{ehr.client.base_url}/MedicationRequest").json()["total"] == total


# ── 5. the card names the patient once; the chat confirms the write; the summary flags a conflict ──


def test_card_names_the_patient_once_and_chat_confirms_the_write(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mensah")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "loratadine", "dosage": "10 mg",
                                    "frequency": "once daily"})
    history: list[dict[str, Any]] = []
    for event in assistant.stream_turn("t", f"Prescribe loratadine 10 mg once daily for patient {pid}"):
        history = apply_event(history, event)
    card = assistant.pending_approval("t")
    assert card is not None
    patient = card["patient"]
    assert patient["name"] == "Grace Mensah" and patient["birth_date"] == "1991-01-22"
    assert any("penicillin" in a and "Anaphylaxis" in a for a in patient["allergies"])
    assert "active_medications" in patient
    shown = approval_markdown(card)
    assert shown.count("Grace Mensah") == 1 and pid not in shown and "1991-01-22" in shown  # named, not by record id
    assert "Allergy to penicillin" in shown
    chat = "\n".join(str(m["content"]) for m in history)
    assert chat.count("Approval needed") == 1 and "Medication name: loratadine" not in chat  # the card is not repeated
    result = assistant.resume("t", {"action": "approve"})
    assert isinstance(result, TurnResult)
    order = ehr.client.search("MedicationRequest", [("patient", pid)])[0]
    # The confirmation names the patient written to, who is now the active patient.
    # Then every value written, field by field (nothing was changed from the proposal: no "Changed" line).
    assert result.writes == [f"Saved for Grace Mensah: loratadine 10 mg once daily [MedicationRequest/{order['id']}]\n"
                             "As written: Drug: loratadine · Dose: 10 mg · Frequency: once daily"]
    assert result.active_patient == {"id": pid, "name": "Grace Mensah"}
    assert f"MedicationRequest/{order['id']}" not in final_markdown(result)  # kept in result.writes, not shown


def test_summary_safety_flags_an_active_drug_the_patient_is_allergic_to() -> None:
    patient = {"resourceType": "Patient", "id": "p1", "name": [{"given": ["Ann"], "family": "Lee"}], "gender": "female",
               "birthDate": "1970-01-01"}
    allergy = {"resourceType": "AllergyIntolerance", "id": "a1", "patient": {"reference": "Patient/p1"},
               "clinicalStatus": {"coding": [{"code": "active"}]}, "criticality": "high",
               "code": {"text": "Allergy to penicillin"}}
    order = {"resourceType": "MedicationRequest", "id": "m1", "status": "active", "intent": "order",
             "subject": {"reference": "Patient/p1"}, "authoredOn": "2026-11-01",
             "medicationCodeableConcept": {"text": "Amoxicillin 500 MG Oral Capsule"}}
    other = {**order, "id": "m2", "medicationCodeableConcept": {"text": "lisinopril 10 MG Oral Tablet"}}
    safety = compile_summary([patient, allergy, order, other], date(2026, 11, 22)).facts["safety"]
    flagged = [s for s in safety if s.startswith("ALLERGY CONFLICT WITH ACTIVE DRUG")]
    assert len(flagged) == 1 and "Amoxicillin" in flagged[0] and "penicillin" in flagged[0]


def test_a_demo_model_is_not_asked_to_fill_a_write(ehr: Ehr) -> None:
    """A model not fit for medicine writes nothing that goes into the record: a write's required field the
    message does not state stays "not specified" on the card (for the clinician to edit), not model text."""
    pid = pid_of(ehr, "Mensah")
    llm = FakeLLM(name="demo", clinically_meaningful=False)  # no replies queued: asking it would fail the turn
    assistant = Assistant(llm, registry(ehr), patient_context=ehr.patient_context,
                          write_check=record_write_check(ehr))
    card = assistant.run_turn("t", f"Save a clinical note for patient {pid}")
    assert isinstance(card, dict), "the write reaches its card"
    assert card["args"]["note_text"] == "not specified"
    assert not [c for c in llm.calls if c.kind == "json" and c.schema and "note_text" in c.schema.model_fields]


def test_an_order_for_a_child_is_checked_by_age_and_recent_weight(ehr: Ehr, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seen in the browser: a six-year-old (Kofi Asante, 21.4 kg on 2026-10-12 in the demo record) got adult doses
    with one click (paracetamol 1 g qds, codeine, aspirin); the card only said weight was not checked. Now the dose
    is checked in mg/kg against his recent weight (shown with its date), age contraindications are severe, and
    with no recent weight the card asks for one (severe)."""
    from docgemma.clinical import body_weight

    monkeypatch.setattr(body_weight, "today", lambda: date(2026, 11, 26))
    kofi, grace = pid_of(ehr, "Asante"), pid_of(ehr, "Mensah")
    spec = registry(ehr)["prescribe_medication"]
    check = record_write_check(ehr)

    def card(patient: str, drug: str, dose: str, frequency: str) -> Any:
        return check(spec, {"patient_id": patient, "medication_name": drug, "dosage": dose,
                            "frequency": frequency}, None)

    usual = card(kofi, "paracetamol", "250 mg", "four times daily")
    [weight] = [c for c in usual["checks"] if c["name"] == "Dose by weight"]
    assert weight["ran"] and "11.7 mg/kg per dose" in weight["detail"] and "21.4 kg on 2026-10-12" in weight["detail"]
    assert not usual["severe"]
    adult = card(grace, "paracetamol", "250 mg", "four times daily")
    assert not adult["severe"] and not any(c["name"] == "Dose by weight" for c in adult["checks"])
    one_gram = card(kofi, "paracetamol", "1 g", "four times daily")
    assert any(w.startswith("DOSE ABOVE MG/KG: 1,000 mg is 46.7 mg/kg per dose for 21.4 kg on 2026-10-12")
               for w in one_gram["severe"])
    for drug, dose, frequency in [("codeine", "30 mg", "every 4 hours"), ("aspirin", "300 mg", "qds")]:
        assert any(w.startswith(f"AGE CONTRAINDICATION: {drug}") for w in card(kofi, drug, dose, frequency)["severe"])
    assert any("mg/kg" in w for w in card(kofi, "gentamicin", "500 mg", "once daily")["severe"])
    monkeypatch.setattr(body_weight, "today", lambda: date(2027, 6, 1))  # the weight is now 8 months old
    stale = card(kofi, "paracetamol", "250 mg", "four times daily")
    assert any(w.startswith("NOT CHECKED — DOSE BY WEIGHT: no recent body weight") and "21.4 kg on 2026-10-12" in w
               for w in stale["severe"])
