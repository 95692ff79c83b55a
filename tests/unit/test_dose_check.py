"""The prescription's dose check (issue 30): each failure measured in the browser gets its test (a 1000× digoxin,
levothyroxine in mg, daily methotrexate, 400 mEq of potassium, 1000 units of insulin, adult doses for a child),
plus the bench's targets on a sample of generated orders through the real write check."""

from __future__ import annotations

import importlib.util
import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from docgemma.clinical import body_weight
from docgemma.clinical.dose_check import DosePatient, review_dose
from docgemma.clinical.dose_table import TABLE, limit_for
from docgemma.clinical.dosing import DOSE_TEXT_RE
from docgemma.clinical.ingredients import resolve_local
from docgemma.tools.catalog.prescribe_medication import prescription_check
from docgemma.tools.write_checks import Findings, PatientFacts

ROOT = Path(__file__).resolve().parents[2]
TODAY = date(2026, 11, 26)
ADULT = DosePatient(age=73.0)


@pytest.fixture(autouse=True)
def _fixed_day(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_weight, "today", lambda: TODAY)


def severe(drug: str, dose: str, frequency: str, patient: DosePatient = ADULT) -> list[str]:
    review = review_dose(resolve_local(drug).ingredients, drug, dose, frequency, patient)
    return [f.text for f in review.findings if f.severe] + [c.detail for c in review.checks if c.severe and not c.ran]


@pytest.mark.parametrize(("drug", "dose", "frequency", "heading"), [
    ("digoxin", "250 mg", "once daily", "DOSE FAR ABOVE MAXIMUM (10 TIMES OR MORE): 250 mg per dose of digoxin is 500"),
    ("levothyroxine", "100 mg", "once daily", "DOSE FAR ABOVE MAXIMUM (10 TIMES OR MORE): 100 mg"),
    ("fentanyl", "100 mg", "every hour", "DOSE FAR ABOVE MAXIMUM (10 TIMES OR MORE): 100 mg per dose of fentanyl"),
    ("amlodipine", "5000 mg", "once daily", "DOSE FAR ABOVE MAXIMUM (10 TIMES OR MORE): 5,000 mg"),
    ("colchicine", "6 mg", "twice daily", "DOSE ABOVE MAXIMUM: 6 mg per dose of colchicine"),
    ("insulin glargine", "1000 units", "once daily", "DOSE FAR ABOVE MAXIMUM (10 TIMES OR MORE): 1,000 units"),
    ("potassium chloride", "400 mEq", "once", "DOSE FAR ABOVE MAXIMUM (10 TIMES OR MORE): 400 mmol"),
    ("methotrexate", "10 mg", "daily", "WEEKLY MEDICINE: methotrexate is given once a week"),
    ("methotrexate", "10 mg", "not specified", "WEEKLY MEDICINE"),
    ("insulin", "10 mg", "three times daily", "WRONG UNIT: 10 mg: insulin is dosed in units"),
    ("amoxicillin", "5 kg", "three times daily", "WRONG UNIT: '5 kg' is a body weight"),
    ("amoxicillin", "5 mL", "three times daily", "DOSE CANNOT BE CHECKED: 5 mL: a volume without a known concentration"),
    ("amoxicillin", "-500 mg", "three times daily", "IMPLAUSIBLE DOSE: '-500 mg' is not a positive amount"),
    ("amoxicillin", "1.000 mg", "three times daily", "DOSE NOT UNDERSTOOD"),  # 1 or 1000: refused, never guessed
    ("amoxicillin", "five hundred thousand milligrams", "three times daily", "DOSE FAR ABOVE MAXIMUM"),  # words read
    ("lisinopril", "10 mg", "every five minutes", "IMPLAUSIBLE FREQUENCY: 'every five minutes'"),
    ("lisinopril", "10 mg", "q15m", "IMPLAUSIBLE FREQUENCY: 'q15m'"),
    ("morphine", "30 mg", "every 4 hours", "DOSE ABOVE MAXIMUM: 30 mg per dose of morphine is above 10 mg"),
])
def test_each_measured_failure_is_severe(drug: str, dose: str, frequency: str, heading: str) -> None:
    found = severe(drug, dose, frequency)
    assert any(f.startswith(heading) for f in found), found


def test_high_alert_findings_say_why() -> None:
    assert any("ISMP high-alert medicine (opioid)" in f for f in severe("oxycodone", "40 mg", "every 4 hours"))
    assert any("ISMP high-alert medicine (concentrated potassium)" in f
               for f in severe("potassium chloride", "60 mmol", "once"))


