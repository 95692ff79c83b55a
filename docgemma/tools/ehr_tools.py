"""The checks every record write goes through, against the record built at start-up: the patient check before
the approval card, the look-up of an approved write by its idempotency key, and the record's facts an answer is
checked against. The record tools themselves (each in its ``tools/catalog/`` module) declare that they need the
record and are bound by ``tools/binding.bind_tools``. Writes reach the record only after the clinician approved
them in TOOL_EXECUTE.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docgemma.clinical.allergy import allergy_line
from docgemma.clinical.patient import PatientRef
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import Ehr, action_key
from docgemma.ehr.validate import tolerant, unreadable_note
from docgemma.fhir import display_text
from docgemma.tools.review_types import CheckStatus, PatientCard, WriteCheck, WriteReview
from docgemma.tools.spec import ToolRegistry, ToolSpec
from docgemma.tools.write_checks import Findings, PatientFacts, active_allergies, active_orders


def write_lookup(ehr: Ehr, tools: ToolRegistry) -> Callable[[str, str], str | None]:
    """(tool, pending action id) -> the resource that action wrote (``MedicationRequest/…``), or None when the
    record holds nothing under its action (``record_io.write`` names the action on the write). Where a
    write tool writes is its own declaration (``ToolSpec.written``) in ``tools``, the running registry. Raises
    ConnectionError when the record cannot answer: "not found" must never be guessed."""
    def find(tool: str, action_id: str) -> str | None:
        kind = tools[tool].written if tool in tools else ""
        if not kind:
            return None
        try:
            key = action_key(action_id, tool)
            # A created resource names the action; an updated one is found by the update's Provenance.
            found = ehr.written_by_action(kind, key) or ehr.updated_by_action(key)
        except FhirClientError as exc:
            raise ConnectionError(f"the record did not answer (HTTP {exc.status})") from exc
        return f"{found['resourceType']}/{found['id']}" if found else None

    return find


def record_write_check(ehr: Ehr) -> WriteCheck:
    """The write check against ``ehr``: who the patient is (a patient not on the record blocks the write before
    any card is shown; one that is on it is the card's first listed check, "Patient identity", for every write
    tool), plus the tool's own :attr:`~docgemma.tools.spec.ToolSpec.pre_write_check`."""
    def check(spec: ToolSpec, args: dict[str, Any], active: PatientRef | None) -> WriteReview:
        patient_id = str(args.get("patient_id", ""))
        try:
            resources = ehr.compartment(patient_id)  # $everything: 404 for a patient not on the record
            patient = next((r for r in resources if r.get("resourceType") == "Patient" and r.get("id") == patient_id),
                           None) or ehr.client.read("Patient", patient_id)  # a server whose $everything omits it
        except FhirClientError as exc:
            if exc.status in (404, 410):
                return WriteReview(blocked=f"an existing patient ID (no patient '{patient_id}' is on the record; "
                                           "nothing was written)")
            why = "it could not be read, so allergies, active orders and age were not checked."
            unread = f"NOT CHECKED — THE PATIENT RECORD: {why}"  # the card says it once, in its checks list, as severe
            return WriteReview(warnings=[unread], severe=[unread], checks=[
                CheckStatus(name="Patient identity", ran=False, detail="the record could not be read"),
                CheckStatus(name="The patient record", ran=False, detail=why)])
        def review(readable: list[dict[str, Any]], skipped: int) -> WriteReview:
            facts = facts_of(patient, readable)
            found = spec.pre_write_check(args, facts) if spec.pre_write_check else Findings([], [])
            if found.blocked:
                return WriteReview(blocked=found.blocked)
            severe = list(found.severe)
            if skipped:
                # An allergy the check could not read may be the one that matters: no plain approval.
                severe.insert(0, f"INCOMPLETE CHECK: {unreadable_note(skipped)} The allergy and duplicate-order "
                                 "checks could not see them; review the record before approving.")
            card = PatientCard(
                id=patient_id, name=display_text(patient), birth_date=str(patient.get("birthDate") or "unknown"),
                gender=str(patient.get("gender") or "unknown"), allergies=[allergy_line(a) for a in facts.allergies],
                active_medications=len(facts.medications), medications=[display_text(m) for m in facts.medications][:6],
            )
            # Every write's first check, the tools' own after it: whose record this goes into, as the record says
            # (the card names the patient once, in its header: the check does not repeat the name).
            identity = CheckStatus(name="Patient identity", ran=True, detail="on the record, named by name and birth date")
            checks = [identity, *(CheckStatus(name=c.name, ran=c.ran, detail=c.detail) for c in found.checks)]
            return WriteReview(warnings=found.warnings, severe=severe, patient=card, checks=checks, pins=found.pins,
                               needs=found.needs)

        return tolerant(review, resources)

    return check


def record_facts(ehr: Ehr) -> Callable[[PatientRef], PatientFacts | None]:
    """The patient's allergies, active orders, birth date, sex, observations and conditions as the record holds
    them now, for checking an answer (and the drugs a message names) against the record (None when the record
    cannot be read, or, for a patient given by name only (``id`` ""), when not exactly one patient has that name:
    the answer is then not checked, never blocked, and a drug named is said not to be checked)."""
    def facts(patient: PatientRef) -> PatientFacts | None:
        try:
            if not patient["id"]:
                # A patient named by name only (not the open one): exactly one record of that name, or no check.
                found = [p for p in ehr.client.search("Patient", {"name": patient["name"]}, limit=5)
                         if display_text(p).strip().lower() == patient["name"].strip().lower()]
                if len(found) != 1:
                    return None
                patient = PatientRef(id=str(found[0].get("id")), name=patient["name"])
            resources = ehr.compartment(patient["id"])
        except FhirClientError:
            return None
        record = next((r for r in resources if r.get("resourceType") == "Patient" and r.get("id") == patient["id"]),
                      {})
        return tolerant(lambda readable, _skipped: facts_of(record, readable), resources)

    return facts


def facts_of(patient: dict[str, Any], readable: list[dict[str, Any]]) -> PatientFacts:
    """What every check of a drug reads of one patient's record: active allergies and orders, birth date, sex,
    observations and conditions (one reading for the write checks and the named-drug lines alike)."""
    return PatientFacts(allergies=active_allergies(readable), medications=active_orders(readable),
                        birth_date=str(patient.get("birthDate") or ""), gender=str(patient.get("gender") or ""),
                        observations=[r for r in readable if r.get("resourceType") == "Observation"],
                        conditions=[r for r in readable if r.get("resourceType") == "Condition"])
