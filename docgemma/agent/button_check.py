"""A button is pressed as its words: the page sends them as the next message. So a button is offered only when the
rules decide those words surely, in this conversation, as the action it is for; a request the rules would not be
sure of, pressed, was itself "not recognised" (issue 46: "Show Fatma Bello's blood pressure", "Does ramipril interact
with Grace Okonkwo's current medications?")."""

from __future__ import annotations

from collections.abc import Iterable

from docgemma.agent import decision
from docgemma.agent.patterns import request_part
from docgemma.agent.prefill import prefill
from docgemma.agent.state import AgentState
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.roster import PatientRoster, with_known_patients
from docgemma.tools.extract import asks_about_own_medicines
from docgemma.tools.registry import ToolRegistry, ToolSpec
from docgemma.tools.routing import Role


def decided_as(text: str, state: AgentState, registry: ToolRegistry, roster: PatientRoster | None = None) -> str | None:
    """The action the rules and the router surely take on ``text`` as the next message; None when unsure. With
    ``roster``, the message's patients are read against the record's list as INPUT_ASSEMBLY reads them (a button
    "Show Fatma Bello's blood pressure" was sure without it and unsure, pressed, with it)."""
    decided = decision.decide(_probe(text, state, roster), registry)
    return decided["label"] if decided["sure"] else None


def _probe(text: str, state: AgentState, roster: PatientRoster | None = None) -> AgentState:
    """The conversation's state as it would be with ``text`` as the next message (its entities read by code)."""
    entities = extract_entities(text, has_image=state["extracted_entities"]["has_image"])
    patients = roster() if roster is not None else None
    if patients is not None:
        entities = with_known_patients(entities, request_part(text), patients)
    return {**state, "user_query": text, "extracted_entities": entities}


def fills(spec: ToolSpec, text: str, state: AgentState) -> bool:
    """True when code reads every argument the tool needs off ``text`` (a demo model makes no call for arguments:
    "Find recruiting clinical trials for AF ablation", pressed, asked which condition). A write shows what is
    missing on its card; a connection's start and "her medications" are read off the record."""
    if spec.writes or Role.CONNECTIONS in spec.roles or asks_about_own_medicines(text):
        return True
    known = prefill(spec, _probe(text, state))
    return all(name in known for name, info in spec.args_model.model_fields.items()
               if info.is_required() and name != "patient_id")


def leads_to(text: str, tool: str, state: AgentState, registry: ToolRegistry,
             roster: PatientRoster | None = None) -> bool:
    """True when ``text``, pressed, surely runs ``tool`` with the arguments code reads off it — or, for a record
    tool, the patient search that finds the patient it names first (the record tool follows on the one found)."""
    action = decided_as(text, state, registry, roster)
    if action == tool:
        return fills(registry[tool], text, state)
    search = next((s.name for s in registry if s.patient_search), None)
    return action is not None and action == search and tool in registry and registry[tool].record


def leading(suggestions: Iterable[tuple[str, str]], state: AgentState, registry: ToolRegistry,
            roster: PatientRoster | None = None, limit: int = 3) -> list[str]:
    """Up to ``limit`` of ``suggestions`` (request, the tool it is for) that lead where they say, in order."""
    out: list[str] = []
    for text, tool in suggestions:
        if text not in out and leads_to(text, tool, state, registry, roster):
            out.append(text)
        if len(out) == limit:
            break
    return out