@pytest.mark.parametrize(("drug", "dose", "frequency"), [
    ("digoxin", "250 micrograms", "once daily"), ("digoxin", "125 mcg", "once daily"),
    ("levothyroxine", "100 mcg", "once daily"), ("methotrexate", "15 mg", "once weekly"),
    ("alendronate", "70 mg", "weekly"), ("alendronate", "10 mg", "once daily"),
    ("potassium chloride", "20 mmol", "twice daily"), ("potassium chloride", "600 mg", "three times daily"),
    ("insulin glargine", "24 units", "at night"), ("enoxaparin", "4000 units", "once daily"),
    ("salbutamol inhaler", "2 puffs", "four times daily"), ("co-amoxiclav", "625 mg", "three times daily"),
    ("Augmentin", "875/125 mg", "twice daily"), ("pembrolizumab", "200 mg", "every 3 weeks"),
])
def test_usual_adult_doses_pass(drug: str, dose: str, frequency: str) -> None:
    assert severe(drug, dose, frequency) == []


def test_every_drug_of_the_demo_record_and_the_issue_has_a_sourced_row() -> None:
    names = ["lisinopril", "bisoprolol", "metformin", "labetalol", "alendronate", "aspirin", "furosemide", "zopiclone",
             "donepezil", "apixaban", "paracetamol", "pembrolizumab", "warfarin", "omeprazole", "albuterol inhaler",
             "amlodipine", "atorvastatin", "digoxin", "levothyroxine", "fentanyl", "colchicine", "insulin glargine",
             "potassium chloride", "methotrexate", "codeine", "ibuprofen", "gentamicin", "oxycodone", "morphine",
             "amoxicillin", "co-amoxiclav"]
    for name in names:
        row = limit_for(resolve_local(name).ingredients)
        assert row is not None and row.source, name
    assert len(TABLE) >= 150 and all(r.source and r.dose > 0 and r.usual <= r.dose for r in TABLE)


def test_the_demo_records_own_orders_are_not_severe() -> None:
    """The record's active orders are real usual doses: none may be severe (a frequency the parser does not yet
    read, e.g. "each morning", is reported as such and nothing else)."""
    record = json.loads((ROOT / "data" / "demo" / "demo_patients.json").read_text())
    for entry in record["entry"]:
        resource = entry["resource"]
        if resource["resourceType"] != "MedicationRequest":
            continue
        text = resource["dosageInstruction"][0]["text"]
        dose = DOSE_TEXT_RE.search(text)
        assert dose is not None, text
        found = severe(resource["medicationCodeableConcept"]["text"], dose.group(0), text[dose.end():])
        assert all(f.startswith("FREQUENCY NOT UNDERSTOOD: ' each morning'") or "could not be read" in f
                   for f in found), (text, found)


def _weight(kg: float, days_ago: int, unit: str = "kg") -> dict[str, Any]:
    return {"resourceType": "Observation", "status": "final", "code": {"coding": [{"code": "29463-7"}]},
            "effectiveDateTime": (TODAY - timedelta(days=days_ago)).isoformat(),
            "valueQuantity": {"value": kg, "unit": unit, "code": unit}}


def _check(drug: str, dose: str, frequency: str, birth: str = "2020-02-14",
           observations: list[dict[str, Any]] | None = None) -> Findings:
    facts = PatientFacts(allergies=[], medications=[], birth_date=birth, observations=observations or [])
    return prescription_check({"medication_name": drug, "dosage": dose, "frequency": frequency}, facts)


def test_a_child_without_a_recent_weight_gets_a_severe_request_for_one() -> None:
    for observations in ([], [_weight(20.1, 200)]):
        found = _check("paracetamol", "250 mg", "four times daily", observations=observations)
        assert any(s.startswith("NOT CHECKED — DOSE BY WEIGHT: no recent body weight for a child of 6 years")
                   for s in found.severe), found.severe
    infant = _check("paracetamol", "60 mg", "four times daily", birth="2025-09-01", observations=[_weight(7, 40)])
    assert any("DOSE BY WEIGHT" in s for s in infant.severe), "under 2 years a weight older than a month is stale"


