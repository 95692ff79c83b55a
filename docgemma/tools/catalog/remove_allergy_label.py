"""remove_allergy_label: removes an allergy label that no longer applies (a negative challenge, a negative test, a
label in error) after the clinician approves its own card. Removing is a status change of the entry on record,
never a new entry and never a deletion: the AllergyIntolerance becomes clinicalStatus inactive and
verificationStatus refuted, with the reason in a note; the update is version-checked against the version the card
was built on (``If-Match``: an entry changed between the card and the approval is refused, not overwritten), carries
its Provenance and is made once per approval.

Its pre-write check finds the entry: an allergy not on record as active refuses the card (nothing to remove).
A reason is required: without one the card is still shown, its Reason field to fill in, and an approval of it
without a reason is refused (a question in the chat was a dead end: the reply alone is no request, and the button
"Remove the … allergy label for this patient" carries none)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from docgemma.clinical.allergy import allergy_line
from docgemma.clinical.ingredients import LOCAL, IngredientResolver
from docgemma.ehr.client import FhirClientError
from docgemma.ehr.service import Ehr, action_key, idempotency_key
from docgemma.fhir import display_text, now
from docgemma.tools.args import ENTRY, PatientId, ToolArgs
from docgemma.tools.outcome import ToolOutcome, failure, success
from docgemma.tools.record_io import fail
from docgemma.tools.record_tool import record_update
from docgemma.tools.routing import Request, Role
from docgemma.tools.spec import ToolContext, ToolSpec
from docgemma.tools.write_checks import Findings, PatientFacts, active_allergies

#: The resource its update changes.
WRITTEN = "AllergyIntolerance"
_CLINICAL = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical"
_VERIFICATION = "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification"


class RemoveAllergyLabelArgs(ToolArgs):
    patient_id: str = PatientId
    substance: str = Field(min_length=2, max_length=60, description="The allergy on record to remove (its substance)")
    reason: str = Field(min_length=3, max_length=160, description="Why the label no longer applies (required)")
    #: The entry as the card read it (``tools.args.ENTRY``, "AllergyIntolerance/<id>/_history/<version>"): filled by
    #: the card's check, never by a model; the removal changes that entry only while it is still that version.
    entry: SkipJsonSchema[str | None] = Field(default=None, max_length=160)


#: The substance of the label: "remove the penicillin allergy", "delabel penicillin", "penicillin allergy label".
_SUBSTANCE_RES = (
    re.compile(r"\b(?:remove|delete|take\s+off|clear|inactivate|retire|de-?label)\s+(?:the\s+|her\s+|his\s+|their\s+)?"
               r"(?:allergy\s+(?:label\s+)?(?:to|for)\s+)?(?P<name>[a-z][a-z0-9\-]{1,30}"
               r"(?:\s+(?!allerg|label|intoleran)[a-z][a-z0-9\-]{2,30})?)"
               r"(?=\s+(?:allerg\w*|label|intolerance|for)\b|\s*$|\s+-\s|[,.;:(])", re.IGNORECASE),
    re.compile(r"\b(?:negative|passed|tolerated)\s+(?:a\s+|an\s+|the\s+)?(?:oral\s+)?(?P<name>[a-z][a-z0-9\-]{1,30}"
               r"(?:\s+(?!skin|challenge|test)[a-z][a-z0-9\-]{2,30})?)\s+(?:skin\s+test|challenge|test\s+dose)\b",
               re.IGNORECASE),
    re.compile(r"\b(?!(?:the|her|his|their|this|that|an?)\s)(?P<name>[a-z][a-z0-9\-]{1,30}(?:\s+[a-z][a-z0-9\-]{2,30})?)"
               r"\s+(?:allergy|intolerance)"
               r"(?:\s+label)?\b", re.IGNORECASE),
    re.compile(r"\bde-?labell?(?:ed|ing)?\s+(?:[a-z]+\s+){0,3}?(?:from|of)\s+(?P<name>[a-z][a-z0-9\-]{2,30})",
               re.IGNORECASE),
)
_NOT_A_SUBSTANCE = re.compile(r"^(?:the|her|his|their|this|that|an?|remove|delete|allergy|label|old|previous)\b",
                              re.IGNORECASE)
#: Why the label no longer applies: a stated reason, a challenge or test passed.
_REASON_RES = (
    re.compile(r"\b(?:reason|because|due\s+to|after|following)\s*[:\-]?\s*(?P<why>(?:(?!\s-\s)[^.;,]){3,160})", re.IGNORECASE),
    re.compile(r"(?P<why>\btolerated\s+(?:a\s+|an\s+|the\s+)?[a-z\-]+(?:\s+[a-z\-]+){0,3}?\s*"
               r"(?:challenge|test\s+dose|course|dose)\b(?:(?!\s-\s)[^,.;]){0,60})", re.IGNORECASE),
    re.compile(r"(?P<why>\b(?:negative|passed)\s+(?:[a-z\-]+\s+){0,3}?(?:challenge|skin\s+test|test\s+dose|test)\b"
               r"(?:(?!\s-\s)[^,.;]){0,60}|\b(?:[a-z\-]+\s+){0,3}?(?:challenge|skin\s+test|test\s+dose|testing)\s+(?:was\s+)?"
               r"(?:negative|passed)\b|\b(?:entered|recorded)\s+in\s+error\b[^,.;]{0,60}|\bnegative\s+testing\b|"
               r"\b(?:it\s+)?was\s+(?:a\s+)?(?:mistake|wrong|an\s+error)\b|\bwrong\s+patient\b|"
               r"\bha[sd]\s+had\s+(?:it|[a-z\-]+)\s+since\b[^,.;]{0,60})", re.IGNORECASE),
)


#: A reason that says none: what a model fills in for a field the message left empty ("not specified").
_NO_REASON = re.compile(r"^\W*(?:not\s+(?:specified|stated|given|provided|known)|unknown|unspecified|none|nil|n/?a|"
                        r"no\s+reason(?:\s+given)?|tbc|tbd|\?+|-+)\W*$", re.IGNORECASE)
#: What the card still needs when the message gave no reason.
REASON_WANTED = ("the reason the label no longer applies (e.g. 'tolerated an amoxicillin oral challenge', 'negative "
                 "skin test', 'entered in error')")
NEEDS_REASON = f"{REASON_WANTED}: a label is removed only with its reason; nothing was written"
#: The card's finding beside its Reason field when none was given ("REASON" ties it to that field: ``ui/card.py``).
REASON_NEEDED = ("REASON NEEDED: type in the Reason field why the label no longer applies (e.g. 'tolerated an "
                 "amoxicillin oral challenge', 'negative skin test', 'entered in error'); a label is removed only with "
                 "its reason, and nothing is written without it.")


def stated_reason(reason: object) -> str:
    """The reason, or "" when it says none (a placeholder is never a reason)."""
    text = str(reason or "").strip()
    return "" if len(text) < 3 or _NO_REASON.match(text) else text


def _substance(text: str) -> str | None:
    for pattern in _SUBSTANCE_RES:
        for found in pattern.finditer(text):
            name = found.group("name").strip()
            if not _NOT_A_SUBSTANCE.match(name):
                return name
    return None


def _reason(text: str) -> str | None:
    for pattern in _REASON_RES:
        found = pattern.search(text)
        if found:
            return found.group("why").strip(" ,-")
    return None


def label_args(request: Request) -> dict[str, Any]:
    """The patient, the label's substance and the reason the message states (never guessed: no reason, none)."""
    out: dict[str, Any] = {"patient_id": request.patient_id} if request.patient_id else {}
    substance, reason = _substance(request.query), _reason(request.query)
    if substance:
        out["substance"] = substance
    if reason:
        out["reason"] = reason
    return out


