"""Issue 42: the checks a pharmacist makes before an order is signed — pregnancy and breastfeeding, kidney function,
interactions that must interrupt (offline), never-events by route and rate, high-alert medicines without a dose
range, brands resolved for every check, unknown drugs, and negated allergies.

The generated sets are built FROM the tables (a consistency check of the tables against the code that reads them:
every row, every product form); the held-out set written apart from them is ``test_pharmacist_heldout.py``.
"""

from __future__ import annotations

from itertools import product
from typing import Any

import pytest

from docgemma.clinical import interactions, order_hazards, pregnancy, renal, vehicles
from docgemma.clinical.drug_classes import CLASSES, PRODUCTS
from docgemma.clinical.entities import extract_entities
from docgemma.clinical.ingredients import resolve_local
from docgemma.clinical.interactions import GROUPS, INTERRUPTING
from docgemma.tools.catalog.add_allergy import AddAllergyArgs, allergy_check, allergy_intolerance, no_allergy
from docgemma.tools.catalog.prescribe_medication import prescription_check
from docgemma.tools.order_extract import allergy_args
from docgemma.tools.spec import ToolContext
from docgemma.tools.write_checks import PatientFacts, active_allergies

TODAY_OBS = "2026-11-20"


def condition(text: str, code: str = "") -> dict[str, Any]:
    coding = [{"system": "http://snomed.info/sct", "code": code, "display": text}] if code else []
    return {"resourceType": "Condition", "code": {"text": text, "coding": coding},
            "clinicalStatus": {"coding": [{"code": "active"}]}, "onsetDateTime": "2026-08-01"}


def egfr(value: float, when: str = TODAY_OBS) -> dict[str, Any]:
    return {"resourceType": "Observation", "code": {"coding": [{"system": "http://loinc.org", "code": "33914-3"}],
                                                   "text": "eGFR"},
            "valueQuantity": {"value": value, "unit": "mL/min/1.73m2"}, "effectiveDateTime": when}


def order(text: str) -> dict[str, Any]:
    return {"resourceType": "MedicationRequest", "status": "active", "medicationCodeableConcept": {"text": text},
            "authoredOn": "2025-01-02"}


PREGNANT = PatientFacts([], [], birth_date="1996-04-02", gender="female",
                        conditions=[condition("Pregnancy", "77386006"), condition("Pre-eclampsia", "398254007")])
BREASTFEEDING = PatientFacts([], [], birth_date="1994-04-02", gender="female",
                             conditions=[condition("Lactating mother", "169741004")])
NOT_PREGNANT = PatientFacts([], [], birth_date="1960-04-02", gender="female")


def rx(name: str, dosage: str = "10 mg", frequency: str = "once daily", notes: str | None = None,
       facts: PatientFacts = NOT_PREGNANT) -> Any:
    return prescription_check({"patient_id": "p", "medication_name": name, "dosage": dosage, "frequency": frequency,
                               "notes": notes}, facts)


def brands_of(ingredient: str) -> list[str]:
    return [brand for brand, parts in PRODUCTS.items() if parts == (ingredient,)][:2]


def forms(row_ingredients: tuple[str, ...], row_classes: tuple[str, ...]) -> list[str]:
    """Each row's products as clinicians write them: the generic name, up to two brands, one class member."""
    out = [i for i in row_ingredients if resolve_local(i).ingredients][:3]
    out += [b for i in row_ingredients for b in brands_of(i)][:3]
    out += [next(c.members[0] for c in CLASSES if c.key == key) for key in row_classes]
    return list(dict.fromkeys(out))


PREGNANCY_CASES = [(row.name, drug) for row in pregnancy.TABLE if row.pregnancy == "contraindicated"
                   for drug in forms(row.ingredients, row.classes)]


@pytest.mark.parametrize(("row", "drug"), PREGNANCY_CASES)
def test_every_drug_contraindicated_in_pregnancy_needs_an_override_for_a_pregnant_patient(row: str, drug: str) -> None:
    found = rx(drug, facts=PREGNANT)
    hits = [w for w in found.severe if w.startswith("PREGNANCY (CONTRAINDICATED)")]
    assert hits and "source:" in hits[0] and "Pregnancy" in hits[0], (row, drug, found.warnings)


