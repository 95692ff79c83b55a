"""explore_connections: what one item of a patient's record references and what references it."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field

from docgemma.clinical.record_concepts import record_item
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import Ehr
from docgemma.ehr.summary import note_text
from docgemma.ehr.validate import tolerant
from docgemma.fhir import display_text, patient_of
from docgemma.tools.args import PatientId, ResourceType, ToolArgs
from docgemma.tools.extract import patient_only
from docgemma.tools.outcome import ToolOutcome, failure, success
from docgemma.tools.record_io import fail, line, unreadable
from docgemma.tools.record_tool import record_read
from docgemma.tools.routing import Request, Role
from docgemma.tools.spec import ToolContext, ToolSpec


class ExploreConnectionsArgs(ToolArgs):
    patient_id: str = PatientId
    fhir_id: str = Field(min_length=1, max_length=64, description="ID of the resource to explore from")
    resource_type: ResourceType


def connection_item(request: Request) -> dict[str, Any]:
    """The patient, and the record item to explore when the message names it by id (:func:`record_item`:
    "what was the aspirin (751be8bb-…) prescribed for?" → that MedicationRequest). An id given that way names
    the item, not a patient: the patient is then the active one."""
    found = record_item(request.query)
    if not found:
        return patient_only(request)
    item, kind = found
    others = [i for i in request.entities["patient_ids"] if i.lower() != item.lower()]
    active = request.active_patient["id"] if request.active_patient else None
    patient = others[0] if len(others) == 1 else active if not others else None
    out: dict[str, Any] = {"patient_id": patient} if patient else {}
    out.update(fhir_id=item, resource_type=kind)
    return out


def _references(value: Any, path: str = "") -> list[tuple[str, str]]:
    """Every (field path, reference) inside a resource: the generic edges of the record graph."""
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "reference" and isinstance(item, str) and "/" in item:
                out.append((path, item))
            else:
                out += _references(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for item in value:
            out += _references(item, path)
    return out


def explore_connections(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Everything the item references and everything that references it, grouped by field. One generic
    traversal: no code per relationship type."""
    a: Any = args
    try:
        resources = ehr.compartment(a.patient_id)
    except FhirClientError as exc:
        return fail(exc, a.patient_id)
    key = f"{a.resource_type}/{a.fhir_id}"

    def connections(records: list[dict[str, Any]], skipped: int) -> dict[str, Any] | None:
        by_ref = {f"{r['resourceType']}/{r['id']}": r for r in records}
        node = by_ref.get(key)
        if node is None or patient_of(node) != a.patient_id:
            return None
        groups: dict[str, list[str]] = defaultdict(list)
        for field, ref in _references(node):
            target = by_ref.get(ref)
            if target is not None and target["resourceType"] != "Patient":
                groups[f"{field} →"].append(line(target))
        for other in records:
            for field, ref in _references(other):
                if ref == key:
                    entry = line(other)
                    if other["resourceType"] == "DocumentReference" and note_text(other):
                        entry += "\n    Note: " + " ".join(note_text(other).split())[:600]
                    groups[f"← {other['resourceType']}.{field}"].append(entry)
        patient = next((display_text(r) for r in records if r["resourceType"] == "Patient"), None)
        return {"item": line(node), "connections": {k: v[:10] for k, v in groups.items()}, "unreadable": skipped,
                "patient": patient}

    data = tolerant(connections, resources)
    return failure("not_found") if data is None else success(data)


def format_connections(data: dict[str, Any]) -> str:
    """The node, then each group of connections."""
    lines = [f"Connections of {data['item']}:"]
    if not data["connections"]:
        lines.append("No connected records.")
    for group, items in data["connections"].items():
        lines.append(f"{group} ({len(items)}):")
        lines += [f"  {item}" for item in items]
    return "\n".join(lines) + unreadable(data)


SPEC = ToolSpec(
    "explore_connections",
    "Clinical Connections",
    "Show what is clinically connected to one item of a patient's record (a condition's treating "
    "medications and care plans, an encounter's observations and notes, what a medication was "
    "prescribed for). Requires the item's ID and type. Use when a clinician asks how findings relate.",
    ExploreConnectionsArgs,
    "What is connected to condition cond-123 in this patient's record?",
    arg_max_tokens=224,
    result_cap=3000,
    extract=connection_item,
    **record_read(Role.CONNECTIONS, explore_connections, format_connections),
)
