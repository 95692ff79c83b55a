"""What the record tools share: the error for a failed record call, a resource's date and one-line form, the
note about unreadable resources, and the approved write with its confirmation."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from docgemma.clinical.allergy import allergy_line
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import ActionWrittenOtherwise, Ehr, action_key, idempotency_key
from docgemma.ehr.summary import quantity_text
from docgemma.ehr.validate import unreadable_note
from docgemma.fhir import concept_code, display_text
from docgemma.tools.outcome import ToolOutcome, failure, success
from docgemma.tools.spec import ToolContext


def fail(exc: FhirClientError, patient_id: str | None = None) -> ToolOutcome:
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


def when(resource: dict[str, Any]) -> str:
    """The resource's date (YYYY-MM-DD), from whichever date field its type has; empty when none."""
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
        return (f"{kind} {allergy_line(resource)} ({concept_code(resource, 'clinicalStatus')}, {when(resource) or 'no date'}) "
                f"[{resource.get('id')}]")
    status = resource.get("status") or (resource.get("clinicalStatus") or {}).get("coding", [{}])[0].get("code", "")
    return f"{kind} {display_text(resource)}{value} ({status}, {when(resource) or 'no date'}) [{resource.get('id')}]"


def unreadable(data: dict[str, Any]) -> str:
    """The note about resources that could not be read, on a line of its own; empty when all were read."""
    return f"\n({unreadable_note(data['unreadable'])})" if data.get("unreadable") else ""


def write(ehr: Ehr, tool: str, args: BaseModel, context: ToolContext, resource: dict[str, Any], what: str) -> ToolOutcome:
    """Write ``resource`` for the patient of ``args`` (after the clinician's approval), once per approved action."""
    pid = str(args.patient_id)  # type: ignore[attr-defined]
    try:
        patient = ehr.client.read("Patient", pid)
    except FhirClientError as exc:
        if exc.status in (404, 410):  # one clear error, never a retry of a write
            return failure("invalid_args", missing_fields=[f"an existing patient ID (no patient '{pid}' is on the record; "
                                                           "nothing was written)"])
        return fail(exc)
    try:
        # The card's identity and its exact arguments: a replay finds its own write, and only that one.
        key = idempotency_key(context.scope or pid, tool, args.model_dump())
        action = action_key(context.scope, tool) if context.scope else ""
        saved, created = ehr.write(resource, key=key, step=tool, override_reason=context.override_reason,
                                   approved_by=context.approved_by, conversation=context.conversation, action=action)
    except FhirClientError as exc:
        return fail(exc)
    except ActionWrittenOtherwise as exc:
        return failure("invalid_args", missing_fields=[
            f"a new approval (this one already wrote {exc.resource} with other values; nothing more was written)"])
    except ValueError:
        return failure("invalid_args", missing_fields=["a valid value"])
    # Whose record it went into travels with the confirmation, which names them.
    data = {"written": what, "resource": f"{saved['resourceType']}/{saved['id']}", "created": created,
            "patient": display_text(patient)}
    if context.override_reason:
        data["override_reason"] = context.override_reason
    return success(data)


def format_write(data: dict[str, Any]) -> str:
    """What was written (or found already written)."""
    verb = "Saved" if data["created"] else "Already saved earlier (not written again)"
    verb += f" for {data['patient']}" if data.get("patient") else ""
    override = f" — severe finding overridden; reason: {data['override_reason']}" if data.get("override_reason") else ""
    return f"{verb}: {data['written']} [{data['resource']}]{override}"