def on_record(substance: str, allergies: list[dict[str, Any]],
              resolver: IngredientResolver = LOCAL) -> list[dict[str, Any]]:
    """The active entries of ``allergies`` that ``substance`` names: by ingredient or class, or by its words."""
    wanted = resolver.allergen(substance)
    out = []
    for entry in active_allergies(allergies):
        recorded = resolver.allergen(display_text(entry))
        same = bool(set(wanted.ingredients) & set(recorded.ingredients)) or (
            not wanted.ingredients and bool(wanted.classes) and wanted.classes <= recorded.classes)
        if same or re.search(rf"\b{re.escape(substance.lower())}\b", display_text(entry).lower()):
            out.append(entry)
    return out


def label_check(args: dict[str, Any], facts: PatientFacts, resolver: IngredientResolver = LOCAL) -> Findings:
    """The entry the card changes: refused when no active allergy on record matches, or when several do. With the
    entry found and no reason given, the card is shown with its Reason field to fill (``Findings.needs``): what is
    not on record is said first, since no reason would make that removal possible."""
    found = Findings([], [])
    substance = str(args.get("substance") or "")
    named = bool(substance.strip()) and not _NO_REASON.match(substance)  # "not specified" names no allergy either
    entries = on_record(substance, facts.allergies, resolver) if named else []
    found.ran("The allergy on record", "the patient's active allergy list, by ingredient and class")
    listed = ", ".join(repr(allergy_line(a)) for a in facts.allergies) or "none"
    if not named:
        found.blocked = f"which allergy label to remove (active allergies: {listed}); nothing was written"
    elif not entries:
        found.blocked = (f"no active allergy to '{substance}' is on record for this patient (active allergies: "
                         f"{listed}); there is no label to remove, and nothing was written")
    elif len(entries) > 1:
        found.blocked = (f"'{substance}' matches several allergies on record ("
                         f"{', '.join(repr(allergy_line(a)) for a in entries)}); name the one to remove")
    else:
        entry = entries[0]
        version = str((entry.get("meta") or {}).get("versionId") or "")
        if not version:
            found.blocked = (f"the version of the '{allergy_line(entry)}' entry, which this record does not give: a "
                             "removal is made only on the version the card showed; nothing was written")
            return found
        # The version read now is the one the card shows and the approval covers (``Findings.pins``).
        found.pins[ENTRY] = f"{WRITTEN}/{entry.get('id')}/_history/{version}"
        reason = stated_reason(args.get("reason"))
        if not reason:
            found.needs = REASON_WANTED
            found.add(REASON_NEEDED)
        # The reason is the card's own field, not quoted here: filling it in changes no finding, so the card after
        # it says only that the values changed ("Your changes were checked again"), never a new finding.
        found.add(f"LABEL TO REMOVE: '{allergy_line(entry)}' [{WRITTEN}/{entry.get('id')}, version {version}] becomes "
                  "inactive and refuted; the reason on this card is kept in its note.")
    return found


