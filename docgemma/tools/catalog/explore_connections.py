"""explore_connections: what one item of a patient's record references and what references it; without an item,
which of the patient's active medications is for which condition (the whole record's map)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field, model_validator

from docgemma.clinical.record_concepts import asks_medication_map, record_item
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import Ehr
from docgemma.ehr.summary import ACTIVE_CONDITION, note_text
from docgemma.ehr.validate import tolerant
from docgemma.fhir import concept_code, display_text, patient_of
from docgemma.tools.args import PatientId, ResourceType, ToolArgs
from docgemma.tools.extract import patient_only
from docgemma.tools.outcome import ToolOutcome, failure, success
from docgemma.tools.record_io import fail, line, unreadable
from docgemma.tools.record_tool import record_read
from docgemma.tools.routing import Request, Role
from docgemma.tools.spec import ToolContext, ToolSpec
from docgemma.tools.write_checks import active_orders


class ExploreConnectionsArgs(ToolArgs):
    patient_id: str = PatientId
    # Required but nullable: an item is named, or both are null for the whole record's map. Required, so that a
    # question that names an item code cannot find is asked about, never answered with the map in its place.
    fhir_id: str | None = Field(min_length=1, max_length=64,
                                description="ID of the resource to explore from; null (with resource_type null) to "
                                            "map the patient's active medications to the conditions they treat")
    resource_type: ResourceType | None

    @model_validator(mode="before")
    @classmethod
    def _nulls_dropped(cls, data: Any) -> Any:
        # Arguments pass through ``model_dump(exclude_none=True)`` on their way (stage 2, validation, MCP): both
        # absent is the nulls dropped, the whole record; one absent is still an error below.
        if isinstance(data, dict) and "fhir_id" not in data and "resource_type" not in data:
            return {**data, "fhir_id": None, "resource_type": None}
        return data


def connection_item(request: Request) -> dict[str, Any]:
    """The patient, and the record item to explore when the message names it by id (:func:`record_item`:
    "what was the aspirin (751be8bb-…) prescribed for?" → that MedicationRequest). An id given that way names
    the item, not a patient: the patient is then the active one. A question about the whole record ("which of her
    meds is for which problem?") names no item: both null."""
    found = record_item(request.query)
    if not found:
        whole = patient_only(request)
        if asks_medication_map(request.query):
            whole.update(fhir_id=None, resource_type=None)
        return whole
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


def _reasons(order: dict[str, Any], by_ref: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The conditions an order names as its reason (reasonReference), read from the record."""
    out = []
    for ref in order.get("reasonReference") or []:
        target = by_ref.get(str((ref or {}).get("reference", "")))
        if target is not None and target.get("resourceType") == "Condition":
            out.append(target)
    return out


def _reason_codes(order: dict[str, Any]) -> list[str]:
    """A reason given as a coded concept only (reasonCode): its text or first display."""
    out = []
    for concept in order.get("reasonCode") or []:
        text = concept.get("text") or next((c.get("display") for c in concept.get("coding") or [] if c.get("display")),
                                           None)
        if text:
            out.append(str(text))
    return out


def medication_map(records: list[dict[str, Any]], skipped: int) -> dict[str, Any]:
    """Each active medication order and the conditions the record gives as its reason; the active conditions no
    active order names. Only what the record states: an order without a recorded reason is said to have none,
    never matched to a condition by guess."""
    by_ref = {f"{r['resourceType']}/{r['id']}": r for r in records}
    treated: set[str] = set()
    rows = []
    for order in active_orders(records):
        reasons = _reasons(order, by_ref)
        treated |= {str(c["id"]) for c in reasons}
        rows.append({"medication": line(order),
                     "for": [line(c) for c in reasons] + [f"Condition {text} (a coded reason)"
                                                        for text in _reason_codes(order)]})
    untreated = [line(c) for c in records if c.get("resourceType") == "Condition"
                 and concept_code(c, "clinicalStatus") in ACTIVE_CONDITION and str(c["id"]) not in treated]
    patient = next((display_text(r) for r in records if r["resourceType"] == "Patient"), None)
    return {"medications": rows, "conditions_without_medication": untreated[:15], "unreadable": skipped,
            "patient": patient}


def explore_connections(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Everything the item references and everything that references it, grouped by field. One generic
    traversal: no code per relationship type. Without an item: :func:`medication_map`."""
    a: Any = args
    try:
        resources = ehr.compartment(a.patient_id)
    except FhirClientError as exc:
        return fail(exc, a.patient_id)
    if (a.fhir_id is None) != (a.resource_type is None):
        # An id without its type (or a type without an id) names no item: never read as "the whole record". Checked
        # here, not in the arguments' model, whose JSON schema (a constrained decoder's grammar) cannot say "both".
        return failure("invalid_args", missing_fields=["the record item's ID and its type together (or neither, for "
                                                       "the whole record)"])
    if a.fhir_id is None:
        return success(tolerant(medication_map, resources))
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
    """The node, then each group of connections (or the whole record's medications and what each is for)."""
    if "medications" in data:
        return _format_map(data)
    lines = [f"Connections of {data['item']}:"]
    if not data["connections"]:
        lines.append("No connected records.")
    for group, items in data["connections"].items():
        lines.append(f"{group} ({len(items)}):")
        lines += [f"  {item}" for item in items]
    return "\n".join(lines) + unreadable(data)


def _format_map(data: dict[str, Any]) -> str:
    # Each reason on a line of its own that opens with its record type: the chat words it as "Condition: …".
    lines = ["Each active medication, and under it the condition the record gives as its reason:"]
    if not data["medications"]:
        lines.append("No active medication orders on record.")
    for row in data["medications"]:
        lines.append(f"  {row['medication']}")
        lines += [f"    - {reason}" for reason in row["for"]] or ["    (no reason recorded on the order)"]
    if data["conditions_without_medication"]:
        lines.append(f"Active conditions that no active order gives as its reason "
                     f"({len(data['conditions_without_medication'])}):")
        lines += [f"  {item}" for item in data["conditions_without_medication"]]
    return "\n".join(lines) + unreadable(data)


SPEC = ToolSpec(
    "explore_connections",
    "Clinical Connections",
    "Show what is clinically connected to one item of a patient's record (a condition's treating "
    "medications and care plans, an encounter's observations and notes, what a medication was "
    "prescribed for), given the item's ID and type; without them, which of the patient's active medications "
    "is for which condition. Use when a clinician asks how findings relate.",
    ExploreConnectionsArgs,
    "What is connected to condition cond-123 in this patient's record?",
    arg_max_tokens=224,
    result_cap=3000,
    extract=connection_item,
    **record_read(Role.CONNECTIONS, explore_connections, format_connections),
)
