"""get_patient_timeline: a patient's encounters in a date range with what happened at each (and the notes)."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field

from docgemma.ehr.client import FhirClientError
from docgemma.ehr.search import encounter_reference
from docgemma.ehr.service import Ehr
from docgemma.ehr.summary import note_text
from docgemma.ehr.validate import tolerant
from docgemma.fhir import display_text
from docgemma.tools import record_brief
from docgemma.tools.args import PatientId, ToolArgs
from docgemma.tools.extract import patient_only
from docgemma.tools.outcome import ToolOutcome, success
from docgemma.tools.record_io import fail, line, unreadable, when
from docgemma.tools.record_tool import record_read
from docgemma.tools.routing import Request, Role
from docgemma.tools.spec import ToolContext, ToolSpec


class PatientTimelineArgs(ToolArgs):
    patient_id: str = PatientId
    start_date: str | None = Field(default=None, max_length=10, description="YYYY-MM-DD")
    end_date: str | None = Field(default=None, max_length=10, description="YYYY-MM-DD")
    include_notes: bool = False


def timeline(request: Request) -> dict[str, Any]:
    """The patient, and ``include_notes`` when notes are asked for."""
    out = patient_only(request)
    if re.search(r"\bnotes?\b", request.query, re.IGNORECASE):
        out["include_notes"] = True
    return out


def get_patient_timeline(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Encounters in the range (newest first, at most 12) with their events, and notes on request."""
    a: Any = args
    try:
        resources = ehr.compartment(a.patient_id)
    except FhirClientError as exc:
        return fail(exc, a.patient_id)

    def visits_of(records: list[dict[str, Any]], skipped: int) -> dict[str, Any]:
        encounters = [r for r in records if r["resourceType"] == "Encounter"
                      and (not a.start_date or when(r) >= a.start_date) and (not a.end_date or when(r) <= a.end_date)]
        encounters.sort(key=when, reverse=True)
        events: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            ref = encounter_reference(r)
            target = ref.get("reference") if isinstance(ref, dict) else None
            if isinstance(target, str) and target.startswith("Encounter/"):
                events[target.split("/", 1)[1]].append(r)
        visits = []
        for encounter in encounters[:12]:
            items = events.get(str(encounter["id"]), [])
            visit: dict[str, Any] = {
                "date": when(encounter),
                "type": display_text({"type": encounter.get("type", [])}) if encounter.get("type") else "",
                "class": encounter.get("class", {}).get("code", ""), "id": encounter["id"],
                "events": [line(r) for r in items if r["resourceType"] != "DocumentReference"][:8],
            }
            if a.include_notes:
                visit["notes"] = [note_text(r) for r in items if r["resourceType"] == "DocumentReference" and note_text(r)]
            visits.append(visit)
        patient = next((display_text(r) for r in records if r["resourceType"] == "Patient"), None)
        return {"range": f"{a.start_date or 'start'} to {a.end_date or 'today'}", "results": visits,
                "total": len(encounters), "unreadable": skipped, "patient": patient,
                "brief": record_brief.visits(visits, len(encounters), skipped)}

    return success(tolerant(visits_of, resources))


def format_timeline(data: dict[str, Any]) -> str:
    """Visits with their events (and notes)."""
    if not data["results"]:
        return f"No encounters recorded from {data['range']}." + unreadable(data)
    lines = [f"{data['total']} encounter(s), {data['range']}:"]
    for visit in data["results"]:
        lines.append(f"{visit['date']} {visit['type']} ({visit['class']}) [{visit['id']}]")
        lines += [f"  {event}" for event in visit["events"]]
        lines += [f"  Note: {' '.join(note.split())[:800]}" for note in visit.get("notes", [])]
    return "\n".join(lines) + unreadable(data)


SPEC = ToolSpec(
    "get_patient_timeline",
    "Patient Timeline",
    "List a patient's encounters in a date range with what happened at each (diagnoses, "
    "prescriptions, results), optionally with the clinical notes. Use when a clinician asks what "
    "happened over a period or wants the visit history or previous notes.",
    PatientTimelineArgs,
    "What happened at her visits this year?",
    arg_max_tokens=192,
    result_cap=3500,
    extract=timeline,
    **record_read(Role.RECORD_HISTORY, get_patient_timeline, format_timeline),
)
