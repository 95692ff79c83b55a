"""Kidney function and the drugs it limits: the latest eGFR (or creatinine clearance) on record, dated, and a
table of drugs with renal limits, each row with its thresholds and source.

Below a row's ``avoid`` threshold an order is a severe finding (an override with a reason); below ``adjust`` it is a
warning with the advice. A value older than :data:`STALE_DAYS` is used but said to be stale; no value at all is
said on the card for a drug the table lists (the check could not be made). Thresholds are in mL/min/1.73 m² (a
creatinine clearance is read the same way: the labels state both). Data and pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from docgemma.fhir import codings, display_text

#: LOINC codes of an eGFR (CKD-EPI, MDRD, by any equation) and of a creatinine clearance.
EGFR_LOINC = frozenset({"33914-3", "62238-1", "48642-3", "48643-1", "98979-8", "50044-7", "50210-4", "88293-6",
                        "88294-4", "69405-9", "77147-7", "94677-1"})
CRCL_LOINC = frozenset({"2164-2", "13449-5", "35591-7"})
#: An eGFR older than this (days) is stale: still used, and said to be old.
STALE_DAYS = 90


@dataclass(frozen=True)
class Kidney:
    """The latest kidney-function value: ``value`` (None: none on record), what it is, its date and age in days."""

    value: float | None = None
    name: str = ""
    when: str = ""
    days: int | None = None

    @property
    def stale(self) -> bool:
        return self.days is not None and self.days > STALE_DAYS

    def described(self) -> str:
        if self.value is None:
            return "no eGFR or creatinine clearance on record"
        age = f", {self.days} days ago" if self.days is not None else ""
        return f"{self.name} {self.value:g} on {self.when or 'an unknown date'}{age}" + (" — STALE" if self.stale else "")


def latest(observations: list[dict[str, Any]], today: date | None = None) -> Kidney:
    """The newest eGFR or creatinine clearance in ``observations`` (by LOINC code, or by its name)."""
    found: list[tuple[str, float, str]] = []
    for obs in observations:
        codes = {c.get("code") for c in codings(obs, ("code",))}
        shown = display_text(obs)
        lowered = shown.lower()
        is_egfr = bool(codes & EGFR_LOINC) or "egfr" in lowered or "glomerular filtration" in lowered
        is_crcl = bool(codes & CRCL_LOINC) or "creatinine clearance" in lowered
        value = (obs.get("valueQuantity") or {}).get("value")
        if (is_egfr or is_crcl) and isinstance(value, (int, float)):
            found.append((str(obs.get("effectiveDateTime") or obs.get("issued") or "")[:10], float(value),
                          "eGFR" if is_egfr else "creatinine clearance"))
    if not found:
        return Kidney()
    when, value, name = max(found, key=lambda f: f[0])
    try:
        days: int | None = ((today or date.today()) - date.fromisoformat(when)).days
    except ValueError:
        days = None
    return Kidney(value, name, when, days)


@dataclass(frozen=True)
class Row:
    """A drug (or drugs) with renal limits: below ``avoid`` severe, below ``adjust`` a warning with ``advice``;
    ``daily``: (below this eGFR, the most per day in ``unit``) — a dose above the renally adjusted maximum is severe;
    ``doses``: (below this eGFR, the most doses a day) — e.g. treatment-dose enoxaparin once daily below 30."""

    name: str
    ingredients: tuple[str, ...]
    avoid: float | None
    adjust: float | None
    advice: str
    source: str
    daily: tuple[tuple[float, float], ...] = ()
    unit: str = "mg"
    doses: tuple[tuple[float, float], ...] = ()
    #: The row holds only for an order whose words name this use (a limit that depends on the indication).
    when: re.Pattern[str] | None = None


_NSAIDS = ("ibuprofen", "naproxen", "diclofenac", "ketorolac", "celecoxib", "indomethacin", "meloxicam", "etoricoxib",
           "piroxicam", "ketoprofen", "mefenamic acid", "etodolac", "nabumetone")
TABLE: tuple[Row, ...] = (
    Row("metformin", ("metformin",), 30, 45, "contraindicated below 30; starting it at 30-45 is not recommended "
        "(lactic acidosis)", "Glucophage label, 4 Contraindications and 5.1; MHRA 2016"),
    Row("nitrofurantoin", ("nitrofurantoin",), 30, 45, "ineffective and toxic below 30 (peripheral neuropathy); "
        "a short course only at 30-44", "Macrobid label, 4; MHRA Drug Safety Update 2014; BNF"),
    Row("apixaban", ("apixaban",), 15, 30, "not recommended below 15; at 15-29 use the reduced dose and review",
        "Eliquis label, 2.2 and 8.6; BNF"),
    Row("rivaroxaban", ("rivaroxaban",), 15, 50, "avoid below 15; at 15-49 reduce the dose (AF: 15 mg daily)",
        "Xarelto label, 2.2 and 8.6; BNF"),
    Row("edoxaban", ("edoxaban",), 15, 50, "avoid below 15; at 15-50 reduce to 30 mg daily",
        "Savaysa/Lixiana label, 2.1 and 8.6; BNF"),
    Row("dabigatran", ("dabigatran",), 30, 50, "contraindicated below 30; at 30-50 consider the lower dose",
        "Pradaxa label, 2.1 and 4 (EU SmPC: CrCl < 30 contraindicated); BNF"),
    Row("aminoglycosides", ("gentamicin", "amikacin", "tobramycin", "streptomycin"), None, 60,
        "nephrotoxic and ototoxic: extend the interval and dose by levels", "gentamicin label, Boxed Warning and 2; "
        "BNF (aminoglycosides: renal impairment)"),
    Row("NSAIDs", _NSAIDS, 30, 60, "avoid below 30 (further renal injury); use the lowest dose for the shortest "
        "time below 60", "NSAID labels, 5 Warnings (renal toxicity); BNF: avoid if eGFR < 30"),
    Row("spironolactone", ("spironolactone",), 30, 45, "hyperkalaemia: not below 30; check potassium closely at "
        "30-45", "Aldactone label, 2.2 and 5.1; BNF"),
    Row("eplerenone", ("eplerenone",), 30, 50, "contraindicated below 30 (hyperkalaemia)",
        "Inspra label, 4 Contraindications; BNF"),
    Row("lithium", ("lithium", "lithium carbonate"), 30, 60, "avoid below 30; reduce the dose and check levels "
        "below 60", "lithium labels, 2 and 5; BNF"),
    Row("methotrexate", ("methotrexate",), 30, 60, "toxicity: avoid below 30 (BNF: below 20); reduce the dose "
        "below 60", "methotrexate label, 2 and 8.6; BNF"),
    Row("co-trimoxazole and trimethoprim", ("trimethoprim", "sulfamethoxazole"), 15, 30,
        "avoid below 15; half the dose at 15-30 (and hyperkalaemia)", "Bactrim label, 2; BNF"),
    Row("gabapentin", ("gabapentin",), None, 60, "reduce the dose (accumulation, sedation)",
        "Neurontin label, 2.4 (CrCl 30-59: 400-1400 mg/day; 15-29: 200-700; below 15: 100-300)",
        daily=((60, 1400), (30, 700), (15, 300))),
    Row("pregabalin", ("pregabalin",), None, 60, "reduce the dose (accumulation, sedation)",
        "Lyrica label, 2.5 (CrCl 30-60: 75-300 mg/day; 15-30: 25-150; below 15: 25-75)",
        daily=((60, 300), (30, 150), (15, 75))),
    Row("enoxaparin", ("enoxaparin",), None, 30, "reduce to once daily (1 mg/kg) below 30 (bleeding)",
        "Lovenox label, 2.3 and 8.6; BNF", doses=((30, 1),)),
    Row("digoxin", ("digoxin",), None, 50, "reduce the dose and check levels (toxicity)",
        "Lanoxin label, 2.3; BNF"),
    Row("colchicine", ("colchicine",), 10, 30, "avoid below 10 and on dialysis; reduce the dose or interval below "
        "30 (toxicity)", "Colcrys label, 2.5; BNF (colchicine: avoid if eGFR < 10)"),
    Row("sulfonylureas cleared by the kidney", ("glyburide", "glibenclamide", "chlorpropamide"), 30, 60,
        "prolonged hypoglycaemia: avoid in severe renal impairment", "BNF (glibenclamide: avoid in severe renal "
        "impairment); Diabeta label, 8.6"),
    Row("metformin (maximum dose)", ("metformin",), None, None, "at eGFR 30-45 no more than 1,000 mg a day",
        "MHRA 2016; BNF (metformin: eGFR 30-44, max 1 g daily)", daily=((45, 1000),)),
    Row("potassium supplements", ("potassium chloride", "potassium citrate", "potassium bicarbonate"), None, 30,
        "hyperkalaemia: check potassium before and after", "potassium chloride label, 5; BNF"),
    Row("sitagliptin", ("sitagliptin",), None, 45, "reduce the dose (50 mg at 30-44, 25 mg below 30)",
        "Januvia label, 2.2"),
    Row("tenofovir disoproxil for pre-exposure prophylaxis", ("tenofovir",), 60, None,
        "not recommended for HIV pre-exposure prophylaxis below a creatinine clearance of 60",
        "Truvada label, 2.3 and 5.x (PrEP: CrCl < 60 not recommended)",
        when=re.compile(r"\bprep\b|pre-?exposure", re.IGNORECASE)),
    Row("antivirals cleared by the kidney", ("aciclovir", "acyclovir", "valaciclovir", "valacyclovir", "tenofovir"),
        None, 50, "reduce the dose or interval", "Zovirax, Valtrex and Viread labels, 2; BNF"),
    Row("alendronate", ("alendronate", "alendronic acid"), 35, None, "not recommended below 35",
        "Fosamax label, 2.6"),
    Row("morphine", ("morphine",), None, 30, "accumulation of active metabolites: reduce the dose or choose "
        "another opioid", "BNF (morphine: renal impairment)"),
)

SOURCE = "renal table (FDA labels 2, 4 and 8.6; MHRA; BNF)"


def rows_for(ingredients: tuple[str, ...], order: str = "") -> list[Row]:
    """The rows for ``ingredients``; a row that holds only for one use, only when ``order`` (the order's words)
    names it."""
    names = {i.lower() for i in ingredients}
    return [r for r in TABLE if names & set(r.ingredients) and (r.when is None or r.when.search(order))]


@dataclass(frozen=True)
class Finding:
    text: str
    severe: bool


def findings(drug: str, ingredients: tuple[str, ...], kidney: Kidney, per_day: float | None = None,
             doses_a_day: float | None = None, unit: str = "mg", order: str = "") -> list[Finding]:
    """The card's renal findings for ``drug``: the limit crossed, the value used and its date. ``per_day`` (in
    ``unit``) and ``doses_a_day``: the order's, when known, for the renally adjusted maxima."""
    out: list[Finding] = []
    if kidney.value is None:
        return out
    stale = f" This value is {kidney.days} days old (stale after {STALE_DAYS}): recheck it." if kidney.stale else ""
    for row in rows_for(ingredients, order):
        most = min((m for below, m in row.daily if kidney.value < below), default=None)
        if most is not None and per_day is not None and unit == row.unit and per_day > most:
            out.append(Finding(f"KIDNEY FUNCTION (SEVERE): {drug} {per_day:g} {unit} a day is above {most:g} {unit} a "
                               f"day, the most at the latest {kidney.name} of {kidney.value:g} ({kidney.when}).{stale} "
                               f"(source: {row.source}).", True))
        times = min((m for below, m in row.doses if kidney.value < below), default=None)
        if times is not None and doses_a_day is not None and doses_a_day > times:
            out.append(Finding(f"KIDNEY FUNCTION (SEVERE): {drug} {doses_a_day:g} times a day — {row.advice}. The latest "
                               f"{kidney.name} is {kidney.value:g} ({kidney.when}).{stale} (source: {row.source}).", True))
        if row.avoid is not None and kidney.value < row.avoid:
            out.append(Finding(f"KIDNEY FUNCTION (SEVERE): {drug} — {row.advice}. The latest {kidney.name} is "
                               f"{kidney.value:g} ({kidney.when}), below {row.avoid:g}.{stale} (source: {row.source}).",
                               True))
        elif row.adjust is not None and kidney.value < row.adjust:
            out.append(Finding(f"KIDNEY FUNCTION: {drug} — {row.advice}. The latest {kidney.name} is {kidney.value:g} "
                               f"({kidney.when}), below {row.adjust:g}.{stale} (source: {row.source}).", False))
    return out
