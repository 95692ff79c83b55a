"""Approve reads the form: values the clinician changed on the card without a re-check are validated and every
check is run again, and they are shown on a new card: an approval, or an override, covers only the values its card
showed (issue 43: an override of "no recent weight" wrote an unseen 1,000 mg). A new severe finding needs its own
override; the write is made once, under the pending action's key; the confirmation lists every value written and
each change."""

from __future__ import annotations

from pathlib import Path

import pytest

from docgemma.agent.assistant import TurnResult
from docgemma.ehr.service import Ehr
from docgemma.tools.ehr_tools import write_lookup
from docgemma.tools.registry import default_registry
from docgemma.ui.messages import final_markdown
from tests.integration.test_safe_writes import assistant_for, count, orders, pid_of, propose


@pytest.fixture
def ehr(tmp_path: Path) -> Ehr:
    return Ehr.embedded(tmp_path / "record.sqlite")


def test_approve_with_changed_values_shows_them_then_writes_them_once_under_the_actions_key(ehr: Ehr) -> None:
    """Approve ignored the form: the record got the proposal (5 days, no indication) and the chat said "the change
    you approved is in the record"."""
    pid = pid_of(ehr, "Garcia")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "lisinopril", "dosage": "10 mg",
                                    "frequency": "once daily"})
    card = propose(assistant, "t", pid)
    changes = {"dosage": "20 mg", "duration": "7 days", "indication": "hypertension"}
    shown = assistant.resume("t", {"action": "approve", "args": changes, "card_id": card["card_id"]})
    assert isinstance(shown, dict) and shown["args"]["dosage"] == "20 mg", "changed values are shown before a write"
    assert "Nothing was written" in shown["notice"] and orders(ehr, pid, "lisinopril") == []
    assert shown["args_hash"] != card["args_hash"]
    result = assistant.resume("t", {"action": "approve", "card_id": shown["card_id"],
                                    "args_hash": shown["args_hash"]})
    assert isinstance(result, TurnResult), result
    [order] = orders(ehr, pid, "lisinopril")
    dosage = order["dosageInstruction"][0]
    assert dosage["doseAndRate"][0]["doseQuantity"]["value"] == 20
    assert dosage["timing"]["repeat"]["boundsDuration"]["value"] == 7
    assert order["reasonCode"][0]["text"] == "hypertension"
    # The key of the write is the pending action's, not its (edited) arguments'.
    found = write_lookup(ehr, default_registry())("prescribe_medication", card["action_id"])
    assert found == f"MedicationRequest/{order['id']}"
    confirmation = final_markdown(result)
    assert "Dose: 10 mg → 20 mg" in confirmation and "Duration: — → 7 days" in confirmation
    assert "Indication: — → hypertension" in confirmation and "Dose: 20 mg" in confirmation
    again = assistant.resume("t", {"action": "approve", "card_id": shown["card_id"]})
    assert isinstance(again, TurnResult) and len(orders(ehr, pid, "lisinopril")) == 1  # written exactly once


def test_unchanged_values_or_none_approve_the_card_as_shown(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Garcia")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "lisinopril", "dosage": "10 mg",
                                    "frequency": "once daily"})
    card = propose(assistant, "t", pid)
    same = {k: v for k, v in card["args"].items() if k != "patient_id"} | {"duration": None, "notes": "",
                                                                          "dosage": " 10 mg "}
    result = assistant.resume("t", {"action": "approve", "args": same, "card_id": card["card_id"]})
    assert isinstance(result, TurnResult) and len(orders(ehr, pid, "lisinopril")) == 1
    assert "Changed from the proposal" not in result.writes[0] and "As written: Drug: lisinopril" in result.writes[0]


def test_a_change_that_makes_a_severe_finding_refuses_the_plain_approval(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mensah")  # penicillin anaphylaxis
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "loratadine", "dosage": "10 mg",
                                    "frequency": "once daily"})
    card = propose(assistant, "t", pid)
    assert not card["override_required"]
    refused = assistant.resume("t", {"action": "approve", "card_id": card["card_id"],
                                     "args": {"medication_name": "amoxicillin", "dosage": "500 mg"}})
    assert isinstance(refused, dict), "a new severe finding must not be written on a plain approval"
    assert count(ehr, "MedicationRequest", pid) == 0 and not orders(ehr, pid, "loratadine")
    assert refused["override_required"] and refused["args"]["medication_name"] == "amoxicillin"
    assert "Nothing was written" in refused["notice"] and "severe finding" in refused["notice"]
    assert "(allergy conflict; listed on this card)" in refused["notice"]
    assert refused["card_id"] != card["card_id"]
    plain = assistant.resume("t", {"action": "approve", "card_id": refused["card_id"]})
    assert isinstance(plain, dict) and count(ehr, "MedicationRequest", pid) == 0


def test_an_override_covers_only_the_findings_it_was_shown(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mensah")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "amoxicillin", "dosage": "500 mg",
                                    "frequency": "three times daily"})
    card = propose(assistant, "t", pid)
    assert card["override_required"]
    reason = "tolerated a supervised challenge"
    changed = assistant.resume("t", {"action": "override", "reason": reason, "card_id": card["card_id"],
                                     "args": {"dosage": "50000 mg"}})  # a severe dose finding the card did not show
    assert isinstance(changed, dict) and count(ehr, "MedicationRequest", pid) == 0
    assert changed["args"]["dosage"] == "50000 mg" and "override" in changed["notice"]
    assert "Nothing was written" in changed["notice"]


