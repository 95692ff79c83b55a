"""save_clinical_note: a clinical note (DocumentReference, text/plain), written after the clinician approves."""

from __future__ import annotations

import base64
import re
from typing import Any

from pydantic import BaseModel, Field

from docgemma.clinical.note_head import dash_note
from docgemma.fhir import now
from docgemma.tools.args import PatientId, ToolArgs
from docgemma.tools.extract import patient_only
from docgemma.tools.record_tool import Draft, record_write
from docgemma.tools.routing import Request, Role
from docgemma.tools.spec import ToolContext, ToolSpec

#: The resource its write creates: where the write is looked up by its idempotency key.
WRITTEN = "DocumentReference"

NOTE_TYPE_RE = re.compile(
    r"\b(progress|consult(?:ation)?|procedure|discharge|admission|soap|nursing|follow-up|h&p|operative)\s+note\b",
    re.IGNORECASE,
)


class ClinicalNoteArgs(ToolArgs):
    patient_id: str = PatientId
    note_type: str = Field(min_length=2, max_length=40, description="progress, consult, procedure, ...")
    note_text: str = Field(min_length=3, max_length=600)


def note(request: Request) -> dict[str, Any]:
    """The patient, the note type (progress unless named) and the text after a colon (or after the dash of a note
    dictated as "document in her record - …": ``clinical/note_head.py``)."""
    query = request.query
    out = patient_only(request)
    kind = NOTE_TYPE_RE.search(query)
    out["note_type"] = kind.group(1).lower() if kind else "progress"
    dashed = dash_note(query)  # "document in her record - BP 150/90, hold amlodipine": the rules' own reading
    text = dashed[1] if dashed else query.split(":", 1)[1].strip() if ":" in query else ""
    if len(text) >= 3:
        out["note_text"] = text[:600]
    return out


def document_reference(args: BaseModel, context: ToolContext) -> Draft:
    """The DocumentReference with the note as text/plain, named "<type> note"."""
    a: Any = args
    resource = {
        "resourceType": WRITTEN, "status": "current", "type": {"text": a.note_type},
        "subject": {"reference": f"Patient/{a.patient_id}"}, "date": now(),
        "content": [{"attachment": {"contentType": "text/plain", "data": base64.b64encode(a.note_text.encode()).decode()}}],
    }
    return resource, f"{a.note_type} note"


SPEC = record_write(ToolSpec(
    "save_clinical_note",
    "Clinical Note",
    "Save a clinical note (progress note, consult note, procedure note, etc.) to a patient's "
    "record. Use when a clinician wants to write, save, or document a clinical note.",
    ClinicalNoteArgs,
    "Save a progress note for patient abc-123: stable, continue current plan.",
    arg_max_tokens=800,
    keywords=("note",),
    extract=note,
), Role.NOTE_ENTRY, document_reference, WRITTEN)
