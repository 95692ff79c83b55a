"""Deterministic argument extraction for TOOL_SELECT stage 2: what the message states plainly (drug names,
patient ids, dose and frequency, a note after a colon) is filled by code; the model is asked only for the
required fields still missing. Each tool's spec names its extractor (``ToolSpec.extract``).

Every value here stands in the clinician's own words or in the deterministic entities. A write's dose or
frequency that the message does not state is left "not specified" rather than asked of the model: the
approval card shows it, so nothing invented reaches the record.
"""

from __future__ import annotations

import re
from typing import Any

from docgemma.clinical.dosing import route_words
from docgemma.clinical.entities import DrugDictionary, combination_parts
from docgemma.tools.routing import Request

NOT_SPECIFIED = "not specified"
#: Words asking for a drug's label warnings, or for drugs together: the tools' task keywords, and the clause
#: whose drugs the extractor takes when a message names several.
SAFETY_WORDS = ("safety", "warning", "warnings", "boxed warning", "fda")
INTERACTION_WORDS = ("interaction", "interactions", "combining", "together with")

DOSE_RE = re.compile(
    r"\b(\d+(?:[.,]\d+)?\s*(?:mg|mcg|µg|micrograms?|g|grams?|units?|iu|ml|mmol|meq|mg/kg)(?![a-z]))", re.IGNORECASE
)
FREQUENCY_RE = re.compile(
    r"\b((?:once|twice|three times|four times|[1-4]\s*(?:x|times))\s+(?:a|per|each)?\s*(?:day|daily|week|weekly)"
    r"|(?:once|twice)\s+daily|three times daily|four times daily|every\s+\d+(?:\s*(?:-|to)\s*\d+)?\s*(?:hours?|hrs?|h)"
    r"|every\s+(?:morning|evening|night|day|other day|week)|q\s?\d+\s?h|bid|b\.i\.d\.|tid|t\.i\.d\.|qid|q\.i\.d\.|qds|tds"
    r"|bd|od|qd|qhs|nocte|daily|nightly|at night|at bedtime|weekly|as needed|prn|stat|every minute)\b",
    re.IGNORECASE,
)
SEVERITY_RE = re.compile(r"\b(mild|moderate|severe|anaphyla\w*|life-threatening)\b", re.IGNORECASE)
REACTION_RE = re.compile(
    r"\((?P<paren>[^)]{2,60})\)|\b(?:reaction|reacts?|causing|caused|causes|with|presenting as|manifest(?:ing|ed)? as)"
    r"\s*:?\s+(?P<word>[a-z][a-z \-]{1,58}?)(?=[.,;]|\s+for\b|\s+in\b|$)",
    re.IGNORECASE,
)
REACTION_WORDS = re.compile(
    r"\b(anaphylaxis|hives|urticaria|rash|angioedema|swelling|wheez\w*|bronchospasm|itching|pruritus|nausea|vomiting|"
    r"diarrh\w*|stevens-johnson syndrome|sjs|cough|dizziness)\b",
    re.IGNORECASE,
)
ALLERGEN_AFTER_RE = re.compile(
    r"\b(?:allerg(?:y|ic|ies)\s+to|intoleran(?:ce|t)\s+to|reaction\s+to)\s+(?P<name>[a-z][a-z0-9\-/ ]{1,58}?)"
    r"(?=[.,;(]|\s+(?:for|in|with|causing|that|which|reaction)\b|$)",
    re.IGNORECASE,
)
ALLERGEN_BEFORE_RE = re.compile(r"\b(?P<name>[a-z][a-z0-9\-]{1,40})\s+allerg(?:y|ies)\b", re.IGNORECASE)
_NOT_ALLERGENS = frozenset({"an", "a", "the", "new", "her", "his", "drug", "known", "severe", "mild", "moderate",
                           "document", "record", "add", "log", "enter", "save", "note"})
