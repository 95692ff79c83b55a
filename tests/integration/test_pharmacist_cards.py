"""Issue 42 through the whole turn, on the demo record and the rule-based default (offline: no FDA label client):
the pregnant patient's ACE inhibitor, the DOAC with an NSAID, an invented drug, and a drug asked about for a named
patient who is not the open one. Each finding is on the card (or the answer) with its source, a plain Approve is
refused, and nothing reaches the record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from docgemma.agent.assistant import Assistant, TurnResult
from docgemma.agent.demo_llm import demo_llm
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.ehr_tools import record_facts, record_write_check
from docgemma.tools.patient_roster import record_roster
from docgemma.tools.registry import default_registry


def offline(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("no route to host (a clinic without internet)", request=request)


@pytest.fixture
def ehr(tmp_path: Path) -> Ehr:
    return Ehr.embedded(tmp_path / "record.sqlite")


def bot(ehr: Ehr) -> Assistant:
    registry = bind_tools(default_registry(), knowledge_clients(Settings(), transport=httpx.MockTransport(offline),
                                                                record=ehr))
    return Assistant(demo_llm(), registry, patient_context=ehr.patient_context,
                     record_facts=record_facts(ehr), write_check=record_write_check(ehr),
                     patient_roster=record_roster(ehr))


def patient(ehr: Ehr, family: str) -> dict[str, str]:
    found = ehr.client.search("Patient", [("name", family)], limit=5)[0]
    return {"id": str(found["id"]), "name": " ".join([*found["name"][0].get("given", []), found["name"][0]["family"]])}


def orders(ehr: Ehr, pid: str) -> list[str]:
    return [str(r.get("medicationCodeableConcept", {}).get("text")) for r in ehr.compartment(pid)
            if r.get("resourceType") == "MedicationRequest"]


def card(assistant: Assistant, thread: str, who: dict[str, str], message: str) -> dict[str, Any]:
    assistant.set_active_patient(thread, who)  # type: ignore[arg-type]
    out = assistant.run_turn(thread, message)
    assert isinstance(out, dict) and out["kind"] == "approval", out
    return dict(out)


@pytest.mark.parametrize(("family", "message", "heading", "source"), [
    ("Bello", "Prescribe lisinopril 10 mg once daily", "PREGNANCY (CONTRAINDICATED)", "Boxed Warning"),
    ("Bello", "Prescribe Cozaar 50 mg once daily", "PREGNANCY (CONTRAINDICATED)", "Boxed Warning"),
    ("Oduya", "Prescribe naproxen 500 mg twice daily", "INTERACTION WITH AN ACTIVE ORDER (MAJOR)", "Eliquis"),
    ("Okafor", "Prescribe alendronate 70 mg once weekly", "KIDNEY FUNCTION (SEVERE)", "Fosamax"),
    ("Okafor", "Prescribe potassium chloride 40 mmol IV push once daily", "NEVER EVENT — IV POTASSIUM", "BNF"),
    ("Okafor", "Prescribe Trexall 10 mg once daily", "WEEKLY MEDICINE", "ISMP"),
])
def test_a_plain_approve_writes_nothing_and_the_card_names_its_finding(ehr: Ehr, family: str, message: str,
                                                                       heading: str, source: str) -> None:
    assistant, who = bot(ehr), patient(ehr, family)
    before = orders(ehr, who["id"])
    shown = card(assistant, "t", who, message)
    hits = [w for w in shown["severe"] if w.startswith(heading)]
    assert hits and source in hits[0] and shown["override_required"], shown["warnings"]
    names = {c["name"] for c in shown["checks"]}
    assert {"Pregnancy and breastfeeding", "Kidney function", "Interactions with active medicines",
            "Route and rate"} <= names
    again = assistant.resume("t", {"action": "approve", "card_id": shown["card_id"]})
    assert isinstance(again, dict) and again["kind"] == "approval", again  # refused: the card again, with a notice
    assert orders(ehr, who["id"]) == before


def test_an_ordinary_order_for_the_same_pregnant_patient_is_written(ehr: Ehr) -> None:
    assistant, who = bot(ehr), patient(ehr, "Bello")
    shown = card(assistant, "t", who, "Prescribe paracetamol 500 mg four times daily")
    assert not shown["override_required"], shown["severe"]
    done = assistant.resume("t", {"action": "approve", "card_id": shown["card_id"]})
    assert isinstance(done, TurnResult) and done.writes
    assert any("paracetamol" in o for o in orders(ehr, who["id"]))


def test_an_invented_drug_gets_no_card_and_a_question(ehr: Ehr) -> None:
    assistant, who = bot(ehr), patient(ehr, "Okafor")
    assistant.set_active_patient("t", who)  # type: ignore[arg-type]
    before = orders(ehr, who["id"])
    out = assistant.run_turn("t", "Prescribe blorptazine 50 mg once daily")
    assert isinstance(out, TurnResult), out
    assert "blorptazine" in out.answer and "Which medicine did you mean?" in out.answer, out.answer
    assert orders(ehr, who["id"]) == before


def test_a_drug_asked_about_for_a_named_patient_who_is_not_open_is_checked_against_her_record(ehr: Ehr) -> None:
    """With Kofi Asante open, co-amoxiclav asked about for Grace Mensah (penicillin allergy on record) was "NOT
    checked ... not the active patient". Her record is read by name and the allergy said, for her, by name."""
    assistant, kofi = bot(ehr), patient(ehr, "Asante")
    assistant.set_active_patient("t", kofi)  # type: ignore[arg-type]
    out = assistant.run_turn("t", "is co-amoxiclav safe for Grace Mensah?")
    assert isinstance(out, TurnResult), out
    first = out.answer.split("\n")[0]
    assert first.startswith("Safety:") and "Grace Mensah" in first and "penicillin" in first, out.answer
    assert "NOT checked" not in out.answer


