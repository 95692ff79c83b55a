"""prescribe_medication: a new medication order (MedicationRequest), written only after the clinician approves
the card; its pre-write check reviews allergies, dose, duplicates and words of the order no field took."""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from docgemma.clinical import order_hazards, pregnancy, renal
from docgemma.clinical.allergy import allergy_findings
from docgemma.clinical.body_weight import age_years, latest_weight, recent_weight
from docgemma.clinical.dose_check import DosePatient, DoseReview, review_dose
from docgemma.clinical.dose_table import limit_for
from docgemma.clinical.dosing import (
    dosage_instruction,
    duration_phrase,
    parse_dose,
    parse_duration,
    parse_frequency,
)
from docgemma.clinical.ingredients import LOCAL, IngredientResolver, Resolution, classes_of, resolve_local
from docgemma.clinical.vehicles import named_with
from docgemma.fhir import display_text
from docgemma.tools.args import UNREAD, PatientId, ToolArgs
from docgemma.tools.drug_labels import DrugLabels
from docgemma.tools.interaction_check import active_order_interactions
from docgemma.tools.order_extract import prescription_args
from docgemma.tools.record_tool import Draft, record_write
from docgemma.tools.routing import Request, Role
from docgemma.tools.spec import ToolContext, ToolSpec
from docgemma.tools.write_checks import CheckRun, Findings, PatientFacts

#: The resource its write creates: where the write is looked up by its idempotency key.
WRITTEN = "MedicationRequest"


class PrescribeMedicationArgs(ToolArgs):
    patient_id: str = PatientId
    medication_name: str = Field(min_length=2, max_length=60)
    dosage: str = Field(min_length=1, max_length=30, description="e.g. 500 mg")
    # 40: a typed frequency is kept whole ("once in the morning as required", "/hour continuous infusion as needed"),
    # and the worst-case arguments still fit the model's 512-token argument budget (tests/unit/test_schemas.py).
    frequency: str = Field(min_length=1, max_length=40, description="e.g. twice daily")
    duration: str | None = Field(default=None, max_length=30, description="e.g. 7 days, until review")
    indication: str | None = Field(default=None, max_length=60, description="what it is for, e.g. otitis media")
    notes: str | None = Field(default=None, max_length=120)
    #: Words of the order no field took (``tools.args.UNREAD``): a finding on the card, never written; left out of
    #: the schema a model decodes, it is code's to fill.
    unread: SkipJsonSchema[str | None] = Field(default=None, max_length=200)


def prescription(request: Request) -> dict[str, Any]:
    """The patient and the order as written: product, dose, frequency, route, duration, indication ("not
    specified" when not stated); words no field took are kept apart and shown on the card (``order_extract``)."""
    return prescription_args(request.query, request.entities, request.patient_id)


