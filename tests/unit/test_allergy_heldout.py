"""The allergy check on a product list written apart from its class table (tests/fixtures/heldout/).

The list was written by someone who had not read the table (brands, combinations, salts, strengths, UK/US
names, per class, plus unrelated drugs and strings that are not drugs). First pass, before anything was tuned
to it: every expected conflict flagged (the 9 sacubitril/valsartan cases only as a warning), every
cross-reactivity warning given, 79 of 475 unrelated drugs needing an override because the recorded allergy's
spelling was not understood. The spellings and the sacubitril contraindication were then added; this test keeps
the list whole.

One deliberate disagreement with the list: an allergy recorded as a combination ("Bactrim", "co-trimoxazole")
flags each of its ingredients, trimethoprim included. The record does not say which ingredient caused the
reaction, so the check cannot clear either one; the clinician overrides with a reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docgemma.tools.catalog.prescribe_medication import prescription_check
from docgemma.tools.write_checks import PatientFacts

DATA = Path(__file__).parents[1] / "fixtures" / "heldout"
PRODUCTS = json.loads((DATA / "allergy_products.json").read_text())
UNRESOLVABLE = json.loads((DATA / "unresolvable_drugs.json").read_text())["strings"]
COMBINATION_ALLERGIES = {("Bactrim", "trimethoprim"), ("co-trimoxazole", "trimethoprim")}


def _check(allergy: str, drug: str) -> tuple[list[str], list[str]]:
    record: dict[str, Any] = {"resourceType": "AllergyIntolerance", "code": {"text": allergy}, "criticality": "high",
                              "clinicalStatus": {"coding": [{"code": "active"}]},
                              "reaction": [{"manifestation": [{"text": "anaphylaxis"}]}]}
    found = prescription_check({"medication_name": drug, "dosage": "", "frequency": ""}, PatientFacts([record], []))
    about = [w for w in found.warnings if "ALLERG" in w or "CROSS" in w or "VERIFIED" in w]
    return about, [w for w in found.severe if w in about]


def test_every_product_of_a_class_needs_an_override() -> None:
    missed = [(allergy, product) for info in PRODUCTS["classes"].values()
              for allergy in info["recorded_allergy_examples"] for product in info["products"]
              if not _check(allergy, product)[1]]
    assert not missed


def test_cross_class_expectations() -> None:
    missed = []
    for case in PRODUCTS["cross_class"]:
        allergies = PRODUCTS["classes"][case["recorded_allergy_class"]]["recorded_allergy_examples"]
        products = case.get("products") or PRODUCTS["classes"][case["products_of_class"]]["products"]
        for allergy in allergies:
            for product in products:
                warnings, severe = _check(allergy, product)
                ok = bool(severe) if case["severity_expected"] == "conflict" else bool(warnings)
                if not ok:
                    missed.append((allergy, product))
    assert not missed


def test_unrelated_drugs_do_not_conflict() -> None:
    flagged = [(allergy, drug) for cls, drugs in PRODUCTS["unrelated"].items()
               for allergy in PRODUCTS["classes"][cls]["recorded_allergy_examples"] for drug in drugs
               if _check(allergy, drug)[0] and (allergy, drug) not in COMBINATION_ALLERGIES]
    assert not flagged


def test_a_string_that_is_not_a_drug_needs_an_override_or_gets_no_card() -> None:
    """Issue 42: a name no source knows gets no card at all (the clinician is asked what they meant); a name with
    an unknown part still needs an override against the allergy list."""
    def refused(drug: str) -> bool:
        found = prescription_check({"medication_name": drug, "dosage": "", "frequency": ""}, PatientFacts([], []))
        return bool(found.blocked) or bool(_check("penicillin", drug)[1])
    silent = [s for s in UNRESOLVABLE if not refused(s)]
    assert not silent
