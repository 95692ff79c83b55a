"""A model-written answer checked against the patient's record, by code, before the clinician reads it.

A model can follow text planted in the record ("patient has NO ALLERGIES … prescribe oxycodone") or simply be
wrong. The write gate stops a bad order; this check stops a bad answer from standing unflagged. It looks for
three contradictions of the record:

* **allergies**: the answer says there are none while the record lists some, or recommends a drug that conflicts
  with a recorded allergy (same substance or class);
* **active medications**: the answer says there are none, or that the patient is not on a drug the record has an
  active order for;
* **identity**: the answer names a patient id or patient name that is not the active patient's (and that no tool
  result of the turn returned).

Each contradiction is stated under the answer with what the record says, and the turn's confidence drops to low.
Only what the record holds is used; the check never adds a medical claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from docgemma.clinical.allergy import allergy_findings, allergy_line
from docgemma.clinical.entities import DrugDictionary, extract_patient_ids, extract_patient_names
from docgemma.clinical.ingredients import resolve_local
from docgemma.clinical.patient import PatientRef, shown_id
from docgemma.fhir import display_text
from docgemma.tools.write_checks import PatientFacts

#: The active patient's allergies and active orders, read from the record (None when it cannot be read).
RecordFacts = Callable[[PatientRef], "PatientFacts | None"]

_NO_ALLERGIES_RE = re.compile(
    r"\b(?:no|nil|without(?:\s+any)?|denies(?:\s+any)?|free\s+of)\s+(?:known\s+|recorded\s+|documented\s+)?"
    r"(?:drug\s+)?allerg(?:y|ies)\b(?!\s+(?:check|interaction|conflict|alert|warning|concern|risk))"
    r"|\bnkda\b|\bnka\b|\bnot\s+allergic\s+to\s+(?:anything|any\s+(?:drugs?|medications?))\b"
    r"|\ballerg(?:y|ies)\s*[:\-]\s*(?:none|nil|nkda)\b"
    r"|\b(?:has|have|had|with)\s+no\s+(?:known\s+)?allerg",
    re.IGNORECASE,
)
_NO_MEDICATIONS_RE = re.compile(
    r"\b(?:is|are|was)\s+on\s+no\s+(?:\w+\s+)?(?:medications?|meds|drugs)\b"
    r"|\b(?:takes|taking|has|have|with)\s+no\s+(?:current\s+|active\s+|regular\s+)?(?:medications?|meds)\b"
    r"|\bno\s+(?:current|active|regular)\s+(?:medications?|meds|prescriptions)\b"
    r"|\bno\s+(?:medications?|meds)\s+(?:on\s+record|listed|recorded|prescribed|at\s+present)\b"
    r"|\bnot\s+on\s+any\s+(?:\w+\s+)?(?:medications?|meds|drugs)\b"
    r"|\bmedications?\s*[:\-]\s*(?:none|nil)\b",
    re.IGNORECASE,
)
#: "is not on warfarin", "isn't taking metformin", "has stopped lisinopril".
_NOT_ON_RE = re.compile(
    r"\b(?:not|n't|never|no\s+longer)\s+(?:currently\s+)?(?:on|taking|prescribed|receiving)\s+(?:any\s+)?"
    r"(?P<drug>[A-Za-z][\w\-]+)"
    r"|\b(?:stopped|discontinued)\s+(?P<stopped>[A-Za-z][\w\-]+)",
    re.IGNORECASE,
)
#: A sentence that advises giving a drug (and does not warn against it).
_ADVISES_RE = re.compile(r"\b(prescrib\w*|start\w*|give|giving|administer\w*|recommend\w*|safe\s+to|can\s+(?:have|take|"
                         r"receive|use)|proceed\s+with|go\s+ahead|order)\b", re.IGNORECASE)
_WARNS_RE = re.compile(r"\b(avoid\w*|not|n't|never|contraindicat\w*|allerg\w*|instead|caution|unsafe|reaction)\b",
                       re.IGNORECASE)
_SENTENCE_RE = re.compile(r"(?<=[.!?;\n])\s+")
#: A confidence the model wrote into its own text ("Confidence: high"): the check's verdict replaces it.
_STATED_CONFIDENCE_RE = re.compile(r"\b(confidence\s*[:=\-]?\s*\**\s*)(high|medium|moderate|very\s+high)\b",
                                   re.IGNORECASE)


@dataclass(frozen=True)
class Contradiction:
    """One place where the answer and the record disagree: what kind, and what the record says."""

    kind: str  # "allergies", "medications" or "identity"
    text: str


def _allergy_contradictions(answer: str, who: str, facts: PatientFacts) -> list[Contradiction]:
    if not facts.allergies:
        return []
    listed = "; ".join(allergy_line(a) for a in facts.allergies[:6])
    out = []
    if _NO_ALLERGIES_RE.search(answer):
        out.append(Contradiction("allergies", f"The answer says there are no allergies, but {who}'s record lists: "
                                              f"{listed}."))
    flagged: set[str] = set()
    for sentence in _SENTENCE_RE.split(answer):
        if not _ADVISES_RE.search(sentence) or _WARNS_RE.search(sentence):
            continue
        for drug in DrugDictionary.find(sentence):
            if drug in flagged:
                continue
            found = [f for f in allergy_findings(resolve_local(drug), facts.allergies)
                     if f.kind in ("substance", "class", "contraindicated")]
            if found:
                flagged.add(drug)
                out.append(Contradiction("allergies", f"The answer advises {drug}, which conflicts with an allergy on "
                                                      f"{who}'s record: {listed}."))
    return out


def _medication_contradictions(answer: str, who: str, facts: PatientFacts) -> list[Contradiction]:
    if not facts.medications:
        return []
    names = [display_text(m) for m in facts.medications]
    out = []
    if _NO_MEDICATIONS_RE.search(answer):
        out.append(Contradiction("medications", f"The answer says there are no active medications, but {who}'s "
                                                f"record has active orders: {'; '.join(names[:6])}."))
    active = {i: n for n in names for i in resolve_local(n).ingredients}
    for match in _NOT_ON_RE.finditer(answer):
        word = match["drug"] or match["stopped"]
        for ingredient in resolve_local(word).ingredients:
            if ingredient in active:
                out.append(Contradiction("medications", f"The answer says the patient is not on {word}, but {who}'s "
                                                        f"record has an active order: {active[ingredient]}."))
                break
    return out


def _identity_contradictions(answer: str, patient: PatientRef, returned: str) -> list[Contradiction]:
    out = []
    for pid in extract_patient_ids(answer):
        if pid.lower() != patient["id"].lower() and pid.lower() not in returned:
            out.append(Contradiction("identity", f"The answer mentions patient ID {shown_id(pid)}, but the active "
                                                 f"patient is {patient['name']} (ID {patient['id']})."))
    own = {w.lower() for w in patient["name"].split()}
    for name in extract_patient_names(answer):
        if not own & {w.lower() for w in name.split()} and name.lower() not in returned:
            out.append(Contradiction("identity", f"The answer speaks of {name}, but the active patient is "
                                                 f"{patient['name']}."))
    return out


def contradictions(answer: str, patient: PatientRef | None, facts: PatientFacts | None,
                   returned: Iterable[str] = (), asked_about: str | None = None) -> list[Contradiction]:
    """Where ``answer`` contradicts the record of ``patient`` (``facts``: their allergies and active orders;
    ``returned``: the turn's tool results as text, whose patients an answer may name; ``asked_about``: a patient
    the clinician's message names who is not ``patient``)."""
    if patient is None:
        return []
    seen = " ".join(returned).lower()
    out = _identity_contradictions(answer, patient, seen)
    if asked_about:
        out.insert(0, Contradiction("identity", f"Your message names {asked_about}, but the record this answer had is "
                                                f"{patient['name']}'s (the active patient)."))
    if facts is not None:
        out += _allergy_contradictions(answer, patient["name"], facts)
        out += _medication_contradictions(answer, patient["name"], facts)
    return list({c.text: c for c in out}.values())


def flagged(answer: str, found: list[Contradiction]) -> tuple[str, str]:
    """``answer`` with any confidence the model claimed replaced, and the warning that states each contradiction
    (to go under it); ``(answer, "")`` when nothing contradicts the record."""
    if not found:
        return answer, ""
    answer = _STATED_CONFIDENCE_RE.sub(lambda m: f"{m[1]}low (contradicts the record)", answer)
    listed = "\n".join(f"- {c.text}" for c in found)
    return answer, ("\n\n**Warning — this answer contradicts the patient's record:**\n"
                    f"{listed}\nConfidence is low: check the record before acting on this answer.")
