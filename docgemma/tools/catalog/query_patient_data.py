"""query_patient_data: one patient's records filtered by name, type, status, category or date; concept words
("kidney function") widen to the names results carry (``clinical/record_concepts.py``)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from docgemma.clinical.record_concepts import LAB_NAME_RE, LAB_NAMES, SECTIONS, search_terms
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import Ehr
from docgemma.ehr.validate import tolerant
from docgemma.fhir import display_text
from docgemma.tools import record_brief
from docgemma.tools.args import PatientId, ResourceType, ToolArgs
from docgemma.tools.extract import patient_only
from docgemma.tools.outcome import ToolOutcome, success
from docgemma.tools.record_io import fail, line, unreadable, when
from docgemma.tools.record_tool import record_read
from docgemma.tools.routing import Request, Role
from docgemma.tools.spec import ToolContext, ToolSpec

#: The resource types searched when the question names none.
CLINICAL_TYPES = ("Condition", "MedicationRequest", "Observation", "Procedure", "Encounter", "DiagnosticReport",
                  "CarePlan", "Immunization", "AllergyIntolerance", "DocumentReference")


class PatientDataQueryArgs(ToolArgs):
    patient_id: str = PatientId
    name: str | None = Field(default=None, max_length=60, description="What to look for, e.g. 'kidney function'")
    resource_type: ResourceType | None = None
    status: str | None = Field(default=None, max_length=20)
    category: Literal["vital-signs", "laboratory", "survey", "social-history"] | None = None
    date_from: str | None = Field(default=None, max_length=10, description="YYYY-MM-DD")
    date_to: str | None = Field(default=None, max_length=10, description="YYYY-MM-DD")


def record_query(request: Request) -> dict[str, Any]:
    """The patient, and a lab name or the record section the question is about."""
    query = request.query
    out = patient_only(request)
    lab = LAB_NAME_RE.search(query)
    if lab:
        name = lab.group(1).lower()
        out["name"] = LAB_NAMES.get(name, "protein/creatinine" if name.startswith("protein") else name)
        return out
    for pattern, filters in SECTIONS:
        if pattern.search(query):
            out.update(filters)
            break
    if out.get("resource_type") in ("MedicationRequest", "Condition") and re.search(r"\b(active|current)\b", query, re.I):
        out["status"] = "active"
    return out


def query_patient_data(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Filtered records of one patient, newest first; concept words expand to what results are named."""
    a: Any = args
    params: list[tuple[str, str]] = [("patient", a.patient_id)]
    if a.date_from:
        params.append(("date", f"ge{a.date_from}"))
    if a.date_to:
        params.append(("date", f"le{a.date_to}"))
    if a.status:
        params.append(("status", a.status))
    if a.category:
        params.append(("category", a.category))
    types = [a.resource_type] if a.resource_type else (["Observation"] if a.category else list(CLINICAL_TYPES))
    try:
        patient = ehr.client.read("Patient", a.patient_id)
    except FhirClientError as exc:
        return fail(exc, a.patient_id)
    try:
        found = [r for t in types for r in ehr.client.search(t, params, limit=500)]
    except FhirClientError as exc:
        return fail(exc)
    described = ", ".join(str(v) for v in (a.name, a.resource_type, a.category, a.status) if v) or "any data"

    def lines(records: list[dict[str, Any]], skipped: int) -> dict[str, Any]:
        if a.name:
            terms = search_terms(a.name)
            records = [r for r in records if any(t in f"{display_text(r)} {line(r)}".lower() for t in terms)]
        records = sorted(records, key=when, reverse=True)
        # The patient's name and a one-line statement travel with the lines: a short question is answered
        # with that line, naming whose record it is.
        return {"query": described, "results": [line(r) for r in records[:25]], "total": len(records),
                "unreadable": skipped, "patient": display_text(patient),
                "brief": record_brief.brief(a, records, when, skipped)}

    return success(tolerant(lines, found))


def format_query(data: dict[str, Any]) -> str:
    """Lines, or the explicit absence (absence is a clinical fact)."""
    if not data["results"]:
        return f"No records matching '{data['query']}' were found for this patient." + unreadable(data)
    more = f"\n(+{data['total'] - len(data['results'])} older)" if data["total"] > len(data["results"]) else ""
    return "\n".join(data["results"]) + more + unreadable(data)


SPEC = ToolSpec(
    "query_patient_data",
    "Patient Data Query",
    "Search one patient's record for specific data: lab results, vital signs, medications (current "
    "or past), conditions, procedures, immunizations, allergies or notes, optionally by name, status, "
    "category or date range. Understands concepts (e.g. 'kidney function' finds creatinine and eGFR). "
    "Use when a clinician asks for specific results, history or trends of a patient.",
    PatientDataQueryArgs,
    "What were her last kidney function results?",
    arg_max_tokens=352,
    result_cap=3000,
    extract=record_query,
    **record_read(Role.RECORD_QUERY, query_patient_data, format_query),
)
