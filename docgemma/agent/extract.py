"""Deterministic argument extraction for TOOL_SELECT stage 2: what the message states plainly (drug names,
patient ids, dose and frequency, a note after a colon) is filled by code; the model is asked only for the
required fields still missing.

Every value here stands in the clinician's own words or in the deterministic entities. A write's dose or
frequency that the message does not state is left "not specified" rather than asked of the model: the
approval card shows it, so nothing invented reaches the record.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from docgemma.agent.patterns import TASK_PATTERNS
from docgemma.agent.state import AgentState
from docgemma.clinical.dosing import route_words
from docgemma.clinical.entities import DrugDictionary, combination_parts

NOT_SPECIFIED = "not specified"

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
    (re.compile(r"\b(medications?|meds|prescriptions?|drugs?)\b", re.I), {"resource_type": "MedicationRequest"}),
    (re.compile(r"\ballerg\w*", re.I), {"resource_type": "AllergyIntolerance"}),
    (re.compile(r"\b(conditions?|diagnos[ie]s|problems?)\b", re.I), {"resource_type": "Condition"}),
    (re.compile(r"\b(immuni[sz]ations?|vaccines?|vaccinations?)\b", re.I), {"resource_type": "Immunization"}),
    (re.compile(r"\b(procedures?|surgery|surgeries)\b", re.I), {"resource_type": "Procedure"}),
    (re.compile(r"\bnotes?\b", re.I), {"resource_type": "DocumentReference"}),
    (re.compile(r"\b(vitals?|vital signs)\b", re.I), {"resource_type": "Observation", "category": "vital-signs"}),
    (re.compile(r"\b(labs?|lab results?)\b", re.I), {"resource_type": "Observation", "category": "laboratory"}),
)
_LAB_NAME_RE = re.compile(
    r"\b(kidney function|renal function|liver function|creatinine|egfr|potassium|sodium|glucose|hba1c|a1c|hemoglobin|"
    r"haemoglobin|cholesterol|ldl|hdl|blood pressure|heart rate|weight|bmi|temperature|inr|tsh|platelets?|"
    r"white cell count|wbc|troponin|bnp)\b",
    re.IGNORECASE,
)


def _patient_id(state: AgentState) -> str | None:
    ids = state["extracted_entities"]["patient_ids"]
    if len(ids) == 1:
        return ids[0]
    active = state.get("active_patient")
    return active["id"] if active and not ids else None


_CLAUSE_RE = re.compile(r"[,;]|\band then\b|\bthen\b")


def _drugs_near(query: str, pattern: str, drugs: list[str]) -> list[str]:
    """The drugs named in the clause of ``query`` that holds ``pattern``'s keywords ("check metformin
    safety" in a message that also names lisinopril elsewhere); all of them when no clause does."""
    keywords = next(p.keywords for p in TASK_PATTERNS if p.name == pattern)
    for clause in _CLAUSE_RE.split(query):
        if any(re.search(rf"\b{re.escape(k)}\b", clause, re.IGNORECASE) for k in keywords):
            near = [d for d in DrugDictionary.find(clause) if d in drugs]
            if near:
                return near
    return drugs


def _drug_safety(state: AgentState, query: str) -> dict[str, Any]:
    drugs = state["extracted_entities"]["drug_mentions"]
    if len(drugs) > 1:
        drugs = _drugs_near(query, "drug_safety", drugs)
    return {"drug_name": drugs[0]} if len(drugs) == 1 else {}


def _interactions(state: AgentState, query: str) -> dict[str, Any]:
    drugs = list(state["extracted_entities"]["drug_mentions"])
    if len(drugs) > 2:
        near = _drugs_near(query, "drug_interaction", drugs)
        drugs = near if len(near) >= 2 else drugs
    if len(drugs) == 1:  # "the warfarin-aspirin interaction": a joined pair names two drugs
        drugs = combination_parts(drugs[0])
    return {"drug_names": drugs[:4]} if len(drugs) >= 2 else {}


def _literature(state: AgentState, query: str) -> dict[str, Any]:
    found = TOPIC_RE.search(query)
    topic = _ARTICLES.sub("", found.group("topic")).strip() if found else ""
    return {"query": topic[:110]} if len(topic) >= 3 else {}


