"""The patient-record tools: search, chart, data query, connections, timeline,
and the three writes (allergy, prescription, clinical note). Writes reach this module only after the
clinician approved them in TOOL_EXECUTE.
"""

from __future__ import annotations

import base64
from collections import defaultdict
from collections.abc import Callable
from datetime import date
from functools import partial
from typing import Any

from pydantic import BaseModel

from docgemma.clinical.dosing import dosage_instruction, duration_phrase, parse_duration
from docgemma.clinical.patient import PatientRef
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.search import encounter_reference
from docgemma.ehr.service import Ehr, idempotency_key
from docgemma.ehr.summary import note_text, quantity_text
from docgemma.ehr.validate import tolerant, unreadable_note
from docgemma.fhir import concept_code, display_text, patient_of
from docgemma.tools import record_brief
from docgemma.tools.outcome import ToolOutcome, failure, success
from docgemma.tools.registry import Executor, Formatter, ToolContext, ToolSpec
from docgemma.tools.review import PatientCard, WriteCheck, WriteReview
from docgemma.tools.routing import Role
from docgemma.tools.write_checks import (
    Findings,
    PatientFacts,
    active_allergies,
    active_orders,
    allergy_line,
    paediatric_note,
)

CLINICAL_TYPES = ("Condition", "MedicationRequest", "Observation", "Procedure", "Encounter", "DiagnosticReport",
                  "CarePlan", "Immunization", "AllergyIntolerance", "DocumentReference")
#: Concept → the words its results are named with (a "kidney function" search must find creatinine and eGFR).
CONCEPTS: dict[str, tuple[str, ...]] = {
    "kidney": ("creatinine", "glomerular", "egfr", "urea", "albumin", "kidney", "renal"),
    "renal": ("creatinine", "glomerular", "egfr", "urea", "albumin", "kidney", "renal"),
    "liver": ("alanine aminotransferase", "aspartate", "bilirubin", "alkaline phosphatase", "albumin", "liver", "hepat"),
    "thyroid": ("thyrotropin", "thyroxine", "thyroid"),
    "diabetes": ("a1c", "glucose", "diabetes"),
    "sugar": ("a1c", "glucose"),
    "blood pressure": ("blood pressure", "systolic", "diastolic"),
    "anticoagulation": ("inr", "prothrombin", "warfarin", "apixaban"),
    "clotting": ("inr", "prothrombin", "platelets"),
    "cholesterol": ("cholesterol", "triglyceride", "lipoprotein"),
    "lipids": ("cholesterol", "triglyceride", "lipoprotein"),
    "blood count": ("hemoglobin", "hematocrit", "platelets", "leukocytes", "erythrocytes"),
    "anemia": ("hemoglobin", "hematocrit", "ferritin"),
    "anaemia": ("hemoglobin", "hematocrit", "ferritin"),
    "electrolytes": ("sodium", "potassium", "chloride", "bicarbonate"),
    "weight": ("body weight", "body mass index"),
    "pregnancy": ("pregnan", "preeclampsia", "pre-eclampsia", "protein/creatinine"),
    # Abbreviations clinicians type, and the names LOINC gives those results.
    "tsh": ("thyrotropin", "tsh"),
    "hba1c": ("a1c", "glycated"),
    "egfr": ("glomerular", "egfr"),
    "oxygen saturation": ("oxygen saturation", "spo2"),
}


def search_terms(name: str) -> list[str]:
    """The words to match for a name: the name itself plus the concept's expansions."""
    lowered = name.lower().strip()
    terms = [lowered]
    for concept, words in CONCEPTS.items():
        if concept in lowered:
            terms += list(words)
    return terms


def _fail(exc: FhirClientError, patient_id: str | None = None) -> ToolOutcome:
    """The error for a failed record call; a 404 on a read of one patient's record means no such patient."""
    if exc.status in (404, 410) and patient_id is not None:
        return failure("unknown_patient", patient_id=patient_id)
    if exc.status == 404:
        return failure("not_found")
    if exc.status in (400, 422):
        return failure("invalid_args")
    if exc.status in (401, 403, 503):
        return failure("service_unavailable")
    return failure("server_error")


def _when(resource: dict[str, Any]) -> str:
    for key in ("effectiveDateTime", "onsetDateTime", "authoredOn", "performedDateTime", "occurrenceDateTime", "date",
                "recordedDate"):
        if resource.get(key):
            return str(resource[key])[:10]
    period = resource.get("period") or resource.get("performedPeriod") or {}
    return str(period.get("start", ""))[:10]


