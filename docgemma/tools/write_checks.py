"""The pre-write checks of the write tools: the safety review shown on the approval card.

The record supplies the data (the patient, their allergies and active orders); the policy lives here, one
function per write tool, bound to the tool as ``ToolSpec.pre_write_check`` in the registry; the patient
check that applies to every write is ``ehr_tools.record_write_check``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from docgemma.clinical.allergy import allergy_conflict, is_direct_conflict, is_severe, reactions
from docgemma.clinical.dosing import dose_warnings
from docgemma.clinical.entities import DrugDictionary
from docgemma.ehr.summary import ACTIVE_MED
from docgemma.fhir import concept_code, display_text


@dataclass(frozen=True)
class PatientFacts:
    """What a pre-write check may look at: the patient's active allergies and active medication orders."""

    allergies: list[dict[str, Any]]
    medications: list[dict[str, Any]]


@dataclass
class Findings:
    """A check's answer: warnings, and those of them that only an override with a reason can pass."""

    warnings: list[str]
    severe: list[str]


#: A write tool's own check: its arguments and the patient's facts → warnings.
PreWriteCheck = Callable[[dict[str, Any], PatientFacts], Findings]


def active_allergies(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The allergies that count: active (or without a status), and neither refuted nor entered in error."""
    return [r for r in resources if r.get("resourceType") == "AllergyIntolerance"
            and concept_code(r, "clinicalStatus") in ("active", "")
            and concept_code(r, "verificationStatus") not in ("refuted", "entered-in-error")]


def active_orders(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Medication orders that are active or on hold."""
    return [r for r in resources
            if r.get("resourceType") == "MedicationRequest" and r.get("status") in ACTIVE_MED]


def prescription_check(args: dict[str, Any], facts: PatientFacts) -> Findings:
    """Allergy and class conflicts (a severe direct one needs an override), duplicate orders, dose and frequency."""
    found = Findings([], [])
    name = str(args.get("medication_name", ""))
    drug = DrugDictionary.canonical(name) or name.lower()
    for allergy in facts.allergies:
        conflict = allergy_conflict(display_text(allergy), drug)
        if not conflict:
            continue
        if is_severe(allergy) and is_direct_conflict(conflict):
            text = (f"ALLERGY CONFLICT (SEVERE): recorded allergy '{allergy_line(allergy)}' — {conflict} "
                    "Approving needs an explicit override with a reason.")
            found.severe.append(text)
        else:
            text = f"ALLERGY CONFLICT: recorded allergy '{allergy_line(allergy)}' — {conflict}"
        found.warnings.append(text)
    for med in facts.medications:
        if drug and drug in display_text(med).lower():
            found.warnings.append(
                f"DUPLICATE ORDER: an active order already exists: {display_text(med)} "
                f"(since {str(med.get('authoredOn', '?'))[:10]})."
            )
    found.warnings += dose_warnings(drug, str(args.get("dosage", "")), str(args.get("frequency", "")))
    return found


def allergy_check(args: dict[str, Any], facts: PatientFacts) -> Findings:
    """An allergy that is already on the list."""
    found = Findings([], [])
    substance = str(args.get("substance", "")).lower()
    for allergy in facts.allergies:
        if substance and substance in display_text(allergy).lower():
            found.warnings.append(f"ALREADY RECORDED: '{display_text(allergy)}' is on the allergy list.")
    return found


def allergy_line(allergy: dict[str, Any]) -> str:
    """``Allergy to penicillin (Anaphylaxis; criticality high)``."""
    details = [", ".join(reactions(allergy))] if reactions(allergy) else []
    if allergy.get("criticality"):
        details.append(f"criticality {allergy['criticality']}")
    return display_text(allergy) + (f" ({'; '.join(details)})" if details else "")
