"""The record item a connection question starts from when the message names it in words, not by id: "why is she on
amlodipine?" (her amlodipine order), "what is linked to her CKD?" (her chronic kidney disease), "what explains her
potassium?" (her newest potassium result). Read off the patient's own record by code, so the connections tool runs
on a model that is not fit to choose it (the embedded default asked "which record item?" for every such question).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from docgemma.clinical.record_concepts import LAB_NAME_RE, LAB_NAMES
from docgemma.fhir import concept_code, display_text

#: How clinicians shorten the conditions a record names in full ("CKD" is "Chronic kidney disease stage 3").
_SHORT_FORMS = {"ckd": "chronic kidney", "htn": "hypertension", "hypertensive": "hypertension",
                "af": "atrial fibrillation", "afib": "atrial fibrillation", "t2dm": "diabetes", "t1dm": "diabetes",
                "dm": "diabetes", "diabetic": "diabetes", "copd": "obstructive", "chf": "heart failure",
                "ccf": "heart failure", "hf": "heart failure", "ihd": "ischemic heart", "cad": "coronary",
                "mi": "myocardial infarction", "uti": "urinary tract infection", "tb": "tuberculosis",
                "ra": "rheumatoid arthritis", "oa": "osteoarthritis", "gord": "reflux", "gerd": "reflux",
                "dvt": "venous thrombosis", "pe": "pulmonary embolism", "asthmatic": "asthma", "epileptic": "epilepsy"}
#: British spellings, as the record (US terminologies) spells them.
_SPELLINGS = (("anaem", "anem"), ("haem", "hem"), ("oedem", "edem"), ("ischaem", "ischem"), ("oesoph", "esoph"),
              ("tumour", "tumor"), ("paediat", "pediat"), ("leukaem", "leukem"))
#: Words of a condition's name that name no condition on their own.
_GENERIC = frozenset({"disorder", "finding", "disease", "chronic", "acute", "essential", "primary", "secondary",
                      "situation", "history", "stage", "type", "with", "without", "due", "body", "mass", "index",
                      "procedure", "regime", "therapy", "mellitus", "syndrome", "condition", "problem", "severe",
                      "mild", "moderate", "unspecified", "other", "episode", "status", "person", "patient",
                      "medication", "review", "full", "time", "employment", "education", "social", "limited",
                      "received", "higher", "reports", "stress", "risk", "activity", "involving"})
_ACTIVE_CONDITION = ("active", "recurrence", "relapse", "")


@dataclass(frozen=True)
class Start:
    """The item a connection question starts from: its type, id and name as the record has it."""

    resource_type: str
    fhir_id: str
    name: str


def _normal(text: str) -> str:
    lowered = text.lower()
    for british, american in _SPELLINGS:
        lowered = lowered.replace(british, american)
    return lowered


def _words(text: str) -> set[str]:
    return {w.rstrip("s") if len(w) > 4 else w for w in re.findall(r"[a-z0-9]+", _normal(text))}


def _condition_score(condition: dict[str, Any], asked: set[str], phrases: str) -> int:
    name = re.sub(r"\([^)]*\)", "", display_text(condition))
    keys = {w for w in _words(name) if len(w) >= 4 and w not in _GENERIC}
    hits = len(keys & asked)
    # A short form's words ("ckd" → "chronic kidney") found in the name count as one word of it.
    return hits + sum(1 for long in phrases.split("|") if long and long in _normal(name))


def _medication(drugs: list[str], resources: list[dict[str, Any]]) -> Start | None:
    """The active order of the first drug named that is on the record."""
    for drug in drugs:
        words = [w for w in re.findall(r"[a-z]+", drug.lower()) if len(w) > 2]
        for order in resources:
            name = display_text(order).lower()
            if order.get("resourceType") == "MedicationRequest" and words and all(w in name for w in words):
                return Start("MedicationRequest", str(order["id"]), display_text(order))
    return None


def _condition(query: str, resources: list[dict[str, Any]]) -> Start | None:
    """The one active condition the message names best (None when none, or two equally)."""
    asked = _words(query)
    phrases = "|".join(_SHORT_FORMS[w] for w in re.findall(r"[a-z0-9]+", query.lower()) if w in _SHORT_FORMS)
    scored = sorted(((score, c) for c in resources
                     if c.get("resourceType") == "Condition" and concept_code(c, "clinicalStatus") in _ACTIVE_CONDITION
                     and (score := _condition_score(c, asked, phrases)) > 0), key=lambda sc: -sc[0])
    if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]
                      and display_text(scored[0][1]) != display_text(scored[1][1])):
        return None
    best = scored[0][1]
    return Start("Condition", str(best["id"]), display_text(best))


def _result(query: str, resources: list[dict[str, Any]]) -> Start | None:
    """The newest result of the one the message names ("her potassium", "the eGFR")."""
    found = LAB_NAME_RE.search(query)
    if not found:
        return None
    wanted = _normal(LAB_NAMES.get(found.group(1).lower(), found.group(1).lower()))
    results = [r for r in resources if r.get("resourceType") == "Observation" and wanted in _normal(display_text(r))]
    results.sort(key=lambda r: str(r.get("effectiveDateTime") or r.get("issued") or ""), reverse=True)
    return Start("Observation", str(results[0]["id"]), display_text(results[0])) if results else None


def connection_start(query: str, drugs: list[str], resources: list[dict[str, Any]]) -> Start | None:
    """The record item the question names, among the patient's ``resources``: a drug's active order first (what a
    drug is for is what is asked most), then the condition, then the newest result; None when it names none of
    them, or two conditions alike (the clinician is asked, nothing is guessed)."""
    return _medication(drugs, resources) or _condition(query, resources) or _result(query, resources)