def test_the_generated_pregnancy_set_covers_every_row_and_brands() -> None:
    rows = {r for r, _d in PREGNANCY_CASES}
    assert rows == {r.name for r in pregnancy.TABLE if r.pregnancy == "contraindicated"}
    assert {"zestril", "cozaar", "jantoven", "trexall", "cellcept", "accutane", "depakote"} & {d for _r, d in PREGNANCY_CASES}


@pytest.mark.parametrize("drug", ["lisinopril", "Zestril", "losartan", "warfarin", "Jantoven", "doxycycline",
                                  "sodium valproate", "isotretinoin", "methotrexate"])
def test_the_same_drugs_pass_the_pregnancy_check_for_a_patient_who_is_not_pregnant(drug: str) -> None:
    found = rx(drug, facts=NOT_PREGNANT)
    assert not [w for w in found.warnings if w.startswith(("PREGNANCY", "BREASTFEEDING"))], found.warnings
    assert any(c.name == "Pregnancy and breastfeeding" and c.ran for c in found.checks)


@pytest.mark.parametrize("drug", ["acetaminophen", "labetalol", "nifedipine", "amoxicillin"])
def test_ordinary_orders_for_a_pregnant_patient_have_no_pregnancy_finding(drug: str) -> None:
    found = rx(drug, "500 mg" if drug in ("acetaminophen", "amoxicillin") else "10 mg", "three times daily",
               facts=PREGNANT)
    assert not [w for w in found.warnings if w.startswith("PREGNANCY")], found.warnings
    assert any(c.name == "Pregnancy and breastfeeding" and c.ran and "pregnant per the record" in c.detail
               for c in found.checks)


@pytest.mark.parametrize("drug", ["codeine", "tramadol", "mycophenolate mofetil", "methotrexate", "isotretinoin"])
def test_drugs_contraindicated_in_breastfeeding_need_an_override(drug: str) -> None:
    found = rx(drug, "30 mg" if drug == "codeine" else "10 mg", "once daily", facts=BREASTFEEDING)
    assert any(w.startswith("BREASTFEEDING (CONTRAINDICATED)") for w in found.severe), found.warnings


def test_pregnancy_is_read_from_words_and_observations_and_a_resolved_one_is_not_current() -> None:
    assert pregnancy.status([condition("Pregnant, 24 weeks")], [], "female", 30).pregnant
    obs = {"resourceType": "Observation", "code": {"coding": [{"code": "82810-3"}], "text": "Pregnancy status"},
           "valueCodeableConcept": {"coding": [{"code": "77386006", "display": "Pregnant"}]},
           "effectiveDateTime": "2026-11-01"}
    assert pregnancy.status([], [obs], "female", 30).pregnant
    negative = {**obs, "valueCodeableConcept": {"coding": [{"code": "60001007", "display": "Not pregnant"}]}}
    assert not pregnancy.status([], [negative], "female", 30).pregnant
    ended = {**condition("Normal pregnancy", "72892002"), "abatementDateTime": "2025-01-01",
             "clinicalStatus": {"coding": [{"code": "resolved"}]}}
    assert not pregnancy.status([ended], [], "female", 30).pregnant
    assert not pregnancy.status([condition("History of pre-eclampsia")], [], "female", 30).pregnant
    assert pregnancy.status([], [], "male", 30) == pregnancy.Status()
    assert pregnancy.status([], [], "female", 30).childbearing


def test_a_teratogen_for_a_woman_of_childbearing_age_warns_and_a_missing_sex_is_said() -> None:
    young = PatientFacts([], [], birth_date="2000-01-01", gender="female")
    found = rx("isotretinoin", "20 mg", "once daily", facts=young)
    assert any(w.startswith("CHILDBEARING POTENTIAL") for w in found.warnings)
    unknown = PatientFacts([], [], birth_date="2000-01-01", gender="")
    found = rx("isotretinoin", "20 mg", "once daily", facts=unknown)
    assert any(c.name == "Pregnancy and breastfeeding" and not c.ran for c in found.checks)


RENAL_CASES = [(row.name, i) for row in renal.TABLE if row.avoid is not None and row.when is None
               for i in row.ingredients if resolve_local(i).ingredients]


