"""Orders that must never be written with one click, whatever the dose table says: never-events by route and
rate (IV potassium as a push or bolus or faster than its limit, vinca alkaloids given intrathecally) and
high-alert medicines (ISMP list) for which no dose range is known here.

These are safety guards written by hand on purpose (each a known cause of deaths, with its source), read from the
whole order as written: product, dose, frequency and the words no field took. Data and pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docgemma.clinical.dosing import parse_dose

#: The most potassium an IV infusion may deliver per hour without cardiac monitoring (central line, critical care:
#: specialist protocols); BNF: "not usually exceeding 10 mmol/hour", never above 20 mmol/hour on a ward.
POTASSIUM_MAX_PER_HOUR = 20.0
POTASSIUM_SOURCE = ("BNF (potassium chloride: IV infusion not exceeding 20 mmol/hour); NPSA Patient Safety Alert "
                    "2002 and ISMP (concentrated potassium: never by IV push)")
VINCA_SOURCE = "vincristine label, Boxed Warning (fatal if given by other routes; for intravenous use only); WHO 2007"

_IV = re.compile(r"\b(?:iv|i\.v\.?|ivi|intravenous(?:ly)?|ivp)\b", re.IGNORECASE)
_PUSH = re.compile(r"\b(?:push|bolus|ivp|stat\s+iv|iv\s+stat|slow\s+iv|rapid(?:ly)?|undiluted|neat)\b", re.IGNORECASE)
_OVER = re.compile(r"\bover\s+(\d+(?:\.\d+)?)\s*(min(?:ute)?s?|h(?:ou)?rs?|h)\b", re.IGNORECASE)
_HOURLY = re.compile(r"\b(?:every\s+hour|hourly|q\s?1\s?h|1\s?-?\s?hourly|per\s+hour|/\s?h(?:ou)?r)\b", re.IGNORECASE)
_INTRATHECAL = re.compile(r"\bintrathecal(?:ly)?\b|\binto the (?:spine|csf)\b|\bspinal\b", re.IGNORECASE)
#: "IT" as a route is written in capitals; "it" in lower case is the pronoun.
_IT_ROUTE = re.compile(r"\bI\.?T\.?(?=\s|$|[,;)])")
_POTASSIUM = re.compile(r"^potassium\b")
VINCA = frozenset({"vincristine", "vinblastine", "vinorelbine", "vindesine", "vinflunine"})

HIGH_ALERT_SOURCE = "ISMP List of High-Alert Medications in Acute Care Settings (2024)"
#: ISMP high-alert medicines by ingredient: chemotherapy, antiarrhythmics, immunosuppressants, clozapine,
#: concentrated electrolytes, anticoagulants, insulins, sedation and neuromuscular blockers, and others it names.
HIGH_ALERT: dict[str, tuple[str, ...]] = {
    "chemotherapy": ("vincristine", "vinblastine", "vinorelbine", "cyclophosphamide", "ifosfamide", "cisplatin",
                     "carboplatin", "oxaliplatin", "doxorubicin", "epirubicin", "daunorubicin", "paclitaxel",
                     "docetaxel", "fluorouracil", "capecitabine", "gemcitabine", "etoposide", "cytarabine",
                     "methotrexate", "bleomycin", "busulfan", "chlorambucil", "melphalan", "temozolomide",
                     "imatinib", "mercaptopurine", "hydroxyurea", "irinotecan", "bendamustine"),
    "antiarrhythmic": ("amiodarone", "flecainide", "propafenone", "sotalol", "dofetilide", "dronedarone",
                       "disopyramide", "lidocaine", "mexiletine", "quinidine", "procainamide", "digoxin"),
    "immunosuppressant": ("tacrolimus", "ciclosporin", "cyclosporine", "sirolimus", "everolimus", "mycophenolate mofetil",
                          "mycophenolic acid", "azathioprine"),
    "antipsychotic with a monitoring programme": ("clozapine",),
    "concentrated electrolyte": ("potassium chloride", "potassium phosphate", "sodium chloride", "magnesium sulfate",
                                 "calcium chloride"),
    "anticoagulant": ("warfarin", "heparin", "enoxaparin", "dalteparin", "tinzaparin", "fondaparinux", "apixaban",
                      "rivaroxaban", "edoxaban", "dabigatran", "argatroban", "bivalirudin"),
    "insulin": ("insulin", "insulin glargine", "insulin aspart", "insulin lispro", "insulin detemir",
                "insulin degludec", "insulin human", "insulin regular"),
    "sedative or neuromuscular blocker": ("midazolam", "propofol", "ketamine", "dexmedetomidine", "suxamethonium",
                                          "succinylcholine", "rocuronium", "vecuronium", "atracurium"),
    "other ISMP high-alert medicine": ("lithium", "colchicine", "epinephrine", "norepinephrine", "vasopressin",
                                       "vasopressins", "oxytocin", "nitroprusside", "theophylline", "phenytoin"),
}
#: Class keys (``drug_classes``) whose members are all high-alert.
HIGH_ALERT_CLASSES = {"opioid": "opioid", "opioid_synthetic": "opioid", "heparin": "anticoagulant"}


@dataclass(frozen=True)
class Hazard:
    text: str
    severe: bool = True


def high_alert(ingredients: tuple[str, ...], classes: frozenset[str]) -> str:
    """Why the product is high-alert ("" when it is not): the ISMP category of its first listed ingredient."""
    for ingredient in ingredients:
        for category, members in HIGH_ALERT.items():
            if ingredient.lower() in members or ingredient.lower().startswith("insulin"):
                return category if ingredient.lower() in members else "insulin"
    return next((HIGH_ALERT_CLASSES[c] for c in sorted(classes) if c in HIGH_ALERT_CLASSES), "")


def _hours(order: str) -> float | None:
    found = _OVER.search(order)
    if not found:
        return None
    value, unit = float(found.group(1)), found.group(2).lower()
    return value / 60 if unit.startswith("m") else value


_LONG_ACTING_OPIOID = re.compile(r"\b(?:patch(?:es)?|transdermal|td|micrograms?\s*/\s*h(?:ou)?r?|mcg\s*/\s*h(?:ou)?r?|"
                                r"µg\s*/\s*h(?:ou)?r?)\b", re.IGNORECASE)
OPIOID_NAIVE_SOURCE = ("Duragesic (fentanyl transdermal) label, Boxed Warning and 4 Contraindications: only for "
                       "opioid-tolerant patients; MHRA 2008")


def hazards(drug: str, ingredients: tuple[str, ...], dosage: str, order: str,
            opioid_tolerant: bool = True) -> list[Hazard]:
    """The never-events in an order: ``order`` is the whole order as written (every field), ``dosage`` its dose;
    ``opioid_tolerant``: the record shows an active opioid order (False: opioid-naive as far as the record says)."""
    out: list[Hazard] = []
    names = {i.lower() for i in ingredients}
    if "fentanyl" in names and _LONG_ACTING_OPIOID.search(order) and not opioid_tolerant:
        out.append(Hazard(f"OPIOID-NAIVE: {drug} as a patch is only for opioid-tolerant patients, and the record shows "
                          f"no active opioid order (respiratory depression and death; source: {OPIOID_NAIVE_SOURCE})."))
    if any(_POTASSIUM.match(n) for n in names) and _IV.search(order):
        out += _iv_potassium(drug, dosage, order)
    if names & VINCA and (_INTRATHECAL.search(order) or _IT_ROUTE.search(order)):
        out.append(Hazard(f"NEVER EVENT — WRONG ROUTE: {drug} given intrathecally is fatal; vinca alkaloids are for "
                          f"intravenous use only (source: {VINCA_SOURCE})."))
    return out


def _iv_potassium(drug: str, dosage: str, order: str) -> list[Hazard]:
    dose = parse_dose(dosage)
    amount = dose.value if dose is not None and dose.family in ("mmol", "meq") else None
    head = f"NEVER EVENT — IV POTASSIUM: {drug}"
    if _PUSH.search(order):
        return [Hazard(f"{head} as a push or bolus can stop the heart. Give it diluted, by infusion, no faster than "
                       f"{POTASSIUM_MAX_PER_HOUR:g} mmol/hour (source: {POTASSIUM_SOURCE}).")]
    hours = _hours(order)
    if hours is None and _HOURLY.search(order) and amount is not None:
        hours = 1.0
    if hours is None:
        return [Hazard(f"{head} with no infusion time: say over how long it runs (no faster than "
                       f"{POTASSIUM_MAX_PER_HOUR:g} mmol/hour) and in what volume (source: {POTASSIUM_SOURCE}).")]
    if amount is None:
        return [Hazard(f"{head}: the amount is not in mmol or mEq, so the rate cannot be checked; write it in mmol "
                       f"(source: {POTASSIUM_SOURCE}).")]
    rate = amount / hours if hours > 0 else float("inf")
    if rate > POTASSIUM_MAX_PER_HOUR:
        return [Hazard(f"{head} at {rate:.3g} mmol/hour ({amount:g} mmol over {hours:.3g} h) is faster than "
                       f"{POTASSIUM_MAX_PER_HOUR:g} mmol/hour (source: {POTASSIUM_SOURCE}).")]
    return []
