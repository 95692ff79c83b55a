"""add_allergy: documents an allergy or adverse reaction (AllergyIntolerance) after the clinician approves; its
pre-write check finds the same allergy, or one of the same class, already on the list, and an active medication
order that the new allergy conflicts with."""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

from docgemma.clinical.allergy import allergy_line
from docgemma.clinical.ingredients import LOCAL, IngredientResolver, conflicts
from docgemma.fhir import display_text
from docgemma.tools.args import PatientId, ToolArgs
from docgemma.tools.order_extract import allergy_args
from docgemma.tools.record_tool import Draft, record_write
from docgemma.tools.routing import Request, Role
from docgemma.tools.spec import ToolContext, ToolSpec
from docgemma.tools.write_checks import Findings, PatientFacts

#: The resource its write creates: where the write is looked up by its idempotency key.
WRITTEN = "AllergyIntolerance"
#: "No known drug allergy" and "no known allergy" are entries of their own, coded (SNOMED CT), never an allergy to
#: "not specified" (the International Patient Summary records them this way).
NKDA = re.compile(r"^\s*(?:nkda|nkma|no\s+known\s+(?:drug|medication|medicine)\s+allerg(?:y|ies))\s*$", re.IGNORECASE)
NKA = re.compile(r"^\s*(?:nka|no\s+known\s+allerg(?:y|ies))\s*$", re.IGNORECASE)
NKDA_CODE = ("409137002", "No known drug allergy")
NKA_CODE = ("716186003", "No known allergy")
#: A substance that names nothing, or says there is none: a safety guard on every write path (the page, MCP, the
#: API), whatever read the message. A denial, a negative test, a removed label is never an active allergy.
_NO_SUBSTANCE = re.compile(r"^\s*(?:none|nil|n/?a|not\s+specified|unknown|not\s+known|no|negative|nothing)\s*$|"
                           r"\b(?:den(?:y|ies|ied)|no\s+known|none\s+known|nil\s+known|negative|removed|"
                           r"de-?labell?(?:ed|ing)?|ruled\s+out|refuted|tolerated|not\s+allergic|any)\b", re.IGNORECASE)
_NO_REACTION = re.compile(r"\b(?:den(?:y|ies|ied)|no\s+known|none(?:\s+known)?|nil|negative|removed|"
                          r"de-?labell?(?:ed|ing)?|ruled\s+out|refuted|tolerated|not\s+allergic|no\s+reaction)\b",
                          re.IGNORECASE)


def no_allergy(substance: str) -> tuple[str, str] | None:
    """The SNOMED CT code and display when ``substance`` records no known (drug) allergy, else None."""
    return NKDA_CODE if NKDA.match(substance) else NKA_CODE if NKA.match(substance) else None


def negated_value(args: dict[str, Any]) -> str:
    """Why these arguments would write an allergy the words deny ("" when they do not)."""
    substance, reaction = str(args.get("substance") or ""), str(args.get("reaction") or "")
    if no_allergy(substance):
        return ""
    if _NO_SUBSTANCE.search(substance):
        return f"a substance the patient is allergic to (the substance reads '{substance}')"
    if _NO_REACTION.search(reaction):
        return f"a reaction that happened (the reaction reads '{reaction}', which says there was none)"
    return ""


class AddAllergyArgs(ToolArgs):
    patient_id: str = PatientId
    substance: str = Field(min_length=2, max_length=60)
    reaction: str = Field(min_length=2, max_length=60)
    severity: Literal["mild", "moderate", "severe"] | None = None


def allergy(request: Request) -> dict[str, Any]:
    """The patient, the substance and the reaction by meaning (``order_extract``), and a stated severity."""
    return allergy_args(request.query, request.entities, request.patient_id)


def allergy_check(args: dict[str, Any], facts: PatientFacts, resolver: IngredientResolver = LOCAL) -> Findings:
    """An allergy already on the list: the same substance, or a class that already covers it."""
    found = Findings([], [])
    substance = str(args.get("substance", ""))
    if not substance:
        return found
    denied = negated_value(args)
    if denied:
        found.blocked = (f"{denied}: a denial, a negative test or a removed label is never recorded as an active "
                         "allergy; nothing was written. To record no known drug allergies, say 'record NKDA'; "
                         "to remove a label, change the existing entry in the record")
        return found
    coded = no_allergy(substance)
    if coded:
        return _no_known_check(found, coded, facts, resolver)
    new = resolver.allergen(substance)
    found.ran("Allergies already recorded", "the patient's allergy list, by ingredient and class")
    for recorded_allergy in facts.allergies:
        recorded = resolver.allergen(display_text(recorded_allergy))
        same = bool(set(new.ingredients) & set(recorded.ingredients)) or (
            not new.ingredients and bool(new.classes) and new.classes <= recorded.classes)
        text = re.escape(substance.lower())
        if same or re.search(rf"\b{text}\b", display_text(recorded_allergy).lower()):
            found.add(f"ALREADY RECORDED: '{display_text(recorded_allergy)}' is on the allergy list.")
        elif set(new.classes) & set(recorded.classes):
            found.add(f"RELATED ALLERGY ON RECORD: '{allergy_line(recorded_allergy)}' is of the same drug class.")
    _active_medications(found, substance, args, facts, resolver)
    return found