def test_a_child_with_a_weight_gets_mg_per_kg_with_the_weight_and_its_date() -> None:
    ok = _check("paracetamol", "300 mg", "four times daily", observations=[_weight(21400, 10, "g")])
    [line] = [c for c in ok.checks if c.name == "Dose by weight"]
    weighed = (TODAY - timedelta(days=10)).isoformat()
    assert line.ran and line.detail.startswith(f"14 mg/kg per dose, 56.1 mg/kg/day at 21.4 kg on {weighed}")
    assert not ok.severe
    one_gram = _check("paracetamol", "1 g", "four times daily", observations=[_weight(47.18, 10, "lb")])
    assert any(s.startswith(f"DOSE ABOVE MG/KG: 1,000 mg is 46.7 mg/kg per dose for 21.4 kg on {weighed}")
               for s in one_gram.severe), one_gram.severe


@pytest.mark.parametrize(("drug", "dose", "frequency", "limit"), [
    ("codeine", "30 mg", "every 4 hours", 12), ("tramadol", "50 mg", "four times daily", 12),
    ("aspirin", "300 mg", "qds", 16), ("doxycycline", "100 mg", "twice daily", 8),
])
def test_age_contraindications_are_severe_with_their_source(drug: str, dose: str, frequency: str, limit: int) -> None:
    found = _check(drug, dose, frequency, observations=[_weight(21.4, 10)])
    assert any(s.startswith(f"AGE CONTRAINDICATION: {drug} is not for patients under {limit} years; this patient "
                            "is 6 years (") for s in found.severe), found.severe


def test_unknown_birth_date_and_unknown_drug_are_said_never_silent() -> None:
    found = _check("amoxicillin", "500 mg", "three times daily", birth="")
    assert any(w.startswith("NOT CHECKED — AGE: the patient's birth date is not known") for w in found.warnings)
    assert not found.severe and not all(c.ran for c in found.checks)
    unknown = _check("zuranolone", "50 mg", "once daily", birth="1980-01-01")
    assert any(w.startswith("NOT CHECKED — DOSE RANGE: no dose range is known here") for w in unknown.warnings)
    [dose_range] = [c for c in unknown.checks if c.name == "Dose range"]
    assert not dose_range.ran
    ran = _check("amoxicillin", "500 mg", "three times daily", birth="1980-01-01")
    assert [c.detail for c in ran.checks if c.name == "Dose range"] == ["US label (Amoxil)"]