def prescription_check(args: dict[str, Any], facts: PatientFacts, resolver: IngredientResolver = LOCAL,
                       labels: DrugLabels | None = None) -> Findings:
    """Allergy conflicts on ingredients and classes (a severe direct one, or a product that cannot be verified
    against the recorded allergies, needs an override), the dose (unit, maxima, high-alert limits, frequency, age
    and a child's mg/kg: :mod:`docgemma.clinical.dose_check`), duplicate orders, interactions with the active
    orders (``labels``: the FDA label client, when bound), and words of the order that no field took."""
    found = Findings([], [])
    # "potassium chloride 10 mmol in 100 mL sodium chloride 0.9%": the medicine is checked; the infusion fluid it is
    # named with is its vehicle, not a second active ingredient (:mod:`docgemma.clinical.vehicles`).
    name, vehicle = named_with(str(args.get("medication_name", "")))
    product = resolver.resolve(name)
    if unknown_medicine(name, product):
        # No check can vouch for a name no source knows (an invented or mistyped drug): no card, a question.
        why = (f"'{name}' names a drug class, not one medicine" if product.class_only else
               f"'{name}' is not in the local drug table or the drug dictionary"
               + ("" if resolver is LOCAL else ", and no FDA label could identify it (or none was reachable)"))
        found.blocked = f"a medicine this system can identify: {why}; nothing was written. Which medicine did you mean?"
        return found
    for finding in allergy_findings(product, facts.allergies, resolver):
        found.add(finding.text, finding.severe)
    # The label-backed resolver consults a label only for a product the table does not know, and only when the
    # service answers: name it as conditional, never as consulted (the card may say the service is unreachable).
    found.ran("Allergies and drug classes", "ingredients and classes: WHO ATC, FDA EPC, BNF (local table)"
              + ("; FDA labels for a product the table does not know, when reachable" if resolver is not LOCAL else ""))
    if vehicle is not None:
        found.ran("Diluent", f"{vehicle.shown()} read as the infusion fluid {name} is given in, not an active "
                             f"ingredient ({vehicle.vehicle.source})")
    dose_review = review_dose(product.ingredients if product.resolved else (), name, str(args.get("dosage", "")),
                              str(args.get("frequency", "")), dose_patient(facts))
    add_dose_review(found, dose_review)
    order_checks(found, name, product, args, facts)
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
    found.ran("Duplicate and same-class orders", "the patient's active medication orders")
    active_order_interactions(found, name, product, facts.medications, labels)
    unread = str(args.get(UNREAD) or "").strip()
    if unread:
        found.add(f"NOT UNDERSTOOD: '{unread}' — these words of the order were not read into any field and are not "
                  "written. Check them before approving; type them into a field if they belong to the order.")
    return found.ordered()


def unknown_medicine(name: str, product: Resolution) -> bool:
    """A name that resolves to no ingredient and that the dose table does not know either ("blorptazine")."""
    return not product.ingredients and not product.non_drug and limit_for((name.strip().lower(),)) is None


def order_checks(found: Findings, name: str, product: Resolution, args: dict[str, Any], facts: PatientFacts) -> None:
    """The checks a pharmacist makes beyond the dose: never-events by route and rate, a high-alert medicine with
    no dose range, pregnancy and breastfeeding, kidney function. Each one's line says what it used."""
    # The whole order as written, the words no field took included ("IV push" may be only there).
    whole = " ".join(str(args.get(k) or "") for k in ("medication_name", "dosage", "frequency", "duration",
                                                      "indication", "notes", UNREAD))
    tolerant = any({"opioid", "opioid_synthetic"} & resolve_local(display_text(m)).classes for m in facts.medications)
    for hazard in order_hazards.hazards(name, product.ingredients, str(args.get("dosage", "")), whole, tolerant):
        found.add(hazard.text, hazard.severe)
    found.ran("Route and rate", "never-events: IV potassium (push, bolus, rate), intrathecal vinca alkaloids, "
                                "fentanyl patches for the opioid-naive")
    alert = order_hazards.high_alert(product.ingredients, product.classes)
    # The dose check applies a range only to a product every word of which is recognised: a high-alert medicine named
    # with a word it does not know ("potassium chloride 200 mmol in glucose 50%") had its dose unchecked, one click.
    unread = "" if product.resolved else f"the words '{' '.join(product.unresolved)}' of its name are not recognised"
    if alert and (unread or limit_for(product.ingredients) is None):
        found.add(f"HIGH-ALERT MEDICINE WITHOUT A DOSE RANGE: {name} is a high-alert medicine ({alert}) and "
                  f"{unread or 'no dose range is known here'}, so the dose could not be checked; confirm it against "
                  f"the formulary and give the reason (source: {order_hazards.HIGH_ALERT_SOURCE}).", severe=True)
    age = age_years(facts.birth_date)
    record = pregnancy.status(facts.conditions, facts.observations, facts.gender, age)
    listed = pregnancy.rows_for(product.ingredients, product.classes)
    for finding in pregnancy.findings(name, product.ingredients, product.classes, record):
        found.add(finding.text, finding.severe)
    if not record.known and listed:
        found.skipped("Pregnancy and breastfeeding", f"the record gives no sex, so pregnancy could not be ruled out, "
                                                     f"and {name} ({listed[0].name}) is listed for it", severe=False)
    else:
        found.ran("Pregnancy and breastfeeding", f"{record.described()}; {pregnancy.SOURCE}")
    kidney = renal.latest(facts.observations)
    limits = renal.rows_for(product.ingredients, whole)
    if limits and kidney.value is None:
        found.skipped("Kidney function", f"no eGFR or creatinine clearance is on record, and {name} has renal limits "
                                         f"({limits[0].advice})")
        return
    dose, timing = parse_dose(str(args.get("dosage", ""))), parse_frequency(str(args.get("frequency", "")))
    per_day = dose.mg * timing.per_day if dose is not None and dose.mg is not None and timing is not None \
        and not timing.as_needed else None
    for limit in renal.findings(name, product.ingredients, kidney, per_day=per_day,
                                doses_a_day=timing.per_day if timing is not None else None, order=whole):
        found.add(limit.text, limit.severe)
    found.ran("Kidney function", f"{kidney.described()}; {renal.SOURCE}" if limits
              else f"no renal limit for {name} in the {renal.SOURCE}")


