"""The allergy check on generated product forms, through the real prescription write check: for every class of
the table and every member, the generic, brand(s), combination with each separator, strength and form, case
and salt must conflict (severe for a severe allergy), related classes must warn, unrelated drugs must not
conflict. Cases: ``tests/allergy_forms.py``."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from docgemma.clinical.drug_classes import CLASSES
from docgemma.tools.catalog.prescribe_medication import prescription_check
from docgemma.tools.write_checks import PatientFacts
from tests.allergy_forms import (
    CEPHALOSPORIN_PRODUCTS,
    PENICILLIN_ALLERGIES,
    PENICILLIN_PRODUCTS,
    UNRELATED_PRODUCTS,
    Case,
    cases,
)

ALL = cases()
BY_CLASS: dict[str, list[Case]] = defaultdict(list)
for _case in ALL:
    BY_CLASS[_case.klass].append(_case)


def allergy(text: str, criticality: str = "high") -> dict[str, Any]:
    return {"resourceType": "AllergyIntolerance", "code": {"text": text}, "criticality": criticality,
            "reaction": [{"manifestation": [{"text": "Anaphylaxis"}]}]}


def outcome(case: Case) -> str:
    """What the card says: "conflict" (severe), "warning" (cross-reactivity, not severe), "none", or other."""
    found = prescription_check({"medication_name": case.product, "dosage": "500 mg", "frequency": "twice daily"},
                               PatientFacts([allergy(case.allergy, case.criticality)], []))
    mine = [w for w in found.warnings if w.startswith(("ALLERGY", "NOT VERIFIED"))]
    severe = [w for w in found.severe if w.startswith(("ALLERGY", "NOT VERIFIED"))]
    if any(w.startswith("ALLERGY CONFLICT (SEVERE)") for w in severe):
        return "conflict"
    if mine and all(w.startswith("ALLERGY CROSS-REACTIVITY") for w in mine) and not severe:
        return "warning"
    return "none" if not mine else f"other: {mine[0][:160]}"


def wrong(items: list[Case]) -> list[tuple[str, str, str, str]]:
    return [(c.allergy, c.product, c.expect, got) for c in items if (got := outcome(c)) != c.expect]


def test_every_class_has_a_source_members_and_generated_cases() -> None:
    for cls in CLASSES:
        assert cls.source and cls.members, cls.key
        assert {c.expect for c in BY_CLASS[cls.key]} >= {"conflict", "none"}, cls.key
    assert len(ALL) > 20_000


@pytest.mark.parametrize("key", [c.key for c in CLASSES])
def test_generated_forms_sample(key: str) -> None:
    """Every member and every form kind, on a sample of the allergens (the whole matrix is the slow test)."""
    sample = [c for i, c in enumerate(BY_CLASS[key]) if i % 7 == 0 or c.expect != "conflict"]
    assert wrong(sample) == []


@pytest.mark.slow
@pytest.mark.parametrize("key", [c.key for c in CLASSES])
def test_generated_forms_every_case(key: str) -> None:
    assert wrong(BY_CLASS[key]) == []


@pytest.mark.parametrize("recorded", PENICILLIN_ALLERGIES)
def test_no_penicillin_product_reaches_a_plain_card(recorded: str) -> None:
    for product in PENICILLIN_PRODUCTS:
        assert outcome(Case(recorded, "high", product, "conflict", "penicillin")) == "conflict", (recorded, product)
    for product in UNRELATED_PRODUCTS:
        expect = "conflict" if recorded.startswith("beta-lactam") and product == "aztreonam" else "none"
        assert outcome(Case(recorded, "high", product, expect, "penicillin")) == expect, (recorded, product)


@pytest.mark.parametrize("recorded", ["Allergy to penicillin", "Augmentin", "Penicillin V allergy"])
def test_cephalosporins_warn_for_a_penicillin_allergy(recorded: str) -> None:
    for product in CEPHALOSPORIN_PRODUCTS:
        assert outcome(Case(recorded, "high", product, "warning", "penicillin")) == "warning", (recorded, product)


def test_an_unresolvable_product_needs_an_override_for_a_patient_with_allergies() -> None:
    for product in ("amoxicillin-xyzzol", "Nurofen Max"):
        found = prescription_check({"medication_name": product, "dosage": "5 mg", "frequency": "daily"},
                                   PatientFacts([allergy("Allergy to penicillin")], []))
        assert any(w.startswith(("NOT VERIFIED AGAINST ALLERGIES", "ALLERGY CONFLICT (SEVERE)")) for w in found.severe), \
            (product, found.warnings)


def test_a_product_no_source_knows_gets_no_card_whatever_the_allergies() -> None:
    """Issue 42: "blorptazine 50 mg daily" was written with one click. A name that resolves to nothing gets no card:
    the write is blocked and the clinician asked what they meant."""
    for product in ("Xyzzolam 5 mg", "Flurbocillinex", "blorptazine", "a cephalosporin"):
        for allergies in ([allergy("Allergy to penicillin")], []):
            found = prescription_check({"medication_name": product, "dosage": "5 mg", "frequency": "daily"},
                                       PatientFacts(allergies, []))
            assert found.blocked and "Which medicine did you mean?" in found.blocked, (product, found)


def test_an_allergen_the_check_cannot_identify_is_said_not_checked() -> None:
    found = prescription_check({"medication_name": "metformin", "dosage": "500 mg", "frequency": "twice daily"},
                               PatientFacts([allergy("Allergy to Zorblaxin")], []))
    assert any(w.startswith("ALLERGY NOT CHECKED") for w in found.severe)
    food = prescription_check({"medication_name": "metformin", "dosage": "500 mg", "frequency": "twice daily"},
                              PatientFacts([allergy("Allergy to peanuts"), allergy("Latex allergy")], []))
    assert not [w for w in food.warnings if w.startswith(("ALLERGY", "NOT VERIFIED"))]


def test_a_mild_allergy_warns_and_an_ungraded_one_needs_an_override() -> None:
    mild = {"resourceType": "AllergyIntolerance", "code": {"text": "ibuprofen"}, "criticality": "low",
            "reaction": [{"severity": "mild", "manifestation": [{"text": "rash"}]}]}
    ungraded = {"resourceType": "AllergyIntolerance", "code": {"text": "ibuprofen"}}
    args = {"medication_name": "naproxen 500 mg", "dosage": "500 mg", "frequency": "twice daily"}
    assert prescription_check(args, PatientFacts([mild], [])).severe == []
    assert any(w.startswith("ALLERGY CONFLICT:") for w in prescription_check(args, PatientFacts([mild], [])).warnings)
    assert prescription_check(args, PatientFacts([ungraded], [])).severe
