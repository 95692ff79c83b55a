"""The dose check of a prescription: is the dose readable, in a unit that fits the drug, within the drug's usual
maximum per dose and per day (per week for weekly drugs), at a frequency the system understands, allowed at the
patient's age, and within the mg/kg range for a child's recent weight? Figures and sources: :mod:`.dose_table`;
age and weight: :mod:`.body_weight`; parsing: :mod:`.dosing`.

Every answer the card needs is here: findings (severe ones refuse a plain approval), and for each check whether
it ran (with its source) or could not (with the reason; a check that could not run is never silent). A dose
that cannot be read, is in a unit that cannot be checked, is at or above ten times the usual maximum, or is above
a maximum at all, is severe: a unit slip written with one click is the error this exists for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docgemma.clinical.body_weight import ADULT_YEARS, Weight
from docgemma.clinical.dose_table import DoseLimit, limit_for, reference_ingredient
from docgemma.clinical.dosing import Dose, Frequency, dose_refusal, parse_dose, parse_frequency
from docgemma.clinical.name_strength import unitless_strength

__all__ = ["SANITY_MAX", "DoseCheck", "DoseFinding", "DosePatient", "DoseReview", "review_dose"]

#: Per-dose sanity range by unit family for a drug the table does not hold: beyond it the value is almost certainly
#: a typo, whatever the drug (10 g is above any single dose of a drug ordered here; 3 L above any single infusion).
SANITY_MAX = {"mass": (10_000.0, "10,000 mg (10 g)"), "volume": (3000.0, "3000 mL"),
              "units": (1_000_000.0, "1,000,000 units"), "count": (20.0, "20 tablets/capsules/puffs/drops"),
              "meq": (200.0, "200 mEq"), "mmol": (200.0, "200 mmol")}
MIN_INTERVAL_H = 1.0  # more often than hourly is not a repeating order a clinician writes in words
NEONATE_YEARS = 28 / 365.25
_SLACK = 1.000001  # float error in per-day sums (70 mg weekly is 10 mg/day, not 10.0000001)
_NOT_GIVEN = ("", "not specified")
#: A minus sign before a number that is not the dash of a range ("1-2 tablets").
_NEGATIVE = re.compile(r"(?:^\s*|[(:=]\s*)[-\u2212\u2013]\s*\d")


@dataclass(frozen=True)
class DoseFinding:
    """One finding for the card ("HEADING: text"); ``severe`` ones refuse a plain approval."""

    text: str
    severe: bool


@dataclass(frozen=True)
class DoseCheck:
    """One check and whether it ran: ``detail`` is its source, or why it could not run."""

    name: str
    ran: bool
    detail: str
    severe: bool = False
    #: A finding already says why it could not run (no second "not checked" line is needed).
    said: bool = False


@dataclass(frozen=True)
class DosePatient:
    """What the dose check knows of the patient: age in years (None: unknown), their recent weight (None: none
    within the recent window), and the latest weight on record at all (to say how old it is)."""

    age: float | None = None
    weight: Weight | None = None
    latest: Weight | None = None

    @property
    def child(self) -> bool:
        return self.age is not None and self.age < ADULT_YEARS


@dataclass
class DoseReview:
    """The dose check's answer: findings and the checks that ran or could not."""

    findings: list[DoseFinding] = field(default_factory=list)
    checks: list[DoseCheck] = field(default_factory=list)

    def add(self, text: str, severe: bool = True) -> None:
        self.findings.append(DoseFinding(text, severe))

    def ran(self, name: str, detail: str) -> None:
        self.checks.append(DoseCheck(name, True, detail))

    def skipped(self, name: str, reason: str, severe: bool = False, said: bool = False) -> None:
        self.checks.append(DoseCheck(name, False, reason, severe, said))

    @property
    def severe(self) -> bool:
        return any(f.severe for f in self.findings) or any(c.severe for c in self.checks if not c.ran)


