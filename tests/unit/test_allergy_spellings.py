"""How allergy records spell an allergen besides its plain name, and allergies that contraindicate a drug outright.

Found by a drug list written apart from the class table: an allergy recorded as "PCN", "NSAIDs" spelled out,
"ramipril (angioedema)" or "heparin-induced thrombocytopenia" was not identified, so every later order for
that patient needed an override ("ALLERGY NOT CHECKED") even for unrelated drugs; and sacubitril/valsartan after
ACE-inhibitor angioedema was only a cross-reactivity warning although its label contraindicates it.
"""

from __future__ import annotations

import pytest

from docgemma.tools.catalog.prescribe_medication import prescription_check
from docgemma.tools.write_checks import PatientFacts


def _allergy(text: str) -> dict[str, object]:
    return {"resourceType": "AllergyIntolerance", "code": {"text": text}, "criticality": "high",
            "clinicalStatus": {"coding": [{"code": "active"}]},
            "reaction": [{"manifestation": [{"text": "anaphylaxis"}]}]}


def _check(allergy: str, drug: str) -> tuple[list[str], list[str]]:
    found = prescription_check({"medication_name": drug, "dosage": "", "frequency": ""},
                               PatientFacts([_allergy(allergy)], []))
    about_allergy = [w for w in found.warnings if "ALLERG" in w or "CROSS" in w or "VERIFIED" in w]
    return about_allergy, [w for w in found.severe if w in about_allergy]


@pytest.mark.parametrize(("allergy", "conflicting", "unrelated"), [
    ("PCN", "Augmentin 625 mg", "metformin"),
    ("non-steroidal anti-inflammatory drugs", "naproxen sodium 550 mg", "paracetamol"),
    ("Nonsteroidal anti-inflammatory agents", "Advil", "codeine"),
    ("aspirin-exacerbated respiratory disease", "ibuprofen 400mg", "omeprazole"),
    ("ACE inhibitor angioedema", "enalapril", "amlodipine"),
    ("ramipril (angioedema)", "lisinopril 10 mg", "furosemide"),
    ("carbamazepine (SJS)", "phenytoin", "levetiracetam"),
    ("heparin-induced thrombocytopenia", "enoxaparin 40 mg sc", "warfarin"),
    ("HIT", "heparin 5000 units", "apixaban"),
])
def test_an_allergy_spelled_otherwise_is_identified(allergy: str, conflicting: str, unrelated: str) -> None:
    _, severe = _check(allergy, conflicting)
    assert severe, f"{conflicting} passed an allergy recorded as {allergy!r}"
    warnings, severe = _check(allergy, unrelated)
    assert not severe and not warnings, f"{unrelated} flagged against {allergy!r}: {warnings}"


@pytest.mark.parametrize("drug", ["Entresto", "sacubitril/valsartan", "sacubitril-valsartan 49/51 mg bd"])
def test_sacubitril_after_ace_inhibitor_angioedema_needs_an_override(drug: str) -> None:
    _, severe = _check("lisinopril", drug)
    assert severe and "contraindicated" in severe[0]


def test_an_arb_after_ace_inhibitor_angioedema_is_a_warning() -> None:
    warnings, severe = _check("ACE inhibitors", "losartan")
    assert warnings and not severe