def line(resource: dict[str, Any]) -> str:
    """One compact line: type, name, value or status, date, id."""
    kind = resource.get("resourceType")
    value = f": {quantity_text(resource)}" if kind == "Observation" else ""
    if kind == "AllergyIntolerance":  # the reaction and criticality are the clinical point of an allergy
        return (f"{kind} {allergy_line(resource)} ({concept_code(resource, 'clinicalStatus')}, {_when(resource) or 'no date'}) "
                f"[{resource.get('id')}]")
    status = resource.get("status") or (resource.get("clinicalStatus") or {}).get("coding", [{}])[0].get("code", "")
    return f"{kind} {display_text(resource)}{value} ({status}, {_when(resource) or 'no date'}) [{resource.get('id')}]"


# ── reads ────────────────────────────────────────────────────────────────────────────────────────────

def search_patient(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Patients whose name contains the words given."""
    name = str(args.name)  # type: ignore[attr-defined]
    try:
        found = ehr.client.search("Patient", [("name", name.split()[-1]), ("_count", "20")], limit=20)
    except FhirClientError as exc:
        return _fail(exc)
    words = [w.lower() for w in name.split()]

    def matching(patients: list[dict[str, Any]], skipped: int) -> dict[str, Any]:
        matches = [{"id": p["id"], "name": display_text(p), "birth_date": p.get("birthDate"), "gender": p.get("gender")}
                   for p in patients if all(w in display_text(p).lower() for w in words)]
        return {"query": name, "matches": matches, "unreadable": skipped}

    return success(tolerant(matching, found))


def _unreadable(data: dict[str, Any]) -> str:
    return f"\n({unreadable_note(data['unreadable'])})" if data.get("unreadable") else ""


def format_patients(data: dict[str, Any]) -> str:
    """Matches, or an explicit absence."""
    if not data["matches"]:
        return f"No patient named '{data['query']}' was found." + _unreadable(data)
    return "\n".join(f"- {m['name']}, born {m['birth_date']}, {m['gender']} (ID {m['id']})"
                     for m in data["matches"]) + _unreadable(data)


def get_patient_chart(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """The compiled summary."""
    pid = str(args.patient_id)  # type: ignore[attr-defined]
    try:
        summary = ehr.summary(pid)
    except FhirClientError as exc:
        return _fail(exc, pid)
    return success({"patient": summary.facts["patient"], "summary": summary.text})


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
        return _fail(exc, a.patient_id)
    try:
        found = [r for t in types for r in ehr.client.search(t, params, limit=500)]
    except FhirClientError as exc:
        return _fail(exc)
    described = ", ".join(str(v) for v in (a.name, a.resource_type, a.category, a.status) if v) or "any data"

    def lines(records: list[dict[str, Any]], skipped: int) -> dict[str, Any]:
        if a.name:
            terms = search_terms(a.name)
            records = [r for r in records if any(t in f"{display_text(r)} {line(r)}".lower() for t in terms)]
        records = sorted(records, key=_when, reverse=True)
        # The patient's name and a one-line statement travel with the lines: a short question is answered
        # with that line, naming whose record it is.
        return {"query": described, "results": [line(r) for r in records[:25]], "total": len(records),
                "unreadable": skipped, "patient": display_text(patient),
                "brief": record_brief.brief(a, records, _when, skipped)}

    return success(tolerant(lines, found))


def format_query(data: dict[str, Any]) -> str:
    """Lines, or the explicit absence (absence is a clinical fact)."""
    if not data["results"]:
        return f"No records matching '{data['query']}' were found for this patient." + _unreadable(data)
    more = f"\n(+{data['total'] - len(data['results'])} older)" if data["total"] > len(data["results"]) else ""
    return "\n".join(data["results"]) + more + _unreadable(data)


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
        return _fail(exc, a.patient_id)
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
    return "\n".join(lines) + _unreadable(data)


def get_patient_timeline(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Encounters in the range (newest first, at most 12) with their events, and notes on request."""
    a: Any = args
    try:
        resources = ehr.compartment(a.patient_id)
    except FhirClientError as exc:
        return _fail(exc, a.patient_id)

    def timeline(records: list[dict[str, Any]], skipped: int) -> dict[str, Any]:
        encounters = [r for r in records if r["resourceType"] == "Encounter"
                      and (not a.start_date or _when(r) >= a.start_date) and (not a.end_date or _when(r) <= a.end_date)]
        encounters.sort(key=_when, reverse=True)
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
                "date": _when(encounter),
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

    return success(tolerant(timeline, resources))


def format_timeline(data: dict[str, Any]) -> str:
    """Visits with their events (and notes)."""
    if not data["results"]:
        return f"No encounters recorded from {data['range']}." + _unreadable(data)
    lines = [f"{data['total']} encounter(s), {data['range']}:"]
    for visit in data["results"]:
        lines.append(f"{visit['date']} {visit['type']} ({visit['class']}) [{visit['id']}]")
        lines += [f"  {event}" for event in visit["events"]]
        lines += [f"  Note: {' '.join(note.split())[:800]}" for note in visit.get("notes", [])]
    return "\n".join(lines) + _unreadable(data)


# ── writes (only after the clinician's approval) ─────────────────────────────────────────────────────

def _write(ehr: Ehr, tool: str, args: BaseModel, context: ToolContext, resource: dict[str, Any], what: str) -> ToolOutcome:
    pid = str(args.patient_id)  # type: ignore[attr-defined]
    try:
        patient = ehr.client.read("Patient", pid)
    except FhirClientError as exc:
        if exc.status in (404, 410):  # one clear error, never a retry of a write
            return failure("invalid_args", missing_fields=[f"an existing patient ID (no patient '{pid}' is on the record; "
                                                           "nothing was written)"])
        return _fail(exc)
    try:
        # With a scope (the pending action's id) the key ignores the arguments: an edit cannot make a second write.
        key = idempotency_key(context.scope, tool) if context.scope else idempotency_key(pid, tool, args.model_dump())
        saved, created = ehr.write(resource, key=key, step=tool, override_reason=context.override_reason,
                                   approved_by=context.approved_by, conversation=context.conversation)
    except FhirClientError as exc:
        return _fail(exc)
    except ValueError:
        return failure("invalid_args", missing_fields=["a valid value"])
    # Whose record it went into travels with the confirmation, which names them.
    data = {"written": what, "resource": f"{saved['resourceType']}/{saved['id']}", "created": created,
            "patient": display_text(patient)}
    if context.override_reason:
        data["override_reason"] = context.override_reason
    return success(data)


def add_allergy(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """AllergyIntolerance."""
    a: Any = args
    reaction: dict[str, Any] = {"manifestation": [{"text": a.reaction}]}
    if a.severity:
        reaction["severity"] = a.severity
    resource = {
        "resourceType": "AllergyIntolerance", "patient": {"reference": f"Patient/{a.patient_id}"},
        "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical",
                                       "code": "active"}]},
        "verificationStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification",
                                           "code": "confirmed"}]},
        "code": {"text": a.substance}, "reaction": [reaction], "recordedDate": date.today().isoformat(),
        **({"criticality": "high"} if a.severity == "severe" else {}),
    }
    return _write(ehr, "add_allergy", args, context, resource, f"allergy to {a.substance} ({a.reaction})")