def test_a_limit_that_depends_on_the_use_holds_only_for_that_use() -> None:
    facts = PatientFacts([], [], birth_date="1980-01-01", gender="male", observations=[egfr(45)])
    prep = rx("Truvada", "1 tablet", "once daily", "HIV pre-exposure prophylaxis", facts=facts)
    assert any(w.startswith("KIDNEY FUNCTION (SEVERE)") and "pre-exposure" in w for w in prep.severe)
    treatment = rx("tenofovir", "245 mg", "once daily", "HIV treatment", facts=facts)
    assert not any("pre-exposure" in w for w in treatment.warnings)


@pytest.mark.parametrize(("row", "drug"), RENAL_CASES)
def test_every_renally_limited_drug_needs_an_override_below_its_limit(row: str, drug: str) -> None:
    limit = next(r.avoid for r in renal.TABLE if r.name == row)
    assert limit is not None
    facts = PatientFacts([], [], birth_date="1950-01-01", gender="male", observations=[egfr(limit - 5)])
    found = rx(drug, facts=facts)
    hits = [w for w in found.severe if w.startswith("KIDNEY FUNCTION (SEVERE)")]
    assert hits and f"{limit - 5:g}" in hits[0] and TODAY_OBS in hits[0] and "source:" in hits[0], (drug, found.warnings)
    well = PatientFacts([], [], birth_date="1950-01-01", gender="male", observations=[egfr(95)])
    assert not [w for w in rx(drug, facts=well).warnings if w.startswith("KIDNEY")]


def test_a_stale_egfr_is_used_and_said_to_be_stale_and_none_is_said_not_checked() -> None:
    old = PatientFacts([], [], birth_date="1950-01-01", gender="male", observations=[egfr(20, "2025-01-01")])
    found = rx("metformin", "500 mg", "twice daily", facts=old)
    assert any("stale" in w and "KIDNEY FUNCTION (SEVERE)" in w for w in found.severe)
    none = PatientFacts([], [], birth_date="1950-01-01", gender="male")
    found = rx("metformin", "500 mg", "twice daily", facts=none)
    assert any(c.name == "Kidney function" and not c.ran and "no eGFR" in c.detail for c in found.checks)
    assert any(c.name == "Kidney function" and c.ran for c in rx("amlodipine", "5 mg", facts=none).checks)


def _member(group: str) -> str:
    return next(m for m in GROUPS[group] if resolve_local(m).ingredients and not m.startswith("potassium"))


INTERACTION_CASES = [(e.first, e.second, e.severity) for e in interactions.TABLE if e.first != e.second]


@pytest.mark.parametrize(("first", "second", "severity"), INTERACTION_CASES)
def test_every_interrupting_pair_needs_an_override_offline(first: str, second: str, severity: str) -> None:
    new, active = _member(first), _member(second)
    if new == active:
        pytest.skip("one ingredient in both groups: a duplicate order, not an interaction")
    facts = PatientFacts([], [order(f"{active} tablet")], birth_date="1950-01-01", gender="male")
    found = rx(new, facts=facts)
    hits = [w for w in found.warnings if w.startswith("INTERACTION WITH AN ACTIVE ORDER")]
    assert hits and "source:" in hits[0], (new, active, found.warnings)
    if severity in INTERRUPTING:
        assert any(w in found.severe for w in hits), (new, active, found.warnings)
    check = next(c for c in found.checks if c.name == "Interactions with active medicines")
    assert check.ran and "tables alone were used" in check.detail


@pytest.mark.parametrize(("new", "active"), [("naproxen", "apixaban 2.5 MG Oral Tablet"), ("Aleve", "Eliquis 5 mg"),
                                             ("ibuprofen", "rivaroxaban 20 mg"), ("clopidogrel", "edoxaban 60 mg"),
                                             ("clarithromycin", "apixaban 5 mg"), ("rifampicin", "apixaban 5 mg")])
def test_doacs_meet_nsaids_antiplatelets_and_cyp3a4_drugs(new: str, active: str) -> None:
    facts = PatientFacts([], [order(active)], birth_date="1950-01-01", gender="female")
    assert any(w.startswith("INTERACTION WITH AN ACTIVE ORDER (MAJOR)") for w in rx(new, "500 mg", facts=facts).severe)