def test_bench_targets_on_a_sample_through_the_real_write_check() -> None:
    spec = importlib.util.spec_from_file_location("bench_dose_orders", ROOT / "bench" / "bench_dose_orders.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.run(sample=1500)
    assert result["dangerous"] > 1000 and result["usual"] > 50
    assert result["dangerous_passing_plain_approval"] == 0, result["passed"][:5]
    assert result["severe_on_usual_rate"] <= 0.02, result["false_severe"][:5]


def warnings(drug: str, dose: str, frequency: str) -> list[tuple[str, bool]]:
    review = review_dose(resolve_local(drug).ingredients, drug, dose, frequency, ADULT)
    return [(f.text, f.severe) for f in review.findings]


@pytest.mark.parametrize(("drug", "dose"), [("vincristine", "2 mg"), ("potassium chloride", "10 mmol"),
                                            ("ceftriaxone", "2 g"), ("ondansetron", "4 mg")])
def test_once_is_one_dose_checked_like_once_daily_and_the_card_says_so(drug: str, dose: str) -> None:
    """Issue 42 (h081, h083): a one-off order written "once" was refused as an unreadable frequency."""
    found = warnings(drug, dose, "once")
    assert not any(severe for _text, severe in found), found
    assert any(text.startswith("FREQUENCY READ AS ONE DOSE: 'once' is written as a single dose") for text, _ in found)
    review = review_dose(resolve_local(drug).ingredients, drug, dose, "once", ADULT)
    assert [c.detail for c in review.checks if c.name == "Frequency"] == ["read as a single dose"]


@pytest.mark.parametrize(("drug", "dose", "frequency"), [
    ("methotrexate", "10 mg", "once daily"), ("methotrexate", "10 mg", "daily"), ("vincristine", "2 mg", "once daily"),
    ("potassium chloride", "60 mmol", "once"), ("vincristine", "3 mg", "once"), ("digoxin", "250 mg", "once"),
])
def test_once_checks_the_same_numbers_and_once_daily_keeps_its_meaning(drug: str, dose: str, frequency: str) -> None:
    assert any(severe for _text, severe in warnings(drug, dose, frequency))


@pytest.mark.parametrize("drug", ["methotrexate", "alendronate", "vincristine"])
def test_once_for_a_drug_limited_per_week_says_what_once_daily_would_be(drug: str) -> None:
    """Over a day "once" and "once daily" are the same total; over a week they are not: the order is written as one
    dose, and the card says that once daily would be above the weekly maximum."""
    dose = {"methotrexate": "10 mg", "alendronate": "70 mg", "vincristine": "2 mg"}[drug]
    found = warnings(drug, dose, "once")
    said = [text for text, severe in found if text.startswith("IF MEANT AS ONCE DAILY:") and not severe]
    assert said and "per 7 days" in said[0], found


@pytest.mark.parametrize(("name", "count", "read"), [
    ("co-amoxiclav 500/125 tablets", "1 tablet", "amoxicillin 500 mg + clavulanate 125 mg"),
    ("co-amoxiclav 250/125", "2 tablets", "amoxicillin 250 mg + clavulanate 125 mg"),
    ("Augmentin 875/125 tablets", "1 tablet", "amoxicillin 875 mg + clavulanate 125 mg"),
    # Named trimethoprim first by the table, written sulfamethoxazole first: the numbers are not read by name order.
    ("co-trimoxazole 800/160 tablets", "1 tablet", "trimethoprim 160 mg + sulfamethoxazole 800 mg"),
    ("co-trimoxazole 400/80 tablets", "2 tablets", "trimethoprim 80 mg + sulfamethoxazole 400 mg"),
])
def test_a_combination_strength_written_without_a_unit_is_read_per_ingredient(name: str, count: str, read: str) -> None:
    """Issue 42 (h069): the UK way of naming a combination's strength ("co-amoxiclav 500/125 tablets") was refused
    as a tablet of unknown strength; it is read in mg where every ingredient then fits, and the card says so."""
    found = warnings(name, count, "twice daily")
    assert not any(severe for _text, severe in found), found
    said = [t for t, _ in found if t.startswith("STRENGTH READ FROM THE PRODUCT NAME:")]
    assert said and read in said[0] and name in said[0], found


@pytest.mark.parametrize(("name", "count", "heading"), [
    # Read as mg, then checked: too many tablets is still above the maximum.
    ("co-amoxiclav 500/125 tablets", "3 tablets", "DOSE ABOVE MAXIMUM: 1,500 mg"),
    ("co-trimoxazole 400/80 tablets", "8 tablets", "DOSE ABOVE MAXIMUM: 3,200 mg"),
    # A strength in grams (or micrograms) read as mg fits no per-dose range: not read, the dose cannot be checked.
    ("piperacillin/tazobactam 4/0.5 tablets", "2 tablets", "DOSE CANNOT BE CHECKED"),
    ("co-amoxiclav 1/0.2 tablets", "1 tablet", "DOSE CANNOT BE CHECKED"),
    ("co-amoxiclav 500000/125000 tablets", "1 tablet", "DOSE CANNOT BE CHECKED"),
    ("co-amoxiclav 500/125/5 tablets", "1 tablet", "DOSE CANNOT BE CHECKED"),
])
def test_a_unitless_strength_never_makes_a_wrong_dose_look_fine(name: str, count: str, heading: str) -> None:
    found = warnings(name, count, "twice daily")
    assert any(severe and text.startswith(heading) for text, severe in found), found


def test_an_inhaler_strength_in_micrograms_is_never_read_as_mg() -> None:
    """"250/50" of an inhaler is micrograms: read as mg it is far above any single dose of either ingredient, so it is
    refused whatever the combination's own row (one is made up here: the table has no inhaler combination)."""
    from docgemma.clinical.dose_table import DoseLimit
    from docgemma.clinical.name_strength import unitless_strength

    row = DoseLimit("fluticasone+salmeterol", "mg", 0.25, "twice daily", 1, 2, "test row")
    for name in ("Seretide 250/50", "fluticasone/salmeterol 500/50 inhaler", "fluticasone/salmeterol 100/50"):
        read = unitless_strength(name, ("fluticasone", "salmeterol"), row)
        assert read is not None and read.refused and not read.amounts, (name, read)
    assert unitless_strength("Augmentin 875/125 mg tablets", ("amoxicillin", "clavulanate"),
                             limit_for(("amoxicillin", "clavulanate"))) is None  # a unit written: read as before
