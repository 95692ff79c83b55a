"""The reference to a patient that the conversation, the tools and the record's checks pass around."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NewType, TypedDict

#: What of an identifier a message gave may be shown back: printable, no markup or code-span characters.
_UNSHOWN_RE = re.compile(r"[^\w\-./:#@+=]")


class PatientRef(TypedDict):
    """The active patient of a conversation; carried across turns."""

    id: str
    name: str


#: A patient's record id as read from text (a tool's arguments, a step's detail, an answer), not yet a patient: only
#: the workspace resolves it (to a name, a birth date); everywhere a known patient crosses a boundary, a
#: :class:`PatientRef` carries it.
PatientId = NewType("PatientId", str)


def shown_id(value: object, limit: int = 64) -> str:
    """An identifier as it may be repeated to the clinician: characters that could be markup dropped, at most
    ``limit`` long (a malformed id such as ``../../etc/passwd`` is shown, never looked up)."""
    text = _UNSHOWN_RE.sub("", str(value))
    return (text[:limit] + "…") if len(text) > limit else (text or "(unreadable)")


#: Between a patient's id and name in a list value; a record id never holds it (FHIR ids: letters, digits, - and .).
_VALUE_SEP = "|"


def list_value(patient: PatientRef) -> str:
    """A patient as a list's value (the page's patient list, the ``/select_patient`` API's input): ``"id|name"``."""
    return f"{patient['id']}{_VALUE_SEP}{patient['name']}"


def from_list_value(value: str | None) -> PatientRef | None:
    """The patient a list value names (:func:`list_value`); None for no value. A value that names no patient
    (no id, or not of that form, as an API client may send) is a ``ValueError``: never guessed at."""
    if not value:
        return None
    patient_id, sep, name = value.partition(_VALUE_SEP)
    if not sep or not patient_id.strip():
        raise ValueError(f"not a patient of the list: {shown_id(value)}")
    return PatientRef(id=patient_id, name=name)


class PatientListing(PatientRef):
    """A patient as a search or a list gives them: the reference, and the birth date a clinician tells two
    patients of one name apart by (the page's patient list, a clarification's choices)."""

    birth_date: str | None


def listing_of(match: Mapping[str, Any]) -> PatientListing:
    """A patient search's match (``{"id", "name", "birth_date", …}``; a FHIR ``birthDate`` too) as a listing."""
    return PatientListing(id=str(match.get("id", "?")), name=str(match.get("name", "?")),
                          birth_date=match.get("birth_date") or match.get("birthDate") or None)


def list_label(patient: PatientListing) -> str:
    """A patient as the page's list shows them: by name and birth date."""
    return f"{patient['name']} (born {patient['birth_date'] or '?'})"


def described(patient: PatientListing) -> str:
    """A patient as the agent's own text names them among others: "Name (born 1950-02-01, ID p1)"."""
    return f"{patient['name']} (born {patient['birth_date'] or 'unknown'}, ID {patient['id']})"
