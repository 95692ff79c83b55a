"""Issue 42's held-out set: orders written in a clinical pharmacist's role (a project helper, not a licensed
pharmacist) from clinical knowledge alone, without reading the
project's tables or code (``tests/fixtures/heldout/pharmacist_orders_v1.json``; the brief asked for pregnancy and
breastfeeding, kidney function, interactions, route/rate and high-alert doses, allergies, a third of them ordinary
orders that must still be written; drugs as clinicians write them: generic, US/UK brands, combinations, salts).

"refuse": the order must not pass a plain Approve (no card at all, or a severe finding that needs an override with
a reason). "write": no severe finding (the order is written with one click). The first pass, run once on the
code before anything was changed for this set, is recorded in ``FIRST_PASS`` and in the README; the test holds the
set as it is now.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docgemma.tools.catalog.prescribe_medication import prescription_check
from docgemma.tools.write_checks import Findings, PatientFacts

SET = json.loads((Path(__file__).parents[1] / "fixtures" / "heldout" / "pharmacist_orders_v1.json").read_text())
CASES: list[dict[str, Any]] = SET["cases"]
TODAY_YEAR = 2026


def facts(patient: dict[str, Any]) -> PatientFacts:
    """The written patient as a record would hold them (conditions, an eGFR observation, orders, allergies)."""
    conditions: list[dict[str, Any]] = []
    if patient.get("pregnant"):
        conditions.append({"resourceType": "Condition", "code": {"text": "Pregnancy", "coding": [
            {"system": "http://snomed.info/sct", "code": "77386006"}]}, "clinicalStatus": {"coding": [{"code": "active"}]},
            "onsetDateTime": "2026-09-01"})
    if patient.get("breastfeeding"):
        conditions.append({"resourceType": "Condition", "code": {"text": "Breastfeeding (mother)"},
                           "clinicalStatus": {"coding": [{"code": "active"}]}})
    observations = [{"resourceType": "Observation", "code": {"coding": [{"system": "http://loinc.org",
                                                                         "code": "33914-3"}], "text": "eGFR"},
                     "valueQuantity": {"value": patient["egfr"]}, "effectiveDateTime": "2026-11-25"}] \
        if patient.get("egfr") is not None else []
    meds = [{"resourceType": "MedicationRequest", "status": "active", "medicationCodeableConcept": {"text": m},
             "authoredOn": "2026-01-01"} for m in patient.get("active_medications", [])]
    allergies = [{"resourceType": "AllergyIntolerance", "code": {"text": a}, "criticality": "high",
                  "clinicalStatus": {"coding": [{"code": "active"}]}} for a in patient.get("allergies", [])]
    born = f"{TODAY_YEAR - int(patient.get('age', 40)) - 1}-06-01"
    return PatientFacts(allergies, meds, birth_date=born, gender=str(patient.get("sex", "")),
                        observations=observations, conditions=conditions)


def outcome(case: dict[str, Any]) -> tuple[str, Findings]:
    order = case["order"]
    found = prescription_check({"patient_id": "p", "medication_name": order["medication_name"],
                                "dosage": order["dosage"], "frequency": order["frequency"],
                                "notes": order.get("notes")}, facts(case["patient"]))
    return ("refuse" if found.blocked or found.severe else "write"), found


#: The first pass (run once, before any change for this set): see the module docstring and the README.
FIRST_PASS = {"refuse_right": 51, "refuse_total": 62, "write_right": 29, "write_total": 32}


#: What this set still finds, by class, with why it is left (each an xfail that must keep failing until fixed, so a
#: fix shows up and the list cannot rot). None now: all 94 cases hold. The last three, ordinary orders refused, were
#: fixed as classes: "once" as the whole frequency (h081, h083), a combination's strength written without a unit
#: (h069), a medicine named with its infusion fluid (h081).
KNOWN_MISSES: dict[str, str] = {}


def _cases(expect: str) -> list[Any]:
    return [pytest.param(c, id=c["id"], marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[c["id"]]))
            if c["id"] in KNOWN_MISSES else pytest.param(c, id=c["id"]) for c in CASES if c["expect"] == expect]


@pytest.mark.parametrize("case", _cases("refuse"))
def test_every_order_a_pharmacist_would_stop_is_not_one_click(case: dict[str, Any]) -> None:
    got, found = outcome(case)
    assert got == "refuse", (case["why"], found.warnings)


@pytest.mark.parametrize("case", _cases("write"))
def test_every_ordinary_order_is_still_written_with_one_click(case: dict[str, Any]) -> None:
    got, found = outcome(case)
    assert got == "write", (case["why"], found.blocked, found.severe)