NOTE_TYPE_RE = re.compile(
    r"\b(progress|consult(?:ation)?|procedure|discharge|admission|soap|nursing|follow-up|h&p|operative)\s+note\b",
    re.IGNORECASE,
)
TOPIC_RE = re.compile(
    r"\b(?:studies|study|papers?|articles?|research|evidence|literature|pubmed|reviews?|trials?|meta-analys[ie]s)\s+"
    r"(?:on|about|for|regarding|of|in|into|comparing|supporting)\s+(?P<topic>.+?)\s*[?.!]*$",
    re.IGNORECASE,
)
STATUS_RE = re.compile(r"\b(recruiting|not yet recruiting|active|completed|terminated)\b", re.IGNORECASE)
_ARTICLES = re.compile(r"^(the|a|an|recent|latest|new|current|ongoing)\s+", re.IGNORECASE)

#: Record concepts → query_patient_data filters.
_CONCEPTS: tuple[tuple[re.Pattern[str], dict[str, str]], ...] = (
    (re.compile(r"\b(medications?|meds|prescriptions?|drugs?)\b|\b(?:is|are)\s+(?:she|he|they)\s+(?:on|taking)\b"
                r"|\bwhat\s+(?:is|'s)\s+(?:she|he)\s+(?:on|taking)\b", re.I), {"resource_type": "MedicationRequest"}),
    (re.compile(r"\ballerg\w*", re.I), {"resource_type": "AllergyIntolerance"}),
    (re.compile(r"\b(conditions?|diagnos[ie]s|problems?)\b", re.I), {"resource_type": "Condition"}),
    (re.compile(r"\b(immuni[sz]ations?|vaccines?|vaccinations?)\b", re.I), {"resource_type": "Immunization"}),
    (re.compile(r"\b(procedures?|surgery|surgeries)\b", re.I), {"resource_type": "Procedure"}),
    (re.compile(r"\bnotes?\b", re.I), {"resource_type": "DocumentReference"}),
    (re.compile(r"\b(vitals?|vital signs)\b", re.I), {"resource_type": "Observation", "category": "vital-signs"}),
    (re.compile(r"\b(labs?|lab results?)\b", re.I), {"resource_type": "Observation", "category": "laboratory"}),
)
_LAB_NAME_RE = re.compile(
    r"\b(kidney function|renal function|liver function(?: tests?)?|lfts?|creatinine|egfr|potassium|sodium|glucose|"
    r"hba1c|a1c|hemoglobin|haemoglobin|cholesterol|lipids?|ldl|hdl|blood pressure|bp|heart rate|pulse|weight|bmi|"
    r"temperature|temp|inr|tsh|thyroid function|platelets?|white cell count|wbc|troponin|bnp|crp|ferritin|urine pcr|"
    r"upcr|protein[/: -]creatinine(?: ratio)?|oxygen saturation|sats|spo2|electrolytes|u&e|blood count|fbc|cbc)\b",
    re.IGNORECASE,
)
#: What a record search is named when the clinician abbreviates it (the names results carry, or a concept the
#: record tool expands: "liver function" finds ALT, AST and bilirubin).
_LAB_NAMES = {
    "lft": "liver function", "lfts": "liver function", "liver function test": "liver function",
    "liver function tests": "liver function", "temp": "temperature", "bp": "blood pressure", "pulse": "heart rate",
    "urine pcr": "protein/creatinine", "upcr": "protein/creatinine", "sats": "oxygen saturation",
    "spo2": "oxygen saturation", "u&e": "electrolytes", "fbc": "blood count", "cbc": "blood count",
    "lipid": "lipids", "thyroid function": "thyroid",
}


_CLAUSE_RE = re.compile(r"[,;]|\band then\b|\bthen\b")


def drugs_near(query: str, keywords: tuple[str, ...], drugs: list[str]) -> list[str]:
    """The drugs named in the clause of ``query`` that holds one of ``keywords`` ("check metformin safety" in a
    message that also names lisinopril elsewhere); all of them when no clause does."""
    for clause in _CLAUSE_RE.split(query):
        if any(re.search(rf"\b{re.escape(k)}\b", clause, re.IGNORECASE) for k in keywords):
            near = [d for d in DrugDictionary.find(clause) if d in drugs]
            if near:
                return near
    return drugs


