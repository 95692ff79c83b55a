"""One-line statements of a record query: the facts as recorded, the latest value of each result with its
date, the explicit absence, and never a dump."""

from __future__ import annotations

from typing import Any

from docgemma.tools.catalog.query_patient_data import PatientDataQueryArgs
from docgemma.tools.record_brief import MAX_ITEMS, brief


def when(resource: dict[str, Any]) -> str:
    return str(resource.get("effectiveDateTime") or resource.get("onsetDateTime") or resource.get("authoredOn") or "")


def args(**kw: Any) -> PatientDataQueryArgs:
    return PatientDataQueryArgs(patient_id="p-1", **kw)


def status(code: str) -> dict[str, Any]:
    return {"coding": [{"code": code}]}


PENICILLIN = {"resourceType": "AllergyIntolerance", "code": {"text": "Allergy to penicillin"}, "criticality": "high",
              "clinicalStatus": status("active"), "reaction": [{"manifestation": [{"text": "Anaphylaxis"}]}]}


def obs(name: str, value: float, unit: str, day: str) -> dict[str, Any]:
    return {"resourceType": "Observation", "code": {"text": name}, "effectiveDateTime": day,
            "valueQuantity": {"value": value, "unit": unit}}


def test_allergies_name_substance_reaction_and_criticality() -> None:
    assert brief(args(resource_type="AllergyIntolerance"), [PENICILLIN], when) == (
        "allergies on record: penicillin (anaphylaxis, high criticality)")


def test_refuted_or_resolved_allergies_are_not_listed_as_active_but_are_counted() -> None:
    refuted = {**PENICILLIN, "code": {"text": "latex"}, "verificationStatus": status("refuted")}
    assert brief(args(resource_type="AllergyIntolerance"), [refuted], when) == (
        "no active allergies on record (1 inactive, resolved or refuted)")
    assert brief(args(resource_type="AllergyIntolerance"), [], when) == "no active allergies on record"


def test_medications_are_the_active_list_or_an_explicit_absence() -> None:
    active = {"resourceType": "MedicationRequest", "status": "active", "medicationCodeableConcept": {"text": "metformin 500 MG"},
              "dosageInstruction": [{"text": "500 mg twice daily"}]}
    stopped = {**active, "status": "stopped", "medicationCodeableConcept": {"text": "lisinopril"}}
    assert brief(args(resource_type="MedicationRequest"), [active, stopped], when) == (
        "active medications: metformin 500 MG (500 mg twice daily) (1 stopped, completed or other orders in the record)")
    assert brief(args(resource_type="MedicationRequest", status="active"), [], when) == "no active medications on record"


def test_results_give_the_latest_value_of_each_test_with_its_date() -> None:
    records = [obs("Creatinine", 1.9, "mg/dL", "2026-09-01"), obs("eGFR", 33.0, "mL/min", "2026-09-01"),
               obs("Creatinine", 1.6, "mg/dL", "2026-05-06")]  # newest first, as the tool sorts them
    assert brief(args(name="kidney function"), records, when) == (
        "kidney function, latest: Creatinine 1.9 mg/dL (2026-09-01); eGFR 33 mL/min (2026-09-01)")
    assert brief(args(name="kidney function"), [], when) == "no kidney function results on record"


def test_a_long_list_says_how_many_more_there_are() -> None:
    records = [obs(f"Test {i}", float(i), "u", "2026-01-01") for i in range(MAX_ITEMS + 3)]
    text = brief(args(resource_type="Observation", category="laboratory"), records, when)
    assert text is not None and text.startswith("latest lab results: Test 0") and text.endswith("(+3 more in the record)")


def test_unreadable_entries_are_said_not_hidden() -> None:
    text = brief(args(resource_type="AllergyIntolerance"), [], when, skipped=1)
    assert text is not None and "could not be read" in text


def test_a_query_naming_no_section_gets_no_line() -> None:
    assert brief(args(), [PENICILLIN], when) is None
