"""The pre-write checks of the write tools: the safety review shown on the approval card.

The record supplies the data (the patient, their allergies and active orders); the policy lives here, one
function per write tool, bound to the tool as ``ToolSpec.pre_write_check`` in the registry; the patient
check that applies to every write is ``ehr_tools.record_write_check``. Products are resolved to their
ingredients by one resolver (:mod:`docgemma.clinical.ingredients`); the knowledge tools bind one that an FDA
label can confirm (``KnowledgeTools.bind``), otherwise the local table decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from docgemma.clinical.allergy import allergy_findings, allergy_line
from docgemma.clinical.dosing import dose_findings
from docgemma.clinical.ingredients import LOCAL, IngredientResolver, classes_of, resolve_local
from docgemma.ehr.summary import ACTIVE_MED
from docgemma.fhir import concept_code, display_text

__all__ = ["Findings", "PatientFacts", "PreWriteCheck", "active_allergies", "active_orders", "allergy_check",
           "allergy_line", "prescription_check"]

#: The extractor's marker for words of the clinician's order that no field took (kept in the order's note).
NOT_UNDERSTOOD = "not understood:"


@dataclass(frozen=True)
class PatientFacts:
    """What a pre-write check may look at: the patient's active allergies and active medication orders."""

    allergies: list[dict[str, Any]]
    medications: list[dict[str, Any]]


@dataclass
class Findings:
    """A check's answer: warnings (severe ones first), and those of them that only an override with a reason
    can pass."""

    warnings: list[str]
    severe: list[str]

    def add(self, text: str, severe: bool = False) -> None:
        self.warnings.append(text)
        if severe:
            self.severe.append(text)

    def ordered(self) -> Findings:
        """Severe findings first (the card shows them before duplicate orders and notes), order kept otherwise."""
        severe = set(self.severe)
        return Findings(sorted(self.warnings, key=lambda w: w not in severe), list(self.severe))


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


def prescription_check(args: dict[str, Any], facts: PatientFacts, resolver: IngredientResolver = LOCAL) -> Findings:
    """Allergy conflicts on ingredients and classes (a severe direct one, or a product that cannot be verified
    against the recorded allergies, needs an override), implausible doses and frequencies (severe), duplicate
    orders, and words of the order that no field took."""
    found = Findings([], [])
    name = str(args.get("medication_name", ""))
    product = resolver.resolve(name)
    for finding in allergy_findings(product, facts.allergies, resolver):
        found.add(finding.text, finding.severe)
    single = product.ingredients[0] if product.resolved and len(product.ingredients) == 1 else None
    for dose in dose_findings(single, str(args.get("dosage", "")), str(args.get("frequency", ""))):
        found.add(dose.text, dose.severe)
    for med in facts.medications:
        active = resolve_local(display_text(med))  # duplicates need no network call per active order
        shared = [i for i in product.ingredients if i in active.ingredients]
        since = str(med.get("authoredOn", "?"))[:10]
        if shared or (not product.ingredients and name.lower() and name.lower() in display_text(med).lower()):
            found.add(f"DUPLICATE ORDER: an active order already contains {', '.join(shared) or name}: "
                      f"{display_text(med)} (since {since}).")
            continue
        same = {c for i in product.ingredients for c in classes_of(i)} & {c for i in active.ingredients
                                                                         for c in classes_of(i)}
        if same:
            found.add(f"SAME CLASS AS AN ACTIVE ORDER: {display_text(med)} (since {since}) is also of the class "
                      f"{', '.join(sorted(same)).replace('_', ' ')}.")
    notes = str(args.get("notes") or "")
    if NOT_UNDERSTOOD in notes.lower():
        words = notes[notes.lower().index(NOT_UNDERSTOOD) + len(NOT_UNDERSTOOD):].strip()
        found.add(f"NOT UNDERSTOOD: {words} — these words of the order were not read into any field; they are "
                  "kept in the order's note. Check them before approving.")
    return found.ordered()


def allergy_check(args: dict[str, Any], facts: PatientFacts, resolver: IngredientResolver = LOCAL) -> Findings:
    """An allergy already on the list: the same substance, or a class that already covers it."""
    found = Findings([], [])
    substance = str(args.get("substance", ""))
    if not substance:
        return found
    new = resolver.allergen(substance)
    for allergy in facts.allergies:
        recorded = resolver.allergen(display_text(allergy))
        same = bool(set(new.ingredients) & set(recorded.ingredients)) or (
            not new.ingredients and bool(new.classes) and new.classes <= recorded.classes)
        text = re.escape(substance.lower())
        if same or re.search(rf"\b{text}\b", display_text(allergy).lower()):
            found.add(f"ALREADY RECORDED: '{display_text(allergy)}' is on the allergy list.")
        elif set(new.classes) & set(recorded.classes):
            found.add(f"RELATED ALLERGY ON RECORD: '{allergy_line(allergy)}' is of the same drug class.")
    return found


def paediatric_note(birth_date: str, today: date | None = None) -> str | None:
    """For a patient under 18, that the dose checks were adult label limits only (no weight-based check exists
    here), so the card says what was not checked; None for an adult or an unknown birth date."""
    try:
        born = date.fromisoformat(birth_date[:10])
    except ValueError:
        return None
    today = today or date.today()
    years = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
    if not 0 <= years < 18:
        return None
    age = f"{years} year{'s' if years != 1 else ''}" if years else "under 1 year"
    return (f"PAEDIATRIC PATIENT ({age}): the dose was checked against adult label limits only, not against "
            "weight (mg/kg). Confirm the weight-based dose before approving.")