def one_drug(request: Request, *, near: tuple[str, ...] = ()) -> dict[str, Any]:
    """``drug_name``: the one drug named (in the clause holding ``near``'s words when several are)."""
    drugs = request.entities["drug_mentions"]
    if len(drugs) > 1:
        drugs = drugs_near(request.query, near, drugs)
    return {"drug_name": drugs[0]} if len(drugs) == 1 else {}


def drug_list(request: Request, *, near: tuple[str, ...] = ()) -> dict[str, Any]:
    """``drug_names``: two to four drugs (those in the clause holding ``near``'s words when more are named)."""
    drugs = list(request.entities["drug_mentions"])
    if len(drugs) > 2:
        found = drugs_near(request.query, near, drugs)
        drugs = found if len(found) >= 2 else drugs
    if len(drugs) == 1:  # "the warfarin-aspirin interaction": a joined pair names two drugs
        drugs = combination_parts(drugs[0])
    return {"drug_names": drugs[:4]} if len(drugs) >= 2 else {}


def topic(request: Request) -> dict[str, Any]:
    """``query``: the topic after "studies on …", "evidence for …"."""
    found = TOPIC_RE.search(request.query)
    text = _ARTICLES.sub("", found.group("topic")).strip() if found else ""
    return {"query": text[:110]} if len(text) >= 3 else {}


def trial_condition(request: Request) -> dict[str, Any]:
    """``condition`` (the topic) and a recruitment ``status`` when the message names one."""
    found = TOPIC_RE.search(request.query)
    out: dict[str, Any] = {}
    if found:
        condition = _ARTICLES.sub("", found.group("topic")).strip()
        if 2 <= len(condition) <= 80:
            out["condition"] = condition
    status = STATUS_RE.search(request.query)
    if status:
        out["status"] = status.group(1).lower()
    return out


def patient_name(request: Request) -> dict[str, Any]:
    """``name``: the one patient name the message gives."""
    names = request.entities["patient_names"]
    return {"name": names[0]} if len(names) == 1 else {}


def patient_only(request: Request) -> dict[str, Any]:
    """``patient_id``: the id the message names, else the active patient's."""
    pid = request.patient_id
    return {"patient_id": pid} if pid else {}


def record_query(request: Request) -> dict[str, Any]:
    """The patient, and a lab name or the record section the question is about."""
    query = request.query
    out = patient_only(request)
    lab = _LAB_NAME_RE.search(query)
    if lab:
        name = lab.group(1).lower()
        out["name"] = _LAB_NAMES.get(name, "protein/creatinine" if name.startswith("protein") else name)
        return out
    for pattern, filters in _CONCEPTS:
        if pattern.search(query):
            out.update(filters)
            break
    if out.get("resource_type") in ("MedicationRequest", "Condition") and re.search(r"\b(active|current)\b", query, re.I):
        out["status"] = "active"
    return out


#: A record item's id in brackets after the words naming it: "the aspirin (751be8bb-…)", "condition (cond-123)".
_ITEM_ID_RE = re.compile(r"\b(?P<words>[\w\- ]{2,60}?)\s*\(\s*(?P<id>[A-Za-z0-9][A-Za-z0-9.\-]{2,63})\s*\)")
_ITEM_TYPES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(conditions?|diagnos[ie]s|problems?)\b", re.I), "Condition"),
    (re.compile(r"\b(encounters?|visits?|admissions?)\b", re.I), "Encounter"),
    (re.compile(r"\b(observations?|results?|labs?|vitals?)\b", re.I), "Observation"),
    (re.compile(r"\b(notes?|documents?)\b", re.I), "DocumentReference"),
    (re.compile(r"\b(medications?|meds|prescriptions?|orders?)\b", re.I), "MedicationRequest"),
)