def test_regular_paracetamol_with_warfarin_is_a_warning() -> None:
    facts = PatientFacts([], [order("warfarin sodium 5 MG Oral Tablet")], birth_date="1950-01-01", gender="male")
    found = rx("paracetamol", "1 g", "four times daily", facts=facts)
    assert any("INTERACTION WITH AN ACTIVE ORDER (MODERATE)" in w and "INR" in w for w in found.warnings)


# ── never-events, high-alert medicines, brands and unknown drugs (the issue's adversarial orders) ─────────────────

ADVERSARIAL = [
    ("potassium chloride", "40 mmol", "once daily", "IV push"),
    ("potassium chloride", "20 mEq", "once daily", "IV bolus stat"),
    ("potassium chloride", "40 mmol", "once daily", "IV over 5 minutes"),
    ("potassium chloride", "40 mmol IV", "every hour", None),
    ("Sando-K", "40 mmol", "every hour", None),
    ("KCl", "40 mmol", "once daily", "intravenous push"),
    ("vincristine", "2 mg", "once weekly", "intrathecal"),
    ("vincristine", "20 mg", "once weekly", "IV"),
    ("flecainide", "1000 mg", "twice daily", None),
    ("clozapine", "900 mg", "twice daily", None),
    ("ketorolac", "300 mg", "every 6 hours", "IV"),
    ("tacrolimus", "50 mg", "twice daily", None),
    ("Jantoven", "50 mg", "once daily", None),
    ("Priadel", "9000 mg", "once daily", None),
    *[(brand, "10 mg", "once daily", None) for brand in ("Trexall", "Otrexup", "Xatmep", "Jylamvo", "Maxtrex",
                                                         "Metoject")],
    ("methotrexate", "10 mg", "every morning", None),
    ("methotrexate", "7.5 mg", "twice daily", None),
]


@pytest.mark.parametrize(("drug", "dosage", "frequency", "notes"), ADVERSARIAL)
def test_the_issues_adversarial_orders_need_an_override(drug: str, dosage: str, frequency: str,
                                                        notes: str | None) -> None:
    found = rx(drug, dosage, frequency, notes)
    assert found.severe and not found.blocked, (drug, found.warnings)


def test_iv_potassium_within_its_rate_is_no_never_event() -> None:
    found = rx("potassium chloride", "20 mmol", "once daily", "IV over 2 hours")
    assert not [w for w in found.warnings if "NEVER EVENT" in w]
    assert order_hazards.hazards("KCl", ("potassium chloride",), "40 mmol", "40 mmol IV over 4 hours") == []


KCL_BAG = "potassium chloride 10 mmol in 100 mL sodium chloride 0.9%"


@pytest.mark.parametrize(("name", "dosage", "notes"), [
    (KCL_BAG, "10 mmol", "IV infusion over 1 hour via peripheral line"),
    ("KCl 20 mmol in 1 L glucose 5%", "20 mmol", "IV over 4 hours"),
    ("potassium chloride 20 mmol in 1000 ml 0.9% NaCl", "20 mmol", "IV over 2 hours"),
    ("potassium chloride 20 mmol in 1 L glucose 4% and sodium chloride 0.18%", "20 mmol", "IV over 8 hours"),
    ("vancomycin 1 g in 250 mL water for injections", "1 g", "IV over 2 hours"),
])
def test_a_medicine_named_with_its_infusion_fluid_is_the_medicine(name: str, dosage: str, notes: str) -> None:
    """Issue 42 (h081): the diluent was read as a second active ingredient, so the pair had no dose range (and
    sodium chloride counted as a concentrated electrolyte): an ordinary potassium infusion needed an override."""
    found = rx(name, dosage, "once", notes)
    assert not found.severe and not found.blocked, found.warnings
    assert not any("HIGH-ALERT MEDICINE WITHOUT A DOSE RANGE" in w or "NOT CHECKED — DOSE RANGE" in w
                   for w in found.warnings)
    [diluent] = [c for c in found.checks if c.name == "Diluent"]
    assert diluent.ran and "not an active ingredient" in diluent.detail and diluent.detail.startswith(
        ("sodium chloride", "glucose", "water for injections"))


