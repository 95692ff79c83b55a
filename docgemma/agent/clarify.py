"""The clarification questions of the deterministic ask_user rules (the model never chose to ask on its own)."""

from __future__ import annotations

from typing import Any

from docgemma.clinical.patient import described, listing_of, shown_id


def patient_choice(name: str, matches: list[dict[str, Any]]) -> str:
    """"I found {n} patients matching '{name}'. Which one did you mean? {list}"."""
    listing = "; ".join(described(listing_of(m)) for m in matches)
    return f"I found {len(matches)} patients matching '{name}'. Which one did you mean? {listing}"


def missing_information(fields: list[str]) -> str:
    """Missing or invalid arguments after extraction."""
    if fields == ["patient_id"]:
        return "I need a patient ID to proceed. Could you provide one (or search for the patient by name)?"
    readable = ", ".join(f.replace("_", " ") for f in fields)
    return f"I need more information to complete this request: {readable}."


def unknown_patient(patient_id: object, active_name: str | None = None) -> str:
    """An identifier the message gave that names no patient on the record (or is not an identifier at all)."""
    kept = f" Nothing from {active_name}'s record was used in its place." if active_name else ""
    return (f"No patient with id '{shown_id(patient_id)}' is on the record.{kept} "
            "Check the ID, or search for the patient by name.")


NO_IMAGE = "Please attach the image you would like me to analyse (PNG, JPEG or DICOM)."