def prescribe_medication(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """MedicationRequest (an order; dispensing is outside this system)."""
    a: Any = args
    resource: dict[str, Any] = {
        "resourceType": "MedicationRequest", "status": "active", "intent": "order",
        "subject": {"reference": f"Patient/{a.patient_id}"}, "authoredOn": date.today().isoformat(),
        "medicationCodeableConcept": {"text": a.medication_name},
        "dosageInstruction": [dosage_instruction(a.dosage, a.frequency, a.notes, a.duration)],
    }
    course = parse_duration(a.duration or "")
    if course is not None and course.value is not None:
        # How long the supply is for: the course the clinician gave ("for 7 days", "x7d", "2/52").
        resource["dispenseRequest"] = {"expectedSupplyDuration": course.quantity()}
    if a.indication:
        resource["reasonCode"] = [{"text": a.indication}]
    notes = [{"text": a.notes}] if a.notes else []
    if context.override_reason:
        reason = context.override_reason
        notes.append({"text": f"Severe finding overridden by the approving clinician. Reason: {reason}"})
    if notes:
        resource["note"] = notes
    return _write(ehr, "prescribe_medication", args, context, resource,
                  " ".join(filter(None, (a.medication_name, a.dosage, a.frequency, duration_phrase(a.duration)))))


def save_clinical_note(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """DocumentReference with the note as text/plain."""
    a: Any = args
    from docgemma.fhir import now

    resource = {
        "resourceType": "DocumentReference", "status": "current", "type": {"text": a.note_type},
        "subject": {"reference": f"Patient/{a.patient_id}"}, "date": now(),
        "content": [{"attachment": {"contentType": "text/plain", "data": base64.b64encode(a.note_text.encode()).decode()}}],
    }
    return _write(ehr, "save_clinical_note", args, context, resource, f"{a.note_type} note")


def format_write(data: dict[str, Any]) -> str:
    """What was written (or found already written)."""
    verb = "Saved" if data["created"] else "Already saved earlier (not written again)"
    verb += f" for {data['patient']}" if data.get("patient") else ""
    override = f" — severe finding overridden; reason: {data['override_reason']}" if data.get("override_reason") else ""
    return f"{verb}: {data['written']} [{data['resource']}]{override}"


#: The resource each write tool creates: where its write is looked up by its idempotency key.
WRITTEN_RESOURCE = {"add_allergy": "AllergyIntolerance", "prescribe_medication": "MedicationRequest",
                    "save_clinical_note": "DocumentReference"}


def write_lookup(ehr: Ehr) -> Callable[[str, str], str | None]:
    """(tool, pending action id) -> the resource that action wrote (``MedicationRequest/…``), or None when the
    record holds nothing under its key (the key :func:`_write` used: the action id is its scope). Raises
    ConnectionError when the record cannot answer: "not found" must never be guessed."""
    def find(tool: str, action_id: str) -> str | None:
        kind = WRITTEN_RESOURCE.get(tool)
        if kind is None:
            return None
        try:
            found = ehr.written(kind, idempotency_key(action_id, tool))
        except FhirClientError as exc:
            raise ConnectionError(f"the record did not answer (HTTP {exc.status})") from exc
        return f"{found['resourceType']}/{found['id']}" if found else None

    return find


def ehr_executors(ehr: Ehr) -> tuple[dict[str, Executor], dict[str, Formatter]]:
    """Executors and formatters of the eight record tools."""
    executors: dict[str, Executor] = {
        name: partial(fn, ehr) for name, fn in (
            ("search_patient", search_patient), ("get_patient_chart", get_patient_chart),
            ("query_patient_data", query_patient_data), ("explore_connections", explore_connections),
            ("get_patient_timeline", get_patient_timeline), ("add_allergy", add_allergy),
            ("prescribe_medication", prescribe_medication), ("save_clinical_note", save_clinical_note))
    }
    formatters: dict[str, Formatter] = {
        "search_patient": format_patients, "get_patient_chart": lambda d: str(d["summary"]),
        "query_patient_data": format_query, "explore_connections": format_connections,
        "get_patient_timeline": format_timeline, "add_allergy": format_write, "prescribe_medication": format_write,
        "save_clinical_note": format_write,
    }
    return executors, formatters


def record_write_check(ehr: Ehr) -> WriteCheck:
    """The write check against ``ehr``: who the patient is (a patient not on the record blocks the write before
    any card is shown), plus the tool's own :attr:`~docgemma.tools.registry.ToolSpec.pre_write_check`."""
    def check(spec: ToolSpec, args: dict[str, Any], active: PatientRef | None) -> WriteReview:
        patient_id = str(args.get("patient_id", ""))
        try:
            resources = ehr.compartment(patient_id)  # $everything: 404 for a patient not on the record
            patient = next((r for r in resources if r.get("resourceType") == "Patient" and r.get("id") == patient_id),
                           None) or ehr.client.read("Patient", patient_id)  # a server whose $everything omits it
        except FhirClientError as exc:
            if exc.status in (404, 410):
                return WriteReview(blocked=f"an existing patient ID (no patient '{patient_id}' is on the record; "
                                           "nothing was written)")
            return WriteReview(warnings=["The patient record could not be checked for allergies and duplicate orders."])
        def review(readable: list[dict[str, Any]], skipped: int) -> WriteReview:
            facts = PatientFacts(allergies=active_allergies(readable), medications=active_orders(readable))
            found = spec.pre_write_check(args, facts) if spec.pre_write_check else Findings([], [])
            child = paediatric_note(str(patient.get("birthDate") or "")) if Role.MEDICATION_ORDER in spec.roles else None
            if child:
                found.add(child)
            severe = list(found.severe)
            if skipped:
                # An allergy the check could not read may be the one that matters: no plain approval.
                severe.insert(0, f"INCOMPLETE CHECK: {unreadable_note(skipped)} The allergy and duplicate-order "
                                 "checks could not see them; review the record before approving.")
            card = PatientCard(
                id=patient_id, name=display_text(patient), birth_date=str(patient.get("birthDate") or "unknown"),
                gender=str(patient.get("gender") or "unknown"), allergies=[allergy_line(a) for a in facts.allergies],
                active_medications=len(facts.medications), medications=[display_text(m) for m in facts.medications][:6],
            )
            return WriteReview(warnings=found.warnings, severe=severe, patient=card)

        return tolerant(review, resources)

    return check


def record_facts(ehr: Ehr) -> Callable[[PatientRef], PatientFacts | None]:
    """The active patient's allergies and active orders as the record holds them now, for checking an answer
    against the record (None when the record cannot be read: the answer is then not checked, never blocked)."""
    def facts(patient: PatientRef) -> PatientFacts | None:
        try:
            resources = ehr.compartment(patient["id"])
        except FhirClientError:
            return None
        return tolerant(lambda readable, _skipped: PatientFacts(allergies=active_allergies(readable),
                                                               medications=active_orders(readable)), resources)

    return facts