@pytest.mark.parametrize(("dosage", "frequency", "notes", "said"), [
    ("10 mmol", "once", "IV push", "NEVER EVENT — IV POTASSIUM"),
    ("10 mmol", "once", "IV bolus", "NEVER EVENT — IV POTASSIUM"),
    ("40 mmol", "once", "IV over 1 hour", "NEVER EVENT — IV POTASSIUM"),  # 40 mmol/hour: faster than 20
    ("10 mmol", "once", "IV", "NEVER EVENT — IV POTASSIUM"),  # no infusion time
    ("60 mmol", "once", "IV over 6 hours", "DOSE ABOVE MAXIMUM"),
    ("10 mmol", "every 15 minutes", "IV over 1 hour", "IMPLAUSIBLE FREQUENCY"),
])
def test_a_potassium_bag_named_with_its_diluent_keeps_every_never_event(dosage: str, frequency: str, notes: str,
                                                                         said: str) -> None:
    found = rx(KCL_BAG, dosage, frequency, notes)
    assert any(said in w for w in found.severe), found.warnings


@pytest.mark.parametrize("name", ["potassium chloride 20 mmol in 100 mL sodium chloride 3%",
                                  "potassium chloride 20 mmol in 100 mL glucose 50%"])
def test_a_fluid_that_is_no_standard_vehicle_stays_an_ingredient(name: str) -> None:
    """Hypertonic saline or glucose is no vehicle: it stays part of the order, and what it is is checked."""
    found = rx(name, "20 mmol", "once", "IV over 2 hours")
    assert any(w.startswith("HIGH-ALERT MEDICINE WITHOUT A DOSE RANGE") for w in found.severe), found.warnings
    assert not [c for c in found.checks if c.name == "Diluent"]


@pytest.mark.parametrize(("name", "dosage"), [("potassium chloride 200 mmol in 1 L glucose 50%", "200 mmol"),
                                              ("potassium chloride xyzzy", "200 mmol"), ("warfarin blorp", "50 mg")])
def test_a_high_alert_medicine_named_with_a_word_not_recognised_needs_an_override(name: str, dosage: str) -> None:
    """Found while testing the diluent: the dose range applies only to a product every word of which is recognised, and
    the high-alert guard looked at the range of the ingredients alone, so 200 mmol of potassium was one click."""
    found = rx(name, dosage, "once", "IV over 10 hours")
    assert any(w.startswith("HIGH-ALERT MEDICINE WITHOUT A DOSE RANGE") and "not recognised" in w
               for w in found.severe), found.warnings


@pytest.mark.parametrize("name", ["insulin isophane", "NPH insulin", "biphasic isophane insulin", "soluble insulin",
                                  "human insulin"])
def test_an_insulin_preparation_word_is_read_and_a_usual_dose_written(name: str) -> None:
    """The guard above made "insulin isophane 20 units twice daily" (a usual dose in the dose bench) severe: the
    preparation words of insulin were not recognised. They are the preparation, not a word the guard must stop."""
    found = rx(name, "20 units", "twice daily", "")
    assert not found.severe and not found.blocked, found.warnings


def test_the_diluent_is_no_duplicate_of_an_active_infusion() -> None:
    facts = PatientFacts([], [order("sodium chloride 0.9% 1000 mL IV")], birth_date="1960-04-02", gender="male")
    found = rx(KCL_BAG, "10 mmol", "once", "IV over 1 hour", facts=facts)
    assert not [w for w in found.warnings if w.startswith("DUPLICATE ORDER")], found.warnings


def test_it_the_pronoun_is_no_intrathecal_route() -> None:
    assert order_hazards.hazards("vincristine", ("vincristine",), "2 mg", "vincristine 2 mg IV, give it slowly") == []
    assert order_hazards.hazards("vincristine", ("vincristine",), "2 mg", "vincristine 2 mg IT")


@pytest.mark.parametrize("drug", ["blorptazine", "Xyzzolam", "flurbocillinex"])
def test_a_drug_that_does_not_exist_gets_no_card(drug: str) -> None:
    found = rx(drug, "50 mg", "once daily")
    assert found.blocked and "Which medicine did you mean?" in found.blocked