def connection_item(request: Request) -> dict[str, Any]:
    """The patient, and the record item to explore when the message gives its id in brackets after its name
    ("what was the aspirin (751be8bb-…) prescribed for?" → that MedicationRequest). An id given that way
    names the item, not a patient: the patient is then the active one."""
    found = _ITEM_ID_RE.search(request.query)
    if not found:
        return patient_only(request)
    item = found.group("id")
    others = [i for i in request.entities["patient_ids"] if i.lower() != item.lower()]
    patient = others[0] if len(others) == 1 else request.active_patient_id if not others else None
    out: dict[str, Any] = {"patient_id": patient} if patient else {}
    words = found.group("words")
    kind = next((t for pattern, t in _ITEM_TYPES if pattern.search(words)), None)
    if kind is None and DrugDictionary.find(words):
        kind = "MedicationRequest"
    if kind:
        out.update(fhir_id=item, resource_type=kind)
    return out


def timeline(request: Request) -> dict[str, Any]:
    """The patient, and ``include_notes`` when notes are asked for."""
    out = patient_only(request)
    if re.search(r"\bnotes?\b", request.query, re.IGNORECASE):
        out["include_notes"] = True
    return out


def prescription(request: Request) -> dict[str, Any]:
    """The patient, the one drug named, its dose, frequency and route ("not specified" when not stated)."""
    query = request.query
    out = patient_only(request)
    drugs = request.entities["drug_mentions"]
    if len(drugs) == 1:
        out["medication_name"] = drugs[0]
    dose = DOSE_RE.search(query)
    frequency = FREQUENCY_RE.search(query)
    route = route_words(query)  # the card's dosage parser reads the same route vocabulary
    out["dosage"] = re.sub(r"(\d)\s*([a-zµ])", r"\1 \2", dose.group(1)) if dose else NOT_SPECIFIED
    out["frequency"] = frequency.group(1) if frequency else NOT_SPECIFIED
    if route:
        out["notes"] = f"route: {route.lower()}"
    return out


def allergy(request: Request) -> dict[str, Any]:
    """The patient, the substance ("allergy to X", "X allergy", else the one drug named), reaction, severity."""
    query = request.query
    out = patient_only(request)
    for pattern in (ALLERGEN_AFTER_RE, ALLERGEN_BEFORE_RE):  # "allergy to X" is the clearer phrasing
        found = pattern.search(query)
        if found and found.group("name").strip().lower() not in _NOT_ALLERGENS:
            out["substance"] = found.group("name").strip()
            break
    if "substance" not in out:
        drugs = request.entities["drug_mentions"]
        if len(drugs) == 1:
            out["substance"] = drugs[0]
    reaction = REACTION_RE.search(query)
    words = REACTION_WORDS.search(query)
    if reaction and (reaction.group("paren") or reaction.group("word")):
        out["reaction"] = (reaction.group("paren") or reaction.group("word")).strip()[:60]
    elif words:
        out["reaction"] = words.group(1).lower()
    elif "substance" in out:
        out["reaction"] = NOT_SPECIFIED  # shown on the card for the clinician to fill, never invented
    severity = SEVERITY_RE.search(query)
    if severity:
        word = severity.group(1).lower()
        out["severity"] = "severe" if word.startswith(("anaphyla", "life")) else word
    return out


def note(request: Request) -> dict[str, Any]:
    """The patient, the note type (progress unless named) and the text after a colon."""
    query = request.query
    out = patient_only(request)
    kind = NOTE_TYPE_RE.search(query)
    out["note_type"] = kind.group(1).lower() if kind else "progress"
    if ":" in query:
        text = query.split(":", 1)[1].strip()
        if len(text) >= 3:
            out["note_text"] = text[:600]
    return out


def image_query(request: Request) -> dict[str, Any]:
    """``query``: the message itself (what to look for in the image)."""
    return {"query": request.query[:110]} if len(request.query) >= 2 else {}