def test_the_summary_does_not_say_inr_for_a_doac(ehr: Ehr) -> None:
    safety = ehr.summary(patient(ehr, "Oduya")["id"]).facts["safety"]
    line = next(s for s in safety if s.startswith("ANTICOAGULATED"))
    assert "apixaban" in line and "INR does not monitor it" in line and "check INR" not in line
    warfarin = ehr.summary(patient(ehr, "Mwangi")["id"]).facts["safety"]
    assert any(s.startswith("ANTICOAGULATED (warfarin)") and "check INR" in s for s in warfarin)


def test_nkda_is_written_as_the_coded_entry_and_a_denial_writes_nothing(ehr: Ehr) -> None:
    assistant, who = bot(ehr), patient(ehr, "Mwangi")
    shown = card(assistant, "t", who, "Record allergy for Joseph Mwangi: NKDA")
    assert shown["args"]["substance"] == "NKDA", shown["args"]
    done = assistant.resume("t", {"action": "approve", "card_id": shown["card_id"]})
    assert isinstance(done, TurnResult) and done.writes
    written = [r for r in ehr.compartment(who["id"]) if r.get("resourceType") == "AllergyIntolerance"]
    assert [r["code"]["coding"][0]["code"] for r in written] == ["409137002"]
    # The panel lists the statement under Allergies, never as a safety flag ("ALLERGY: No known drug allergy" was).
    facts = ehr.summary(who["id"]).facts
    assert facts["allergies"] == ["No known drug allergy"]
    assert not [s for s in facts["safety"] if s.startswith("ALLERGY")], facts["safety"]
    for i, message in enumerate(("denies any penicillin allergy, please document that", "sulfa - negative, record",
                                 "penicillin allergy label was removed (delabelled)")):
        assistant.set_active_patient(f"n{i}", who)  # type: ignore[arg-type]
        out = assistant.run_turn(f"n{i}", message)
        assert isinstance(out, TurnResult), (message, out)
    after = [r for r in ehr.compartment(who["id"]) if r.get("resourceType") == "AllergyIntolerance"]
    assert len(after) == 1


@pytest.mark.parametrize("message", ["Prescribe naproxen 500 mg twice daily - she also takes apixaban from her GP",
                                     "Prescribe ibuprofen 400 mg three times daily; already on rivaroxaban elsewhere"])
def test_an_order_is_checked_against_the_drugs_the_message_names(ehr: Ehr, message: str) -> None:
    """Issue 42, item 3: a drug the message names that the record does not hold (from another prescriber) is
    checked against the order too; a DOAC named beside an NSAID order interrupts the approval."""
    assistant, who = bot(ehr), patient(ehr, "Garcia")  # no anticoagulant on her record
    assistant.set_active_patient("t", who)  # type: ignore[arg-type]
    out = assistant.run_turn("t", message)
    assert isinstance(out, dict) and out["kind"] == "approval", out
    hits = [w for w in out["severe"] if w.startswith("INTERACTION WITH A DRUG YOUR MESSAGE NAMES (MAJOR)")]
    assert hits and out["override_required"], out["warnings"]
    assert any(c["name"] == "Interactions with drugs the message names" and c["ran"] for c in out["checks"])