def fmt(value: float) -> str:
    """A dose for the card: 1,000 / 2.5 / 0.25."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def review_dose(ingredients: tuple[str, ...], name: str, dosage: str, frequency: str,
                patient: DosePatient | None = None) -> DoseReview:
    """The dose, frequency, age and weight checks of one order (see the module's note). ``ingredients`` are the
    resolved product's ingredients (empty when it could not be resolved), ``name`` the product as ordered."""
    out, patient = DoseReview(), patient or DosePatient()
    # A product the resolver cannot name ("thiamine") is looked up by the name as typed: an exact table name only.
    row = limit_for(ingredients) if ingredients else limit_for((name.strip(),)) if name.strip() else None
    drug = row.drug if row else (", ".join(ingredients) or name or "this product")
    dose = _read_dose(out, dosage)
    amount = None
    if dose is not None and dose.value > 0 and dose.family != "body_mass":
        _sanity(out, dose)
        if row is not None:
            strength, unread = _strength(out, row, ingredients, name, dose)
            amount = _in_row_unit(out, row, dose, strength, unread)
    timing = _read_frequency(out, frequency)
    if row is None:
        out.skipped("Dose range", f"no dose range is known here for {drug}; check the dose against the formulary "
                                  "before approving.")
    else:
        out.ran("Dose range", row.source)
        if amount is not None:
            _maxima(out, row, amount, timing)
        _weekly(out, row, frequency, timing)
    if timing is not None:
        out.ran("Frequency", f"read as {timing.described()}")
    _age(out, row, drug, patient)
    _weight_check(out, row, drug, amount, timing, patient)
    return out


def _read_dose(out: DoseReview, dosage: str) -> Dose | None:
    dose = parse_dose(dosage)
    if _NEGATIVE.search(dosage):  # "-200 mg": the parser reads the number after the sign
        out.add(f"IMPLAUSIBLE DOSE: '{dosage}' is not a positive amount.")
        return None
    refusal = dose_refusal(dosage)  # also for a text the parser reads but only by guessing (e.g. "5,000 mg")
    if dose is None or refusal is not None:
        out.add(f"DOSE NOT UNDERSTOOD: '{dosage}': {refusal or 'it could not be read'}. Write it as a number and a "
                "unit (e.g. 500 mg) so that it can be checked.")
        return None
    elif dose.family == "body_mass":
        out.add(f"WRONG UNIT: '{dosage}' is a body weight (kg), never a dose; write the dose in mg, micrograms, "
                "units or mmol.")
    elif dose.value <= 0:
        out.add(f"IMPLAUSIBLE DOSE: '{dosage}' is not a positive amount.")
    return dose


def _read_frequency(out: DoseReview, frequency: str) -> Frequency | None:
    if frequency.strip().lower() in _NOT_GIVEN:
        out.add("FREQUENCY NOT GIVEN: the order names no frequency (e.g. twice daily, every 8 hours); edit the order "
                "to add one.", severe=False)
        out.skipped("Frequency", "no frequency was given", said=True)
        return None
    timing = parse_frequency(frequency)
    if timing is None:
        out.add(f"FREQUENCY NOT UNDERSTOOD: '{frequency}' is not a frequency this system can read (e.g. twice daily, "
                "every 8 hours); the daily dose cannot be checked. Edit the order before approving.")
        out.skipped("Frequency", f"'{frequency}' could not be read", severe=True, said=True)
        return None
    if timing.scheduled and timing.count != 1 and timing.interval_hours < MIN_INTERVAL_H:
        out.add(f"IMPLAUSIBLE FREQUENCY: '{frequency}' means a dose more often than every hour.")
    if timing.bare_once:
        # "once" alone is a one-off order, or "once daily" cut short: one dose in a day either way, so every daily
        # check below reads the same numbers; the order is written as one dose, and the card says so.
        out.add(f"FREQUENCY READ AS ONE DOSE: '{frequency}' is written as a single dose (not repeated); its daily "
                "total is the one of once daily, so the daily maxima were checked the same for either. If you meant "
                "a repeated dose, write its frequency.", severe=False)
    return timing


def _sanity(out: DoseReview, dose: Dose) -> None:
    limit, shown = SANITY_MAX[dose.family]
    amount = dose.mg if dose.mg is not None else dose.value
    if amount > limit:
        out.add(f"IMPLAUSIBLE DOSE: {fmt(dose.value)} {dose.display} per dose is above {shown}, the sanity limit "
                "for any single dose.")


def _strength(out: DoseReview, row: DoseLimit, ingredients: tuple[str, ...], name: str,
              dose: Dose) -> tuple[Dose | None, str]:
    """The strength of one tablet (capsule, puff) of a count dose: a mass the product's name gives ("amoxicillin
    500 mg capsules"), or a combination's strength its name writes with no unit ("co-amoxiclav 500/125 tablets"),
    read where that is safe (:mod:`.name_strength`) and said on the card; with why such a strength was not read."""
    strength = parse_dose(name)
    if dose.family != "count" or (strength is not None and strength.family == "mass"):
        return strength, ""
    read = unitless_strength(name, ingredients, row)
    if read is None or read.refused:
        return strength, read.refused if read else ""
    unsure = (f"; which number is which ingredient is not certain here, so the reading with the most "
              f"{reference_ingredient(row)} was checked (the stricter)" if read.uncertain else "")
    out.add(f"STRENGTH READ FROM THE PRODUCT NAME: '{read.written}' in '{name}' has no unit; one {dose.display} was "
            f"read as {read.shown()}, the only unit that puts every ingredient within its per-dose range{unsure}. "
            "Confirm the strength.", severe=False)
    return Dose(read.reference_mg, "mg", "mg", "mass", combination=True), ""


def _in_row_unit(out: DoseReview, row: DoseLimit, dose: Dose, strength: Dose | None = None,
                 unread: str = "") -> float | None:
    """The dose in the row's unit, or None after a severe finding saying why it cannot be checked. ``strength``: the
    strength of one tablet of a count dose as the product's name gives it (:func:`_strength`); ``unread``: why a
    strength the name writes was not read."""
    said = f"{fmt(dose.value)} {dose.display}"
    if dose.combination and "+" not in row.drug:
        out.add(f"DOSE CANNOT BE CHECKED: {said} is a combination strength; {row.drug} is one drug.")
        return None
    if dose.family == "mass" and row.unit == "mg":
        return dose.mg
    if dose.family == "mass" and row.mg_per_mmol and dose.mg is not None:
        return dose.mg / row.mg_per_mmol
    if (dose.family, row.unit) in (("mmol", "mmol"), ("units", "units"), ("volume", "mL")):
        return dose.value
    if dose.family in ("mmol", "meq") and row.mg_per_mmol:
        mmol = dose.value if dose.family == "mmol" else dose.value / row.meq_per_mmol
        return mmol if row.unit == "mmol" else mmol * row.mg_per_mmol
    if dose.family == "count" and strength is not None and strength.family == "mass" and strength.mg is not None \
            and row.unit == "mg" and (not strength.combination or "+" in row.drug):
        return dose.value * strength.mg
    if dose.family == "count":
        return _count(out, row, dose, unread)
    if dose.family == "units" and row.unit == "mg" and row.units_per_mg:
        return dose.value / row.units_per_mg
    if dose.family == "volume":
        out.add(f"DOSE CANNOT BE CHECKED: {said}: a volume without a known concentration cannot be checked for "
                f"{row.drug}, which is dosed in {row.unit}; write the dose in {row.unit}.")
    else:
        out.add(f"WRONG UNIT: {said}: {row.drug} is dosed in {row.unit}, not {dose.display}; write the dose in "
                f"{row.unit}.")
    return None


def _count(out: DoseReview, row: DoseLimit, dose: Dose, unread: str = "") -> float | None:
    said = f"{fmt(dose.value)} {dose.display}"
    if row.count_max is not None and dose.value > row.count_max:
        out.add(f"DOSE ABOVE MAXIMUM: {said} per dose of {row.drug} is above {fmt(row.count_max)} per dose "
                f"({row.source}).")
    if row.count_mg is not None:
        return dose.value * row.count_mg
    if row.count_max is None:
        why = f" ({unread})" if unread else ""
        out.add(f"DOSE CANNOT BE CHECKED: {said} of {row.drug}: the strength of one {dose.display} is not known "
                f"here{why}; write the dose in {row.unit}.")
    return None


def _per(row: DoseLimit) -> str:
    return "day" if row.per_days == 1 else f"{row.per_days:g} days"


def _period_total(amount: float, timing: Frequency, days: float) -> float:
    return amount if timing.count == 1 else amount * timing.per_day * days


def _maxima(out: DoseReview, row: DoseLimit, amount: float, timing: Frequency | None) -> None:
    why = f" {row.alert}." if row.alert else ""
    unit = row.unit
    if amount >= 10 * row.dose:
        out.add(f"DOSE FAR ABOVE MAXIMUM (10 TIMES OR MORE): {fmt(amount)} {unit} per dose of {row.drug} is "
                f"{amount / row.dose:,.0f} times the usual maximum of {fmt(row.dose)} {unit} ({row.source}); "
                f"likely a unit or decimal slip (mg for micrograms?).{why}")
    elif amount > row.dose * _SLACK:
        out.add(f"DOSE ABOVE MAXIMUM: {fmt(amount)} {unit} per dose of {row.drug} is above {fmt(row.dose)} {unit} "
                f"({row.source}).{why}")
    if timing is not None and timing.scheduled and row.total is not None:
        total = _period_total(amount, timing, row.per_days)
        if total > row.total * _SLACK:
            out.add(f"TOTAL DOSE ABOVE MAXIMUM: {fmt(total)} {unit} per {_per(row)} of {row.drug} is above "
                    f"{fmt(row.total)} {unit} per {_per(row)} ({row.source}).{why}")
        if timing.bare_once and row.per_days > 1 and amount * row.per_days > row.total * _SLACK:
            # Over a day "once" and "once daily" are the same total; over a week they are not: the order is written
            # as one dose, and the card says what once daily would have been.
            out.add(f"IF MEANT AS ONCE DAILY: {fmt(amount * row.per_days)} {unit} per {_per(row)} of {row.drug} would "
                    f"be above {fmt(row.total)} {unit} per {_per(row)} ({row.source}); 'once' is written as one dose "
                    f"only.{why}", severe=False)


def _weekly(out: DoseReview, row: DoseLimit, frequency: str, timing: Frequency | None) -> None:
    if not row.weekly:
        return
    weekly = timing is not None and (timing.count == 1 or timing.interval_hours >= 168 / _SLACK)
    if not weekly:
        out.add(f"WEEKLY MEDICINE: {row.drug} is given once a week; '{frequency}' is not a weekly frequency. "
                f"{row.alert} ({row.source}).")


def _age(out: DoseReview, row: DoseLimit | None, drug: str, patient: DosePatient) -> None:
    if patient.age is None:
        out.skipped("Age", "the patient's birth date is not known, so age limits and children's doses were not "
                           "checked")
        return
    if row is not None and patient.age < row.min_age:
        out.add(f"AGE CONTRAINDICATION: {drug} is not for patients under {row.min_age:g} years; this patient is "
                f"{_years(patient.age)} ({row.age_source}).")
    out.ran("Age", row.age_source if row is not None and row.min_age else "no age limit for this drug in the table")


def _years(age: float) -> str:
    return f"{age:g} years" if age >= 1 else f"{age * 12:.0f} months"


def _weight_check(out: DoseReview, row: DoseLimit | None, drug: str, amount: float | None,
                  timing: Frequency | None, patient: DosePatient) -> None:
    if not patient.child and not (row is not None and row.kg_all and patient.weight is not None):
        return
    if patient.child and patient.age is not None and patient.age < NEONATE_YEARS:
        out.skipped("Dose by weight", "neonatal doses are not in this table; check against the BNF for Children",
                    severe=True)
    elif patient.weight is None:
        latest = f" (latest on record: {patient.latest.shown()})" if patient.latest else " (none on record)"
        out.skipped("Dose by weight", f"no recent body weight for a child of {_years(patient.age or 0)}{latest}; "
                    "record today's weight before approving a dose", severe=True)
    elif row is None or (row.kg is None and row.child_dose is None):
        out.skipped("Dose by weight", f"no children's dose range is known here for {drug}; check the dose against "
                    "the BNF for Children", severe=patient.child)
    elif amount is not None:
        _per_kg(out, row, amount, timing, patient.weight)
    else:
        out.skipped("Dose by weight", "the dose could not be read in the drug's unit", severe=True)


def _per_kg(out: DoseReview, row: DoseLimit, amount: float, timing: Frequency | None, weight: Weight) -> None:
    unit, shown = row.unit, f"{row.child_source or row.source}"
    per_dose = amount / weight.kg
    said = f"{fmt(per_dose)} {unit}/kg per dose"
    if row.kg is not None and per_dose > row.kg * _SLACK:
        out.add(f"DOSE ABOVE {unit.upper()}/KG: {fmt(amount)} {unit} is {said} for {weight.shown()}, above "
                f"{fmt(row.kg)} {unit}/kg ({shown}).")
    if row.child_dose is not None and amount > row.child_dose * _SLACK:
        out.add(f"DOSE ABOVE CHILD MAXIMUM: {fmt(amount)} {unit} per dose of {row.drug} is above "
                f"{fmt(row.child_dose)} {unit} ({shown}).")
    if timing is not None and timing.scheduled and row.kg_day is not None:
        per_day = _period_total(amount, timing, 1.0) / weight.kg
        said += f", {fmt(per_day)} {unit}/kg/day"
        if per_day > row.kg_day * _SLACK:
            out.add(f"DAILY DOSE ABOVE {unit.upper()}/KG: {fmt(per_day)} {unit}/kg/day for {weight.shown()} is above "
                    f"{fmt(row.kg_day)} {unit}/kg/day ({shown}).")
    out.ran("Dose by weight", f"{said} at {weight.shown()}; {shown}")