def _no_known_check(found: Findings, coded: tuple[str, str], facts: PatientFacts,
                    resolver: IngredientResolver) -> Findings:
    """'No known drug allergy' while an active drug allergy is on the list (or 'no known allergy' while any active
    allergy is) is refused, not a finding to override: the list would contradict itself. The entry on record is
    changed first (removing a label is a status change of that entry, with its reason)."""
    found.ran("Allergies already recorded", "the patient's active allergy list")
    drug_only = coded == NKDA_CODE
    contradicting = [a for a in facts.allergies if not drug_only or _drug_allergy(a, resolver)]
    if contradicting:
        found.blocked = (f"'{coded[1]}' contradicts the active allergy list, which holds "
                         f"{', '.join(repr(allergy_line(a)) for a in contradicting)}; nothing was written. If that "
                         "allergy no longer applies, remove its label first (a status change of the entry, with the "
                         "reason)")
    for other in facts.allergies:
        if other not in contradicting:
            found.add(f"ON THE ALLERGY LIST (not a drug): '{allergy_line(other)}' stays recorded beside "
                      f"'{coded[1]}'.")
    return found


def _drug_allergy(resource: dict[str, Any], resolver: IngredientResolver) -> bool:
    """A medication allergy, failing safe: so categorised, or a substance the resolver does not know as a non-drug
    (latex, a food, a sting) and whose category does not say it is one."""
    categories = set(resource.get("category") or [])
    if "medication" in categories:
        return True
    return not categories & {"food", "environment", "biologic"} and not resolver.allergen(display_text(resource)).non_drug


def _active_medications(found: Findings, substance: str, args: dict[str, Any], facts: PatientFacts,
                        resolver: IngredientResolver) -> None:
    """The new allergy against the active orders: an order containing the allergen, or a drug of its class, is
    a severe finding (the patient is taking it now: approving needs an override with a reason, so the order is
    seen); a related class warns."""
    allergen = resolver.allergen(substance)
    if not allergen.identified:
        found.skipped("Active medications against the new allergy", f"'{substance}' names nothing this check can "
                      "identify as a drug or drug class; check the active medications by hand")
        return
    for med in facts.medications:
        product = resolver.resolve(display_text(med), confirm=False)
        conflict = next(iter(conflicts(allergen, product)), None)
        if conflict is None:
            continue
        since = str(med.get("authoredOn") or "?")[:10]
        head = ("ACTIVE MEDICATION CONFLICTS WITH THIS ALLERGY (SEVERE)" if conflict.direct
                else "ACTIVE MEDICATION OF A RELATED CLASS")
        reason = conflict.reason.replace("the recorded allergen", "the allergen being recorded")
        found.add(f"{head}: {display_text(med)} (active since {since}) — {reason} Review this order.",
                  conflict.direct)
    found.ran("Active medications against the new allergy", "the patient's active medication orders, by ingredient "
              "and class (WHO ATC, FDA EPC, BNF: local table)")


def allergy_intolerance(args: BaseModel, context: ToolContext) -> Draft:
    """The AllergyIntolerance, named "allergy to <substance> (<reaction>)"."""
    a: Any = args
    coded = no_allergy(a.substance)
    if coded:
        return {
            "resourceType": WRITTEN, "patient": {"reference": f"Patient/{a.patient_id}"},
            "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical",
                                           "code": "active"}]},
            "verificationStatus": {"coding": [{
                "system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification", "code": "confirmed"}]},
            "code": {"coding": [{"system": "http://snomed.info/sct", "code": coded[0], "display": coded[1]}],
                     "text": coded[1]},
            "recordedDate": date.today().isoformat(),
        }, coded[1].lower()
    reaction: dict[str, Any] = {"manifestation": [{"text": a.reaction}]}
    if a.severity:
        reaction["severity"] = a.severity
    resource = {
        "resourceType": WRITTEN, "patient": {"reference": f"Patient/{a.patient_id}"},
        "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical",
                                       "code": "active"}]},
        "verificationStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification",
                                           "code": "confirmed"}]},
        "code": {"text": a.substance}, "reaction": [reaction], "recordedDate": date.today().isoformat(),
        **({"criticality": "high"} if a.severity == "severe" else {}),
    }
    return resource, f"allergy to {a.substance} ({a.reaction})"


SPEC = record_write(ToolSpec(
    "add_allergy",
    "Allergy Documentation",
    "Document an allergy or adverse reaction in a patient's record. Use when a clinician wants "
    "to record, document, or note an allergy.",
    AddAllergyArgs,
    "Record a penicillin allergy (hives) for patient abc-123.",
    arg_max_tokens=288,
    keywords=("allergy", "allergic", "intolerance", "intolerant"),
    extract=allergy,
), Role.ALLERGY_ENTRY, allergy_intolerance, WRITTEN, check=allergy_check, check_needs=("resolver",))