def dose_patient(facts: PatientFacts) -> DosePatient:
    """Age and recent weight for the dose check, from the record's birth date and body-weight observations."""
    age = age_years(facts.birth_date)
    recent = recent_weight(facts.observations, age) if age is not None else None
    return DosePatient(age=age, weight=recent, latest=latest_weight(facts.observations))


def add_dose_review(found: Findings, review: DoseReview) -> None:
    """The dose check's findings and check lines onto the card (a check that could not run is a warning, severe
    where the check says so; one whose finding already says why is listed without a second line)."""
    for finding in review.findings:
        found.add(finding.text, finding.severe)
    for check in review.checks:
        if check.ran:
            found.ran(check.name, check.detail)
        elif check.said:
            found.checks.append(CheckRun(check.name, False, check.detail))
        else:
            found.skipped(check.name, check.detail, check.severe)


def medication_request(args: BaseModel, context: ToolContext) -> Draft:
    """The MedicationRequest (an order; dispensing is outside this system), named by drug, dose, frequency and
    course; an approved override's reason is one of its notes."""
    a: Any = args
    resource: dict[str, Any] = {
        "resourceType": WRITTEN, "status": "active", "intent": "order",
        "subject": {"reference": f"Patient/{a.patient_id}"}, "authoredOn": date.today().isoformat(),
        "medicationCodeableConcept": {"text": a.medication_name},
        "dosageInstruction": [dosage_instruction(a.dosage, a.frequency, a.notes, a.duration)],
    }
    course = parse_duration(a.duration or "")
    if course is not None and course.value is not None:
        # How long the supply is for: the course the clinician gave ("for 7 days", "x7d", "2/52").
        resource["dispenseRequest"] = {"expectedSupplyDuration": course.quantity()}
    if a.indication:
        resource["reasonCode"] = [{"text": a.indication}]
    notes = [{"text": a.notes}] if a.notes else []
    if context.override_reason:
        reason = context.override_reason
        notes.append({"text": f"Severe finding overridden by the approving clinician. Reason: {reason}"})
    if notes:
        resource["note"] = notes
    return resource, " ".join(filter(None, (a.medication_name, a.dosage, a.frequency, duration_phrase(a.duration))))


SPEC = record_write(ToolSpec(
    "prescribe_medication",
    "Prescription",
    "Create a new medication order for a patient in the EHR. Use when a clinician wants to "
    "prescribe, order, or start a medication for a specific patient.",
    PrescribeMedicationArgs,
    "Start lisinopril 10 mg once daily for patient abc-123.",
    arg_max_tokens=512,
    # "start" and "order" would be natural prescribe words too; they match questions ("is it safe to start X?") and would
    # force a write tool into a read-only question: an order verb counts only with a drug (MEDICATION_ORDER).
    keywords=("prescribe", "prescription"),
    extract=prescription,
), Role.MEDICATION_ORDER, medication_request, WRITTEN, check=prescription_check, check_needs=("resolver", "labels"))
