"""search_patient: patients whose name contains the words given, born on the date given if one is (the patient
panel's search too); or the patient a hospital number or record id belongs to ("who is DG-1003?")."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from docgemma.clinical.patient import PatientRef
from docgemma.clinical.roster import birth_dates
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import Ehr
from docgemma.ehr.validate import tolerant
from docgemma.fhir import display_text
from docgemma.tools.args import ToolArgs
from docgemma.tools.outcome import ToolOutcome, success
from docgemma.tools.record_io import fail, unreadable
from docgemma.tools.routing import Request
from docgemma.tools.spec import ToolContext, ToolSpec, client_binding


class PatientSearchArgs(ToolArgs):
    name: str = Field(min_length=2, max_length=60,
                      description="Patient name, or the hospital number or record id the clinician gives")
    birth_date: str | None = Field(default=None, min_length=10, max_length=10, pattern=r"^\d{4}-\d{2}-\d{2}$",
                                   description="Birth date YYYY-MM-DD, when the clinician gives one")


#: A hospital number or record id given in place of a name: one token with a digit ("DG-1003", "Patient/<id>");
#: a name never has one.
_IDENTIFIER_RE = re.compile(r"^(?:Patient/)?[A-Za-z0-9][A-Za-z0-9\-.]*\d[A-Za-z0-9\-.]*$", re.IGNORECASE)


def patient_name(request: Request) -> dict[str, Any]:
    """``name``: the one patient name the message gives, else the one identifier it gives as written ("who is
    DG-1003?"); ``birth_date``: the one birth date it gives ("James Wilson born 1988-11-30" names one of two James
    Wilsons)."""
    names, ids = request.entities["patient_names"], request.entities["patient_ids"]
    if len(names) == 1:
        born = birth_dates(request.query)
        return {"name": names[0], **({"birth_date": born[0]} if len(born) == 1 else {})}
    if names or len(ids) != 1:
        return {}
    written = [alias for alias, known in (request.entities.get("patient_aliases") or {}).items() if known == ids[0]]
    found = next((m for alias in written if (m := re.search(re.escape(alias), request.query, re.IGNORECASE))), None)
    return {"name": found.group(0) if found else ids[0]}


def unique_match(args: dict[str, Any], data: Any, current: PatientRef | None) -> PatientRef | None:
    """A patient search with exactly one match makes that patient the active one."""
    if isinstance(data, dict) and len(data.get("matches", [])) == 1:
        match = data["matches"][0]
        return PatientRef(id=str(match["id"]), name=str(match.get("name", match["id"])))
    return current


def search_patient(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Patients whose name contains the words given (and born on ``birth_date`` when it is given); for an
    identifier, the patient it is the hospital number or record id of."""
    name = str(args.name)  # type: ignore[attr-defined]
    born = getattr(args, "birth_date", None)
    identifier = _IDENTIFIER_RE.match(name) is not None
    try:
        found = _by_identifier(ehr, name.split("/")[-1]) if identifier else ehr.client.search(
            "Patient", [("name", name.split()[-1]), ("_count", "20")], limit=20)
    except FhirClientError as exc:
        return fail(exc)
    words = [] if identifier else [w.lower() for w in name.split()]

    def matching(patients: list[dict[str, Any]], skipped: int) -> dict[str, Any]:
        matches = [{"id": p["id"], "name": display_text(p), "birth_date": p.get("birthDate"), "gender": p.get("gender")}
                   for p in patients if all(w in display_text(p).lower() for w in words)
                   and (born is None or p.get("birthDate") == born)]
        return {"query": name, "birth_date": born, "matches": matches, "unreadable": skipped}

    return success(tolerant(matching, found))


def _by_identifier(ehr: Ehr, value: str) -> list[dict[str, Any]]:
    """The patients ``value`` is a hospital number of (as written, or in capitals: "dg-1003" is DG-1003) or the
    record id of; each once."""
    found = ehr.client.search("Patient", [("identifier", ",".join(dict.fromkeys((value, value.upper()))))], limit=20)
    # A record id only when no hospital number matched: a server may refuse an id of another shape as malformed.
    return found or ehr.client.search("Patient", [("_id", value)], limit=20)


def format_patients(data: dict[str, Any]) -> str:
    """Matches, or an explicit absence."""
    if not data["matches"]:
        born = f" born {data['birth_date']}" if data.get("birth_date") else ""
        if _IDENTIFIER_RE.match(str(data["query"])):
            return f"No patient has the hospital number or record id '{data['query']}'." + unreadable(data)
        return f"No patient named '{data['query']}'{born} was found." + unreadable(data)
    return "\n".join(f"- {m['name']}, born {m['birth_date']}, {m['gender']} (ID {m['id']})"
                     for m in data["matches"]) + unreadable(data)


SPEC = ToolSpec(
    "search_patient",
    "Patient Search",
    "Search the electronic health record system for a patient by name. Returns matching patient "
    "IDs and basic demographics. Use when a clinician mentions a patient by name and needs to "
    "look them up.",
    PatientSearchArgs,
    "Look up patient Maria Garcia.",
    record=True,
    active_patient_after=unique_match,
    patient_search=True,
    extract=patient_name,
    binding=client_binding("record", search_patient, format_patients),
)
