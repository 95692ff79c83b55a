"""The issue 26 phrasings on the EMBEDDED default (SmolLM2-135M via the transformers backend, the demo record with
its roster wired in as the app wires it; Grace Mensah active): each is either done right by code, or answered with
buttons of which one is decided surely as the right action — never a button for a patient other than the one named,
never the active patient's record in place of the one named, and no model call on any of them (the model is not fit
to judge medical requests, so it is never asked)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from docgemma.agent import decision
from docgemma.agent.approval import ApprovalCard
from docgemma.agent.assistant import Assistant
from docgemma.agent.events import TurnResult
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.roster import with_known_patients
from docgemma.config import Settings
from docgemma.ehr.service import Ehr
from docgemma.tools.binding import bind_tools, knowledge_clients
from docgemma.tools.ehr_tools import record_facts, record_write_check
from docgemma.tools.patient_roster import record_roster
from docgemma.tools.registry import default_registry
from tests.fixture_api import handler
from tests.integration.named_patient import Demo, demo_patients

pytestmark = pytest.mark.slow
REG = default_registry()


@dataclass(frozen=True)
class Case:
    message: str
    #: The right first action.
    tool: str
    #: The patient the answer must be about (demo MRN); None: the active patient.
    patient: str | None = None
    #: Arguments the action done must have (a check on each, by name).
    args: dict[str, Callable[[Any], bool]] = field(default_factory=dict)
    #: The active patient (demo MRN).
    active: str = "DG-1003"  # Grace Mensah


CASES = [
    # the six everyday phrasings of the issue
    Case("she's got a chest infection, thinking co-amoxiclav 625 three times a day for five days", "prescribe_medication",
         args={"medication_name": lambda v: "amoxicillin" in str(v)}),
    Case("ok what about doxycycline 100mg bd for 5 days then", "prescribe_medication",
         args={"medication_name": lambda v: v == "doxycycline"}),
    Case("switch to Amina Okafor. how are her kidneys doing?", "search_patient", patient="DG-1001"),
    Case("how are her kidneys doing?", "query_patient_data"),
    Case("should I worry about metformin with that eGFR?", "check_drug_safety",
         args={"drug_name": lambda v: v == "metformin"}),
    Case("record that she gets a rash with sulfa drugs", "add_allergy", args={"substance": lambda v: v == "sulfonamides"}),
    # the interaction with her own medicines, the list from the record (no model call for it): Amina Okafor has three
    # active orders (Grace Mensah none: the turn would ask which medicines)
    Case("is there any interaction between doxycycline and her other meds?", "check_drug_interactions",
         args={"drug_names": lambda v: len(v) >= 2 and v[0] == "doxycycline"}, active="DG-1001"),
    # another patient named in lower case, by record number, by reference, by name and birth date
    Case("does amina okafor have any allergies?", "search_patient", patient="DG-1001"),
    Case("Open the chart for patient DG-1003", "get_patient_chart"),
    Case("Patient/{ref} allergies?", "query_patient_data", patient="DG-1001"),
    Case("James Wilson born 1988-11-30", "search_patient"),
    # the oracle cases
    Case("He's on clopidogrel and aspirin after his stent. Check interactions between clopidogrel, aspirin, and "
         "pantoprazole.", "check_drug_interactions",
         args={"drug_names": lambda v: {"clopidogrel", "aspirin", "pantoprazole"} <= set(v)}),
    Case("His B12 came back at 98. Folate is normal. Check safety profile of cyanocobalamin injection.",
         "check_drug_safety", args={"drug_name": lambda v: v == "cyanocobalamin"}),
    Case("Start atorvastatin 40 mg once nightly", "prescribe_medication",
         args={"frequency": lambda v: ("once" in str(v) and "night" in str(v).lower()) or v == "once daily at night"}),
]



def _first_tool(result: TurnResult | ApprovalCard) -> tuple[str | None, dict[str, Any]]:
    if isinstance(result, dict):  # a write stops at its approval card
        return result["tool"], dict(result["args"])
    return (result.tools[0]["tool"], dict(result.tools[0].get("args") or {})) if result.tools else (None, {})


def _button_action(text: str, active: Demo, ehr: Ehr) -> str | None:
    """The action a button's words are surely decided as, in the same conversation (None when unsure)."""
    roster = record_roster(ehr)()
    assert roster is not None
    entities = with_known_patients(extract_entities(text), text, roster)
    state: Any = {"user_query": text, "extracted_entities": entities, "conversation": [],
                  "active_patient": {"id": active.id, "name": active.name}}
    decided = decision.decide(state, REG)
    return decided["label"] if decided["sure"] else None


def run_case(assistant: Assistant, ehr: Ehr, case: Case, thread: str) -> str:
    """One phrasing in a fresh conversation; returns "done" or "asked" (and asserts everything the module says)."""
    patients = demo_patients(ehr)
    by_mrn = {p.mrn: p for p in patients}
    active = by_mrn[case.active]
    named = by_mrn[case.patient] if case.patient else active
    message = case.message.replace("{ref}", by_mrn["DG-1001"].id)
    assistant.set_active_patient(thread, {"id": active.id, "name": active.name})
    result = assistant.run_turn(thread, message)
    timeline = assistant.state(thread)["timeline"]
    assert sum(int(e.get("llm_calls") or 0) for e in timeline) == 0, (message, timeline)
    tool, args = _first_tool(result)
    if tool is not None:
        assert tool == case.tool, (message, tool)
        if "patient_id" in args:
            assert args["patient_id"] == named.id, (message, args)  # never the active patient in place of the one named
        if tool == "search_patient" and case.patient:
            assert named.name.split()[-1].lower() in str(args.get("name", "")).lower(), (message, args)
        for name, ok in case.args.items():
            assert ok(args.get(name)), (message, name, args.get(name))
        return "done"
    assert isinstance(result, TurnResult), message
    assert result.follow_ups, (message, result.answer)
    others = [p.name for p in patients if p.name != named.name]
    for text in result.follow_ups:
        assert not any(o in text for o in others), (message, text)  # never a button for another patient
        if case.patient:
            assert "this patient" not in text, (message, text)  # the active patient is not the one named
    actions = [_button_action(text, active, ehr) for text in result.follow_ups]
    assert case.tool in actions, (message, result.follow_ups, actions)
    return "asked"


def test_the_issue_phrasings_on_the_embedded_default_are_done_or_asked_with_the_right_button(
        embedded: Any, tmp_path: Path) -> None:
    ehr = Ehr.embedded(tmp_path / "record.sqlite")
    clients = knowledge_clients(Settings(), transport=httpx.MockTransport(handler), record=ehr)
    assistant = Assistant(embedded, bind_tools(default_registry(), clients),
                          patient_context=ehr.patient_context, patient_roster=record_roster(ehr),
                          record_facts=record_facts(ehr), write_check=record_write_check(ehr))
    outcomes = {case.message: run_case(assistant, ehr, case, f"phrasing-{n}") for n, case in enumerate(CASES)}
    assert len(outcomes) == len(CASES)
