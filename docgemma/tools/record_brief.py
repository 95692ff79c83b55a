"""One-line statements of a record query's result ("allergies on record: penicillin (anaphylaxis, high
criticality)"), written by code from the FHIR resources the query found.

A short question about the patient's record ("any allergies?", "meds?", "last kidney function?") is answered
with this line: the facts as recorded, the latest value of each result with its date, and the explicit
absence ("no active medications on record"), which is a clinical fact too. Only what the record holds is
said; the whole list stays behind the record tools and the summary stays in the patient panel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docgemma.ehr.summary import ACTIVE_MED, quantity_text
from docgemma.ehr.validate import unreadable_note
from docgemma.fhir import concept_code, display_text

#: Items one line names before it says how many more there are.
MAX_ITEMS = 6
When = Callable[[dict[str, Any]], str]
#: How clinicians write the abbreviations a query's name is lower-cased from.
ABBREVIATIONS = {"egfr": "eGFR", "hba1c": "HbA1c", "a1c": "A1c", "inr": "INR", "ldl": "LDL", "hdl": "HDL", "tsh": "TSH",
                 "bmi": "BMI", "wbc": "WBC", "bnp": "BNP", "bp": "BP", "alt": "ALT", "ast": "AST", "crp": "CRP"}


def _more(total: int, shown: int) -> str:
    return f" (+{total - shown} more in the record)" if total > shown else ""


def _listed(entries: list[str]) -> str:
    return "; ".join(entries[:MAX_ITEMS]) + _more(len(entries), min(len(entries), MAX_ITEMS))


def _allergy(allergy: dict[str, Any]) -> str:
    name = display_text(allergy)
    if name.lower().startswith("allergy to "):
        name = name[len("allergy to "):]
    details = [str(m.get("text") or display_text({"code": m})).lower()
               for reaction in allergy.get("reaction", []) for m in reaction.get("manifestation", [])]
    details += [str(r["severity"]) for r in allergy.get("reaction", []) if r.get("severity")]
    if allergy.get("criticality"):
        details.append(f"{allergy['criticality']} criticality")
    unique = [d for d in dict.fromkeys(details) if d]
    return name + (f" ({', '.join(unique)})" if unique else "")


def _allergies(records: list[dict[str, Any]]) -> str:
    active = [r for r in records if concept_code(r, "clinicalStatus") in ("active", "")
              and concept_code(r, "verificationStatus") not in ("refuted", "entered-in-error")]
    other = len(records) - len(active)
    rest = f" ({other} inactive, resolved or refuted)" if other else ""
    if not active:
        return "no active allergies on record" + rest
    return "allergies on record: " + _listed([_allergy(r) for r in active]) + rest


def _medication(order: dict[str, Any]) -> str:
    dosage = (order.get("dosageInstruction") or [{}])[0].get("text", "")
    return display_text(order) + (f" ({dosage})" if dosage else "")


def _medications(records: list[dict[str, Any]]) -> str:
    active = [r for r in records if r.get("status") in ACTIVE_MED]
    other = len(records) - len(active)
    rest = f" ({other} stopped, completed or other orders in the record)" if other else ""
    if not active:
        return "no active medications on record" + rest
    return "active medications: " + _listed([_medication(r) for r in active]) + rest


def _conditions(records: list[dict[str, Any]], when: When) -> str:
    active = [r for r in records if concept_code(r, "clinicalStatus") in ("active", "recurrence", "relapse", "")]
    other = len(records) - len(active)
    rest = f" ({other} resolved or inactive)" if other else ""
    if not active:
        return "no active problems on record" + rest
    return "active problems: " + _listed([display_text(r) + (f" (since {when(r)})" if when(r) else "")
                                          for r in active]) + rest


def _latest(records: list[dict[str, Any]], when: When) -> list[str]:
    """The newest record of each name (``records`` are newest first), as "name value (date)"."""
    seen: dict[str, str] = {}
    for r in records:
        name = display_text(r)
        if name.lower() in seen:
            continue
        value = f" {quantity_text(r)}" if r.get("resourceType") == "Observation" else ""
        seen[name.lower()] = f"{name}{value} ({when(r) or 'no date'})"
    return list(seen.values())


def _encounters(records: list[dict[str, Any]], when: When) -> str:
    if not records:
        return "no visits on record"
    last = records[0]
    kind = display_text({"type": last.get("type", [])}) if last.get("type") else "visit"
    count = f"; {len(records)} visits on record" if len(records) > 1 else ""
    return f"last seen {when(last) or 'on an unrecorded date'} ({kind}){count}"


def visits(found: list[dict[str, Any]], total: int, skipped: int = 0) -> str:
    """The timeline in one line (``found``: the visits newest first, each with ``date`` and ``type``): when the
    patient was last seen, then the earlier visits."""
    if not found:
        text = "no visits on record in that period"
    else:
        def one(visit: dict[str, Any]) -> str:
            return f"{visit.get('date') or 'an unrecorded date'} ({visit.get('type') or 'visit'})"

        earlier = [one(v) for v in found[1:MAX_ITEMS]]
        text = f"last seen {one(found[0])}" + (f"; earlier: {'; '.join(earlier)}" if earlier else "")
        text += _more(total, min(len(found), MAX_ITEMS))
    return text + (f" ({unreadable_note(skipped)})" if skipped else "")


def brief(args: Any, records: list[dict[str, Any]], when: When, skipped: int = 0) -> str | None:
    """The one-line statement of a record query (``records`` newest first), or None when the query names
    no section or result (nothing short to say: the lines are the answer)."""
    kind, name, category = args.resource_type, args.name, args.category
    if name:
        name = ABBREVIATIONS.get(name.lower(), name)
        # "Kidney function" also finds a "kidney review" visit and the CKD diagnosis: the results are the answer.
        results = [r for r in records if r.get("resourceType") in ("Observation", "DiagnosticReport")]
        found = _latest(results or records, when)
        text = (f"{name}, latest: {_listed(found)}" if found else f"no {name} results on record")
    elif kind == "AllergyIntolerance":
        text = _allergies(records)
    elif kind == "MedicationRequest":
        text = _medications(records)
    elif kind == "Condition":
        text = _conditions(records, when)
    elif kind == "Encounter":
        text = _encounters(records, when)
    elif kind == "Observation" or category:
        what = {"vital-signs": "vital signs", "laboratory": "lab results"}.get(category or "", "results")
        found = _latest(records, when)
        text = f"latest {what}: {_listed(found)}" if found else f"no {what} on record"
    elif kind in ("Immunization", "Procedure", "DocumentReference", "DiagnosticReport", "CarePlan"):
        what = {"Immunization": "immunizations", "Procedure": "procedures", "DocumentReference": "notes",
                "DiagnosticReport": "reports", "CarePlan": "care plans"}[kind]
        found = [f"{display_text(r)} ({when(r) or 'no date'})" for r in records]
        text = f"{what} on record: {_listed(found)}" if found else f"no {what} on record"
    else:
        return None
    return text + (f" ({unreadable_note(skipped)})" if skipped else "")