def _trials(state: AgentState, query: str) -> dict[str, Any]:
    found = TOPIC_RE.search(query)
    out: dict[str, Any] = {}
    if found:
        condition = _ARTICLES.sub("", found.group("topic")).strip()
        if 2 <= len(condition) <= 80:
            out["condition"] = condition
    status = STATUS_RE.search(query)
    if status:
        out["status"] = status.group(1).lower()
    return out


def _search_patient(state: AgentState, query: str) -> dict[str, Any]:
    names = state["extracted_entities"]["patient_names"]
    return {"name": names[0]} if len(names) == 1 else {}


def _patient_only(state: AgentState, query: str) -> dict[str, Any]:
    pid = _patient_id(state)
    return {"patient_id": pid} if pid else {}


def _query_patient_data(state: AgentState, query: str) -> dict[str, Any]:
    out = _patient_only(state, query)
    lab = _LAB_NAME_RE.search(query)
    if lab:
        out["name"] = lab.group(1).lower()
        return out
    for pattern, filters in _CONCEPTS:
        if pattern.search(query):
            out.update(filters)
            break
    if out.get("resource_type") in ("MedicationRequest", "Condition") and re.search(r"\b(active|current)\b", query, re.I):
        out["status"] = "active"
    return out


def _timeline(state: AgentState, query: str) -> dict[str, Any]:
    out = _patient_only(state, query)
    if re.search(r"\bnotes?\b", query, re.IGNORECASE):
        out["include_notes"] = True
    return out


def _prescribe(state: AgentState, query: str) -> dict[str, Any]:
    out = _patient_only(state, query)
    drugs = state["extracted_entities"]["drug_mentions"]
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


def _allergy(state: AgentState, query: str) -> dict[str, Any]:
    out = _patient_only(state, query)
    for pattern in (ALLERGEN_AFTER_RE, ALLERGEN_BEFORE_RE):  # "allergy to X" is the clearer phrasing
        found = pattern.search(query)
        if found and found.group("name").strip().lower() not in _NOT_ALLERGENS:
            out["substance"] = found.group("name").strip()
            break
    if "substance" not in out:
        drugs = state["extracted_entities"]["drug_mentions"]
        if len(drugs) == 1:
            out["substance"] = drugs[0]
    reaction = REACTION_RE.search(query)
    words = REACTION_WORDS.search(query)
    if reaction and (reaction.group("paren") or reaction.group("word")):
        out["reaction"] = (reaction.group("paren") or reaction.group("word")).strip()[:60]
    elif words:
        out["reaction"] = words.group(1).lower()
    severity = SEVERITY_RE.search(query)
    if severity:
        word = severity.group(1).lower()
        out["severity"] = "severe" if word.startswith(("anaphyla", "life")) else word
    return out


def _note(state: AgentState, query: str) -> dict[str, Any]:
    out = _patient_only(state, query)
    kind = NOTE_TYPE_RE.search(query)
    out["note_type"] = kind.group(1).lower() if kind else "progress"
    if ":" in query:
        text = query.split(":", 1)[1].strip()
        if len(text) >= 3:
            out["note_text"] = text[:600]
    return out


def _image(state: AgentState, query: str) -> dict[str, Any]:
    return {"query": query[:110]} if len(query) >= 2 else {}


EXTRACTORS: dict[str, Callable[[AgentState, str], dict[str, Any]]] = {
    "check_drug_safety": _drug_safety,
    "check_drug_interactions": _interactions,
    "search_medical_literature": _literature,
    "find_clinical_trials": _trials,
    "search_patient": _search_patient,
    "get_patient_chart": _patient_only,
    "query_patient_data": _query_patient_data,
    "get_patient_timeline": _timeline,
    "explore_connections": _patient_only,
    "prescribe_medication": _prescribe,
    "add_allergy": _allergy,
    "save_clinical_note": _note,
    "analyze_medical_image": _image,
}


def prefill(tool: str, state: AgentState) -> dict[str, Any]:
    """The arguments of ``tool`` that code can read off the message (possibly none)."""
    extractor = EXTRACTORS.get(tool)
    return extractor(state, state.get("user_query", "")) if extractor else {}