def test_an_override_with_a_harmless_change_shows_them_then_writes_them(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Mensah")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "amoxicillin", "dosage": "500 mg",
                                    "frequency": "three times daily"})
    card = propose(assistant, "t", pid)
    reason = "tolerated a supervised challenge"
    shown = assistant.resume("t", {"action": "override", "reason": reason, "card_id": card["card_id"],
                                   "args": {"indication": "otitis media"}})
    assert isinstance(shown, dict) and shown["override_required"] and count(ehr, "MedicationRequest", pid) == 0
    result = assistant.resume("t", {"action": "override", "reason": reason, "card_id": shown["card_id"]})
    assert isinstance(result, TurnResult), result
    [order] = orders(ehr, pid, "amoxicillin")
    assert order["reasonCode"][0]["text"] == "otitis media"
    assert "Indication: — → otitis media" in result.writes[0] and "reason: tolerated" in result.writes[0]


def test_a_change_with_a_new_warning_shows_a_new_card_and_writes_nothing(ehr: Ehr) -> None:
    pid = pid_of(ehr, "Okafor")  # on metformin already
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "amlodipine", "dosage": "5 mg",
                                    "frequency": "once daily"})
    card = propose(assistant, "t", pid)
    before = count(ehr, "MedicationRequest", pid)
    shown = assistant.resume("t", {"action": "approve", "card_id": card["card_id"],
                                   "args": {"medication_name": "metformin", "dosage": "500 mg"}})
    assert isinstance(shown, dict) and count(ehr, "MedicationRequest", pid) == before
    assert any(w.startswith("DUPLICATE ORDER") for w in shown["warnings"]) and not shown["override_required"]
    assert "Nothing was written" in shown["notice"] and "duplicate order; listed on this card)" in shown["notice"]
    result = assistant.resume("t", {"action": "approve", "card_id": shown["card_id"]})
    assert isinstance(result, TurnResult) and count(ehr, "MedicationRequest", pid) == before + 1
    assert "Drug: amlodipine → metformin" in result.writes[0]


@pytest.mark.parametrize(("args", "said"), [
    ({"dosage": ""}, "not applied"),  # a required value emptied
    ({"patient_id": "someone-else"}, "not applied"),  # no identifier
    ({"patient_id": "Mensah"}, "another patient"),  # another patient on record: never written without their card
])
def test_changes_that_cannot_be_approved_as_they_are_write_nothing(ehr: Ehr, args: dict[str, str], said: str) -> None:
    pid = pid_of(ehr, "Garcia")
    args = {k: pid_of(ehr, v) if v == "Mensah" else v for k, v in args.items()}
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "lisinopril", "dosage": "10 mg",
                                    "frequency": "once daily"})
    card = propose(assistant, "t", pid)
    out = assistant.resume("t", {"action": "approve", "card_id": card["card_id"], "args": args})
    assert isinstance(out, dict) and said in out["notice"] and "Nothing was written" in out["notice"]
    assert orders(ehr, pid, "lisinopril") == [] and orders(ehr, pid_of(ehr, "Mensah"), "lisinopril") == []


def test_an_override_of_a_childs_missing_weight_never_writes_an_unseen_dose(ehr: Ehr,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43's probe: paracetamol 120 mg for a child with no recent weight (severe); Override with a reason while
    the form said 1,000 mg wrote 1,000 mg (the finding's text names no dose, so the re-check saw nothing new)."""
    from datetime import date

    from docgemma.clinical import body_weight

    monkeypatch.setattr(body_weight, "today", lambda: date(2027, 6, 1))  # Kofi's weight is then 8 months old
    pid = pid_of(ehr, "Asante")
    assistant = assistant_for(ehr, {"patient_id": pid, "medication_name": "paracetamol", "dosage": "120 mg",
                                    "frequency": "three times daily"})
    card = propose(assistant, "t", pid)
    assert card["override_required"] and any("no recent body weight" in s for s in card["severe"])
    before = count(ehr, "MedicationRequest", pid)
    reason = "weight estimated, 120 mg checked"
    shown = assistant.resume("t", {"action": "override", "reason": reason, "card_id": card["card_id"],
                                   "args": {"dosage": "1000 mg"}})
    assert isinstance(shown, dict), "the unseen dose must not be written"
    assert count(ehr, "MedicationRequest", pid) == before and shown["args"]["dosage"] == "1000 mg"
    assert shown["card_id"] != card["card_id"] and "Nothing was written" in shown["notice"]
    # An API decision naming the digest of other values than the card's is refused the same way.
    stale = assistant.resume("t", {"action": "override", "reason": reason, "card_id": shown["card_id"],
                                   "args_hash": card["args_hash"]})
    assert isinstance(stale, dict) and count(ehr, "MedicationRequest", pid) == before
    assert "other values" in stale["notice"]
