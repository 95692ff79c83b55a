"""Generated prescriptions for the dose check (``bench/bench_dose_orders.py`` and ``tests/unit/test_dose_orders.py``):
every drug of the dose table × dose (usual, 10×, 1000×, wrong unit, kg, negative, in words) × frequency (the usual
one, "every five minutes", "q15m", none, and "daily" for a weekly drug) × patient (adult, a 6-year-old of 21.4 kg
weighed last week, a 6-year-old with no weight). Each order says whether a plain approval must be refused
(``dangerous``) or must pass (``usual``); orders that are neither are counted apart: a usual dose with no
frequency (a warning), and an adult's 10× dose that is still within the source's maximum (bumetanide 1 mg → 10 mg:
a dose the source allows)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from docgemma.clinical.dose_table import TABLE, DoseLimit

ADULT, CHILD_WEIGHED, CHILD_UNWEIGHED = "adult", "child with weight", "child without weight"
PATIENTS = (ADULT, CHILD_WEIGHED, CHILD_UNWEIGHED)
CHILD_AGE, CHILD_KG = 6, 21.4
_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_UNIT_WORDS = {"mg": "milligrams", "mcg": "micrograms", "units": "units", "mmol": "millimoles", "mL": "millilitres"}
DANGEROUS_FREQUENCIES = ("every five minutes", "q15m")
#: The name a clinician types where the table's ingredient name is not one (ferrous → ferrous sulfate).
NAMES = {"ferrous": "ferrous sulfate"}


@dataclass(frozen=True)
class Order:
    drug: str
    dosage: str
    frequency: str
    patient: str
    variant: str
    dangerous: bool
    usual: bool


def words(value: float) -> str:
    """A number in words ("two hundred and fifty", "zero point two five"), as a dose typed in words."""
    if value != int(value):
        whole, _, frac = f"{value:g}".partition(".")
        return f"{words(float(whole))} point {' '.join(_ONES[int(d)] for d in frac)}"
    n = int(value)
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + (f"-{_ONES[n % 10]}" if n % 10 else "")
    if n < 1000:
        return f"{_ONES[n // 100]} hundred" + (f" and {words(n % 100)}" if n % 100 else "")
    if n < 1_000_000:
        return f"{words(n // 1000)} thousand" + (f" {words(n % 1000)}" if n % 1000 else "")
    return f"{words(n // 1_000_000)} million" + (f" {words(n % 1_000_000)}" if n % 1_000_000 else "")


def _written(row: DoseLimit, value: float) -> tuple[float, str]:
    """A usual dose as a clinician writes it: micrograms below 1 mg."""
    return (round(value * 1000, 3), "mcg") if row.unit == "mg" and value < 1 else (value, row.unit)


def plain(value: float) -> str:
    """A number as typed: 2400000, 0.25 (never 2.4e+06)."""
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _amount(value: float, unit: str) -> str:
    return f"{plain(value)} {unit}"


def _typed(value: float) -> float:
    """A computed dose as a clinician would write it: two significant figures (6.8 mg, not 6.848 mg)."""
    return float(f"{value:.2g}")


def child_usual(row: DoseLimit) -> float | None:
    """A usual dose for a 21.4 kg child: 80% of the mg/kg maximum (within the child's cap and the per-day
    maximum at the usual frequency), or the child's fixed dose; None when the table holds no children's figure."""
    if row.kg is not None:
        dose = 0.8 * row.kg * CHILD_KG
        if row.kg_day is not None:
            dose = min(dose, 0.8 * row.kg_day * CHILD_KG / _per_day(row.usual_frequency))
        return _typed(min(dose, row.child_dose or dose, row.dose))
    if row.child_dose is None:
        return None
    day = row.total / _per_day(row.usual_frequency) if row.total is not None and row.per_days == 1 else row.child_dose
    return min(row.child_dose, day)


def _per_day(frequency: str) -> float:
    from docgemma.clinical.dosing import parse_frequency

    timing = parse_frequency(frequency)
    return 1.0 if timing is None or timing.count == 1 else timing.per_day


def within_maximum(row: DoseLimit, dose: float) -> bool:
    """Whether ``dose`` (in the row's unit) at the usual frequency is within the source's adult maxima: a 10×
    dose that is (bumetanide 1 mg → 10 mg) is a dose the source allows, not an error the check can know of."""
    total = dose * (row.per_days if row.per_days > 1 and row.weekly else _per_day(row.usual_frequency) * row.per_days)
    return dose <= row.dose and (row.total is None or total <= row.total * 1.000001)


def _doses(row: DoseLimit, usual: float, adult: bool) -> list[tuple[str, str, bool | None]]:
    value, unit = _written(row, usual)
    wrong = "mg" if row.unit in ("units", "mL") else "mL" if row.units_per_mg else "units"
    tenfold = None if adult and within_maximum(row, usual * 10) else True
    return [("usual", _amount(value, unit), False), ("10x", _amount(value * 10, unit), tenfold),
            ("1000x", _amount(value * 1000, unit), True), ("wrong unit", _amount(value, wrong), True),
            ("kg", _amount(value, "kg"), True), ("negative", f"-{plain(value)} {unit}", True),
            # A number in words is read (clinical/numbers.py) or refused, never guessed: the usual dose in words
            # must pass as the usual dose does, and 1000x in words must be caught as 1000x is.
            ("in words", f"{words(value)} {_UNIT_WORDS[unit]}", False),
            ("1000x in words", f"{words(value * 1000)} {_UNIT_WORDS[unit]}", True)]


def _frequencies(row: DoseLimit) -> list[tuple[str, bool | None]]:
    """(frequency, dangerous): None for a missing frequency (a warning, not counted either way)."""
    out: list[tuple[str, bool | None]] = [(row.usual_frequency, False)]
    out += [(f, True) for f in DANGEROUS_FREQUENCIES]
    out.append(("not specified", True if row.weekly else None))
    if row.weekly or row.per_days > 1:
        out.append(("daily", True))
    return out


def orders(rows: tuple[DoseLimit, ...] = TABLE) -> list[Order]:
    """Every generated order (see the module's note)."""
    out: list[Order] = []
    for row in rows:
        for patient in PATIENTS:
            usual = row.usual if patient == ADULT else child_usual(row)
            child_severe = patient == CHILD_UNWEIGHED or usual is None or row.min_age > CHILD_AGE
            for variant, dosage, bad_dose in _doses(row, usual if usual is not None else row.usual, patient == ADULT):
                for frequency, bad_frequency in _frequencies(row):
                    bad = bad_dose
                    if variant == "10x" and bad_frequency is None and patient == ADULT and usual is not None \
                            and usual * 10 <= row.dose:
                        bad = None  # no frequency: only the per-dose maximum can be known, and it allows this
                    dangerous = bool(bad) or bool(bad_frequency) or (patient != ADULT and child_severe)
                    neither = not dangerous and (bad is None or bad_frequency is None)
                    out.append(Order(NAMES.get(row.drug, row.drug.replace("+", "/")), dosage, frequency, patient,
                                     variant + (" (within the source's maximum)" if bad is None else ""),
                                     dangerous, not dangerous and not neither))
    return out


def patient_resources(today: date) -> dict[str, list[dict[str, Any]]]:
    """The three test patients (Patient resources, and the child's body weight of a week ago)."""
    def patient(pid: str, born: date) -> dict[str, Any]:
        return {"resourceType": "Patient", "id": pid, "name": [{"family": pid, "given": ["Test"]}],
                "birthDate": born.isoformat(), "gender": "unknown"}

    child_born = today.replace(year=today.year - CHILD_AGE) - timedelta(days=30)
    weight = {"resourceType": "Observation", "status": "final",
              "code": {"coding": [{"system": "http://loinc.org", "code": "29463-7", "display": "Body weight"}]},
              "subject": {"reference": "Patient/dose-child-weighed"},
              "effectiveDateTime": (today - timedelta(days=7)).isoformat(),
              "valueQuantity": {"value": CHILD_KG, "unit": "kg", "system": "http://unitsofmeasure.org", "code": "kg"}}
    return {ADULT: [patient("dose-adult", today.replace(year=today.year - 45))],
            CHILD_WEIGHED: [patient("dose-child-weighed", child_born), weight],
            CHILD_UNWEIGHED: [patient("dose-child-unweighed", child_born)]}
