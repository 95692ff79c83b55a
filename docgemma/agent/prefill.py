"""Deterministic argument prefill for TOOL_SELECT stage 2: the agent's state handed to the tool's own extractor
(``ToolSpec.extract``, in ``tools/extract.py``) as the ground-floor inputs it may read; and the arguments the
record gives: "her other meds" are the active patient's active medication orders, read by code, never listed by
the model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from docgemma.agent.record_check import RecordFacts
from docgemma.agent.state import AgentState
from docgemma.clinical.entities import DrugDictionary
from docgemma.fhir import display_text
from docgemma.tools.connection_start import connection_start
from docgemma.tools.extract import asks_about_own_medicines
from docgemma.tools.registry import ToolSpec
from docgemma.tools.routing import Request, Role

#: The most drugs one interaction check takes (``DrugInteractionArgs.drug_names``).
MAX_DRUGS = 6


@dataclass(frozen=True)
class FromRecord:
    """Arguments read from the active patient's record, and the timeline's word on them."""

    args: dict[str, Any]
    note: str
    #: The question for the clinician when the record gave no other drug (none on record, or unreadable).
    ask: str = ""


def request_of(state: AgentState) -> Request:
    """The message, its entities and the active patient."""
    return Request(state.get("user_query", ""), state["extracted_entities"], state.get("active_patient"))


def prefill(spec: ToolSpec, state: AgentState) -> dict[str, Any]:
    """The arguments of ``spec`` that code can read off the message (possibly none); a patient search among two
    names, one of them the active patient's, is for the other ("Show me Joseph Mwangi's medications but label them
    as Grace Mensah's" with Grace Mensah active)."""
    args = spec.prefill(request_of(state))
    if spec.patient_search and "name" in spec.args_model.model_fields and "name" not in args:
        other = _the_other_patient(state)
        if other is not None:
            args = {**args, "name": other}
    return args


def _the_other_patient(state: AgentState) -> str | None:
    """The one name of several in the message that is not the active patient's."""
    active = state.get("active_patient")
    names = state["extracted_entities"]["patient_names"]
    if active is None or len(names) < 2:
        return None
    own = {w.lower() for w in active["name"].split()}
    others = [n for n in names if not own & {w.lower() for w in n.split()}]
    return others[0] if len(others) == 1 and len(others) < len(names) else None


def wants_own_medicines(spec: ToolSpec, state: AgentState) -> bool:
    """True when ``spec`` checks drugs together and the message asks about the active patient's own medicines with
    the drugs it names ("doxycycline and her other meds")."""
    return (Role.INTERACTIONS in spec.roles and "drug_names" in spec.args_model.model_fields
            and bool(state.get("active_patient")) and bool(state["extracted_entities"]["drug_mentions"])
            and asks_about_own_medicines(state.get("user_query", "")))


def _medicine_name(text: str) -> str:
    found = DrugDictionary.find(text)
    return found[0] if found else text.strip()


def own_medicines(spec: ToolSpec, state: AgentState, record_facts: RecordFacts | None) -> FromRecord | None:
    """``drug_names`` = the drugs named + the active patient's active medication orders (from the record), or None
    when the message does not ask for them. A record that cannot be read gives the named drugs alone (the check
    then asks the clinician for the other drug) and says so; more than six drugs in all are cut to six, said too."""
    if not wants_own_medicines(spec, state):
        return None
    patient = state["active_patient"]
    assert patient is not None
    named = list(state["extracted_entities"]["drug_mentions"])
    facts = record_facts(patient) if record_facts is not None else None
    listed = " and ".join(named)
    if facts is None:
        note = f"{patient['name']}'s medications could NOT be read from the record"
        return FromRecord({"drug_names": named}, note, f"{note}, so {listed} was not checked against them. Which "
                          "medicines should it be checked against?")
    theirs = [_medicine_name(display_text(m)) for m in facts.medications]
    drugs = list(dict.fromkeys([*named, *(t for t in theirs if t)]))
    if len(theirs) == 0 or len(drugs) < 2:
        note = f"{patient['name']} has no other active medication orders on record"
        return FromRecord({"drug_names": named}, note, f"{note}. Which medicines should {listed} be checked against?")
    note = f"{patient['name']}'s active medications from the record: {', '.join(dict.fromkeys(theirs))}"
    if len(drugs) > MAX_DRUGS:
        note += f"; only the first {MAX_DRUGS} of {len(drugs)} drugs are checked in one call"
    return FromRecord({"drug_names": drugs[:MAX_DRUGS]}, note)


def connection_item(spec: ToolSpec, state: AgentState, record_facts: RecordFacts | None) -> FromRecord | None:
    """The record item a connection question names in words ("why is she on amlodipine?", "what is linked to her
    CKD?"), read off the active patient's record by code (:func:`docgemma.tools.connection_start.connection_start`);
    None when the tool is not the connections tool, the message gives the item's id, or the record names no such
    item (the clinician is then asked which item)."""
    patient = state.get("active_patient")
    if Role.CONNECTIONS not in spec.roles or patient is None or record_facts is None or "fhir_id" in prefill(spec, state):
        return None
    facts = record_facts(patient)
    if facts is None:
        return None
    drugs = list(state["extracted_entities"]["drug_mentions"])
    start = connection_start(state.get("user_query", ""), drugs, [*facts.medications, *facts.conditions,
                                                                  *facts.observations])
    if start is None and drugs:
        # "why is she on amlodipine?" and no amlodipine order: said so, never another item in its place.
        note = f"{', '.join(drugs)} is not among {patient['name']}'s active medication orders on record"
        return FromRecord({}, note, f"{note}, so the record holds nothing it connects to. Which record item (a "
                          "condition, medication or result) do you mean?")
    if start is None:
        return None
    return FromRecord({"fhir_id": start.fhir_id, "resource_type": start.resource_type},
                      f"the record item from {patient['name']}'s record: {start.name} ({start.resource_type})")


def from_record(spec: ToolSpec, state: AgentState, record_facts: RecordFacts | None) -> FromRecord | None:
    """The arguments the active patient's record gives: her medications for "her other meds", the item a
    connection question names."""
    return own_medicines(spec, state, record_facts) or connection_item(spec, state, record_facts)