def delabelled(entry: dict[str, Any], reason: str, who: str) -> dict[str, Any]:
    """``entry`` with its label removed: inactive, refuted, the reason in a note (the earlier notes kept)."""
    note = {"text": f"Allergy label removed: {reason}", "time": now(), **({"authorString": who} if who else {})}
    return {**entry,
            "clinicalStatus": {"coding": [{"system": _CLINICAL, "code": "inactive"}]},
            "verificationStatus": {"coding": [{"system": _VERIFICATION, "code": "refuted"}]},
            "note": [*entry.get("note", []), note]}


def changed_since(substance: str) -> ToolOutcome:
    """The refusal of a removal whose entry changed after the card was built: nothing is written."""
    return failure("invalid_args", missing_fields=[
        f"a fresh look at the allergy list (the {substance} entry changed since it was read; nothing was written)"])


def remove_label(ehr: Ehr, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """The approved removal, made on the entry the card showed: changed only while it is still the version the card
    was built on (``entry``, sent as ``If-Match``); a call without a card (no ``entry``: an unattended MCP client)
    reads the entry now and version-checks against that."""
    a: Any = args
    tool = "remove_allergy_label"
    action = action_key(context.scope, tool) if context.scope else idempotency_key(a.patient_id, tool, a.model_dump())
    if not stated_reason(a.reason):
        return failure("invalid_args", missing_fields=[NEEDS_REASON])
    try:
        done = ehr.updated_by_action(action)  # this approval already removed it (a retry): nothing more
        if done is not None:
            return success(_removed(done, a.reason, changed=False))
        entries = on_record(a.substance, ehr.client.search(WRITTEN, [("patient", a.patient_id)]))
        if len(entries) != 1:
            return failure("invalid_args", missing_fields=[
                f"one active allergy to '{a.substance}' on record (found {len(entries)}; nothing was written)"])
        entry = entries[0]
        version = str(entry.get("meta", {}).get("versionId", ""))
        if a.entry is not None:
            shown, _, version = str(a.entry).partition("/_history/")
            if shown != f"{WRITTEN}/{entry.get('id')}":
                return changed_since(a.substance)
        saved, changed = ehr.update(delabelled(entry, a.reason, context.approved_by), version=version,
                                    action=action, step=tool, approved_by=context.approved_by,
                                    conversation=context.conversation)
    except FhirClientError as exc:
        return changed_since(a.substance) if exc.status == 412 else fail(exc)
    return success(_removed(saved, a.reason, changed))


def _removed(saved: dict[str, Any], reason: str, changed: bool) -> dict[str, Any]:
    """The confirmation's data (``record_io.format_write``): what was changed, where, and whether just now."""
    return {"written": f"allergy label removed: {display_text(saved)} (inactive, refuted; reason: {reason})",
            "resource": f"{WRITTEN}/{saved['id']}", "created": changed}


SPEC = record_update(ToolSpec(
    "remove_allergy_label",
    "Allergy Label Removal",
    "Remove (de-label) an allergy already on the patient's record that no longer applies, e.g. after a negative "
    "challenge or test: marks the entry inactive and refuted with the reason. Needs the reason.",
    RemoveAllergyLabelArgs,
    "Remove the penicillin allergy label for patient abc-123: tolerated an amoxicillin oral challenge.",
    arg_max_tokens=336,
    keywords=("delabel", "de-label", "delabelled", "de-labelled", "delabeled", "delabelling", "de-labelling"),
    extract=label_args,
), Role.ALLERGY_REMOVAL, remove_label, WRITTEN, check=label_check, check_needs=("resolver",))
