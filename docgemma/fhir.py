"""FHIR vocabulary every layer may use (the ground floor): id and type grammar, the OperationOutcome error,
references, a resource's patient compartment and its human-readable name. Pure functions on FHIR JSON; no
storage, no HTTP."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any

ID_RE = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")
TYPE_RE = re.compile(r"^[A-Z][A-Za-z]{1,63}$")
CODE_FIELDS = ("code", "medicationCodeableConcept", "vaccineCode", "type")


class FhirError(Exception):
    """A FHIR-level failure with the HTTP status and OperationOutcome issue code it maps to."""

    def __init__(self, status: int, code: str, diagnostics: str) -> None:
        super().__init__(diagnostics)
        self.status = status
        self.code = code
        self.diagnostics = diagnostics

    def outcome(self) -> dict[str, Any]:
        """The OperationOutcome body."""
        return {
            "resourceType": "OperationOutcome",
            "issue": [{"severity": "error", "code": self.code, "diagnostics": self.diagnostics}],
        }


def now() -> str:
    """Current UTC time as a FHIR instant."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def check_type(resource_type: str) -> None:
    """Reject resource type names that are not FHIR-shaped."""
    if not TYPE_RE.match(resource_type):
        raise FhirError(400, "invalid", f"invalid resource type {resource_type!r}")


def check_id(resource_id: str) -> None:
    """Reject ids outside the FHIR id grammar (this also rejects '/', '..' and spaces)."""
    if not ID_RE.match(resource_id) or ".." in resource_id:
        raise FhirError(400, "invalid", f"invalid id {resource_id!r}")


def reference_id(reference: Any, resource_type: str = "Patient") -> str | None:
    """``"Patient/abc"`` → ``"abc"``."""
    if isinstance(reference, dict):
        reference = reference.get("reference")
    if isinstance(reference, str) and reference.startswith(f"{resource_type}/"):
        return reference.split("/", 1)[1]
    return None


def concept_code(resource: dict[str, Any], field_name: str) -> str:
    """The first coding's code of the CodeableConcept ``field_name`` ("" when absent), e.g. an allergy's
    ``clinicalStatus`` or ``verificationStatus``."""
    return str(((resource.get(field_name) or {}).get("coding") or [{}])[0].get("code", ""))


def patient_of(resource: dict[str, Any]) -> str | None:
    """The patient compartment a resource belongs to."""
    if resource.get("resourceType") == "Patient":
        return str(resource.get("id"))
    for field in ("subject", "patient", "beneficiary"):
        pid = reference_id(resource.get(field))
        if pid:
            return pid
    for target in resource.get("target", []) if resource.get("resourceType") == "Provenance" else []:
        pid = reference_id(target)
        if pid:
            return pid
    return None


def codings(resource: dict[str, Any], fields: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The codings of the CodeableConcepts in ``fields``."""
    for field in fields:
        value = resource.get(field)
        for concept in value if isinstance(value, list) else [value]:
            if isinstance(concept, dict):
                yield from (c for c in concept.get("coding", []) if isinstance(c, dict))


def display_text(resource: dict[str, Any]) -> str:
    """The human-readable name of a resource (its code's text, a patient's name, ...)."""
    if resource.get("resourceType") == "Patient":
        names = resource.get("name") or [{}]
        name = names[0]
        return " ".join([*name.get("given", []), name.get("family", "")]).strip() or str(name.get("text", ""))
    for field in (*CODE_FIELDS, "category"):
        concept = resource.get(field)
        concept = concept[0] if isinstance(concept, list) and concept else concept
        if isinstance(concept, dict):
            text = concept.get("text") or next((c.get("display") for c in concept.get("coding", []) if c.get("display")), None)
            if text:
                return str(text)
    return str(resource.get("description") or resource.get("title") or resource.get("resourceType"))


def encounter_reference(resource: dict[str, Any]) -> Any:
    """The encounter a resource was recorded in (``encounter``, or ``context.encounter`` of documents)."""
    if "encounter" in resource:
        return resource["encounter"]
    context = resource.get("context")
    encounter = context.get("encounter") if isinstance(context, dict) else None
    return encounter[0] if isinstance(encounter, list) and encounter else encounter