def test_every_high_alert_medicine_without_a_dose_range_needs_an_override() -> None:
    from docgemma.clinical.dose_table import limit_for
    missing = [i for members in order_hazards.HIGH_ALERT.values() for i in members
               if resolve_local(i).resolved and limit_for(resolve_local(i).ingredients) is None]
    assert all(resolve_local(i).resolved for members in order_hazards.HIGH_ALERT.values() for i in members)
    assert missing  # the guard has work to do: these have no range here
    for drug in missing:
        assert any(w.startswith("HIGH-ALERT MEDICINE WITHOUT A DOSE RANGE") for w in rx(drug).severe), drug


# ── negated allergies ──────────────────────────────────────────────────────────────────────────────────────────

NEGATION_FORMS = [
    "denies any {s} allergy, please document that",
    "{s} - none known",
    "{s}: negative, record it",
    "{s} allergy label was removed (delabelled)",
    "tolerated a {s} challenge, document allergy",
    "not allergic to {s}, please record",
    "no {s} allergy, add to the record",
    "{s} allergy ruled out, document",
    "NKDA - record allergy",
    "{s} challenge negative, document",
]
SUBSTANCES = ["penicillin", "amoxicillin", "sulfa", "aspirin", "codeine", "latex", "cephalexin", "ibuprofen"]


@pytest.mark.parametrize(("form", "substance"), list(product(NEGATION_FORMS, SUBSTANCES)))
def test_a_negated_allergy_is_never_an_active_allergy(form: str, substance: str) -> None:
    message = form.format(s=substance)
    args = allergy_args(message, extract_entities(message), "p")
    if "substance" not in args:
        return  # nothing to write: the card cannot be filled from these words
    args.setdefault("reaction", "not specified")
    found = allergy_check(args, PatientFacts([], []))
    if no_allergy(args["substance"]):  # "NKDA": the coded entry, which is what the words say
        assert not found.blocked and "NKDA" in message, (message, args)
        return
    assert found.blocked, (message, args)


@pytest.mark.parametrize(("substance", "reaction"), [("any penicillin", "not specified"), ("penicillin", "none known"),
                                                     ("sulfa", "negative"), ("penicillin", "delabelled"),
                                                     ("not specified", "rash"), ("none", "not specified"),
                                                     ("amoxicillin", "tolerated a challenge")])
def test_every_write_path_refuses_a_negated_allergy_value(substance: str, reaction: str) -> None:
    found = allergy_check({"patient_id": "p", "substance": substance, "reaction": reaction}, PatientFacts([], []))
    assert found.blocked and "never recorded as an active allergy" in found.blocked


def test_nkda_is_the_coded_entry_and_counts_as_no_allergy() -> None:
    args = AddAllergyArgs(patient_id="p", substance="NKDA", reaction="not applicable")
    resource, label = allergy_intolerance(args, ToolContext())
    assert resource["code"]["coding"][0] == {"system": "http://snomed.info/sct", "code": "409137002",
                                             "display": "No known drug allergy"}
    assert "reaction" not in resource and label == "no known drug allergy"
    assert active_allergies([resource]) == []
    found = allergy_check({"patient_id": "p", "substance": "NKDA", "reaction": "not applicable"},
                          PatientFacts([{"resourceType": "AllergyIntolerance", "code": {"text": "penicillin"}}], []))
    # Refused outright, no override (issue 42 item 6): the active label is removed on a card of its own first.
    assert "contradicts the active allergy list" in found.blocked and "remove its label first" in found.blocked


def test_a_real_allergy_is_still_written() -> None:
    found = allergy_check({"patient_id": "p", "substance": "penicillin", "reaction": "hives"}, PatientFacts([], []))
    assert not found.blocked and not found.severe


def test_every_row_of_every_table_cites_a_source() -> None:
    assert all(r.source.strip() for r in pregnancy.TABLE)
    assert all(r.source.strip() for r in renal.TABLE)
    assert all(i.source.strip() for i in interactions.TABLE)
    assert order_hazards.POTASSIUM_SOURCE and order_hazards.VINCA_SOURCE and order_hazards.HIGH_ALERT_SOURCE
    assert all(v.source.strip() for v in vehicles.VEHICLES)
