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

from docgemma.clinical.entities import DrugDictionary, combination_parts
from docgemma.clinical.ingredients import resolve_local
from docgemma.tools import label_query, literature_query, trial_query
from docgemma.tools.order_extract import NOT_SPECIFIED, allergy_args, prescription_args
from docgemma.tools.order_extract import REACTION_RE as REACTION_WORDS
from docgemma.tools.routing import Request

__all__ = ["NOT_SPECIFIED", "REACTION_WORDS"]
#: Words asking for a drug's label warnings, or for drugs together: the tools' task keywords, and the clause
#: whose drugs the extractor takes when a message names several.
SAFETY_WORDS = ("safety", "warning", "warnings", "boxed warning", "fda")
INTERACTION_WORDS = ("interaction", "interactions", "combining", "together with")
#: Words of a clause that asks about a drug's label (its drugs are the ones looked up).
LABEL_WORDS = (*SAFETY_WORDS, "label", "labels", "labelling", "labeling", "package insert")

NOTE_TYPE_RE = re.compile(
    r"\b(progress|consult(?:ation)?|procedure|discharge|admission|soap|nursing|follow-up|h&p|operative)\s+note\b",
    re.IGNORECASE,
)

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
    """``drug_names``: every drug named, two to six (those in the clause holding ``near``'s words when the
    message names others elsewhere)."""
    drugs = list(request.entities["drug_mentions"])
    if len(drugs) > 2:
        found = drugs_near(request.query, near, drugs)
        drugs = found if len(found) >= 2 else drugs
    if len(drugs) == 1:  # "the warfarin-aspirin interaction": a joined pair names two drugs
        drugs = combination_parts(drugs[0])
    # A listed name the dictionary does not know ("between warfarin and zyxomab") is kept as written: the tool
    # then says it could not identify it, instead of the name vanishing from the check.
    drugs += [name for name in unknown_listed(request.query) if name.lower() not in (d.lower() for d in drugs)]
    return {"drug_names": drugs[:6]} if len(drugs) >= 2 else {}


_LIST_RE = re.compile(r"\b(?:between|of|among|for|with|:)\s+(?P<items>[^?.!;]+)", re.IGNORECASE)
_LIST_SPLIT_RE = re.compile(r"\s*(?:,|\band\b|&|\+|\bplus\b)\s*", re.IGNORECASE)


def unknown_listed(query: str) -> list[str]:
    """Items of a drug list ("between A, B and C") that no resolver or dictionary identifies, as written."""
    found = _LIST_RE.search(query)
    if found is None:
        return []
    items = [re.sub(r"^(?:the|a|an)\s+", "", i.strip(), flags=re.IGNORECASE) for i in _LIST_SPLIT_RE.split(found["items"])]
    items = [i for i in items if i]
    if len(items) < 2 or any(len(i.split()) > 3 for i in items):
        return []
    return [i for i in items if re.fullmatch(r"[A-Za-z][A-Za-z0-9\-]{2,39}", i) and not resolve_local(i).identified
            and not DrugDictionary.find(i)]


def label_request(request: Request) -> dict[str, Any]:
    """``drug_name`` (and ``other_drugs``) and the ``topic`` of a label question: the drugs of the clause that
    asks about labels when a message names drugs elsewhere too; a class named with an example is the example."""
    drugs = list(request.entities["drug_mentions"])
    if len(drugs) > 1:
        drugs = drugs_near(request.query, LABEL_WORDS, drugs)
    # The topic of the clause that asks about the label; of the others only those that ask no other tool.
    clauses = [c for c in _CLAUSE_RE.split(request.query) if c.strip()]
    asking = [c for c in clauses if _says(c, LABEL_WORDS)] or clauses
    rest = [c for c in clauses if c not in asking and not _OTHER_TOOL_RE.search(c)]
    return label_query.parse(request.query, drugs, about=" ".join(asking + rest))


_OTHER_TOOL_RE = re.compile(r"\b(?:trials?|stud(?:y|ies)|literature|evidence|pubmed|interactions?|prescribe|allerg\w*|"
                            r"note|chart|record)\b", re.IGNORECASE)


def _says(text: str, keywords: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(k)}\b", text, re.IGNORECASE) for k in keywords)


def literature_search(request: Request) -> dict[str, Any]:
    """``query`` (the concepts), ``publication_types``, ``since_year`` and ``newest_first``
    (``tools/literature_query.py``)."""
    return literature_query.parse(request.query)


def trial_search(request: Request) -> dict[str, Any]:
    """``condition``, ``intervention``, ``location`` (``distance_km``), ``status``, ``phase``, ``age_group`` and
    ``other_terms`` (``tools/trial_query.py``)."""
    return trial_query.parse(request.query)


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


#: A record item's id after the words naming it: in brackets ("the aspirin (751be8bb-…)", "condition (cond-123)"),
#: or a UUID right after them ("the falls assessment visit c19cf5d7-…", "the AF dx 749be1e9-…").
_ITEM_ID_RE = re.compile(r"\b(?P<words>[\w\- ]{2,60}?)\s*(?:\(\s*(?P<id>[A-Za-z0-9][A-Za-z0-9.\-]{2,63})\s*\)|"
                         r"(?P<uuid>[a-f0-9]{8}(?:-[a-f0-9]{4}){3}-[a-f0-9]{12})\b)", re.IGNORECASE)
_ITEM_TYPES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(conditions?|diagnos[ie]s|problems?|dx)\b", re.I), "Condition"),
    (re.compile(r"\b(encounters?|visits?|admissions?)\b", re.I), "Encounter"),
    (re.compile(r"\b(observations?|results?|labs?|vitals?)\b", re.I), "Observation"),
    (re.compile(r"\b(notes?|documents?)\b", re.I), "DocumentReference"),
    (re.compile(r"\b(medications?|meds|prescriptions?|orders?)\b", re.I), "MedicationRequest"),
)


def record_item(query: str) -> tuple[str, str] | None:
    """(id, FHIR resource type) of a record item the message names by its id after the words that say what it
    is ("the aspirin (751be8bb-…)", "the falls visit c19cf5d7-…"); None when there is none, or its kind is not
    said (a bare id may be a patient's)."""
    for found in _ITEM_ID_RE.finditer(query):
        words = found.group("words")
        kind = next((t for pattern, t in _ITEM_TYPES if pattern.search(words)), None)
        if kind is None and DrugDictionary.find(words):
            kind = "MedicationRequest"
        if kind:
            item = found.group("id") or found.group("uuid")
            return (item.lower() if found.group("uuid") else item), kind
    return None


def connection_item(request: Request) -> dict[str, Any]:
    """The patient, and the record item to explore when the message names it by id (:func:`record_item`:
    "what was the aspirin (751be8bb-…) prescribed for?" → that MedicationRequest). An id given that way names
    the item, not a patient: the patient is then the active one."""
    found = record_item(request.query)
    if not found:
        return patient_only(request)
    item, kind = found
    others = [i for i in request.entities["patient_ids"] if i.lower() != item.lower()]
    patient = others[0] if len(others) == 1 else request.active_patient_id if not others else None
    out: dict[str, Any] = {"patient_id": patient} if patient else {}
    out.update(fhir_id=item, resource_type=kind)
    return out


def timeline(request: Request) -> dict[str, Any]:
    """The patient, and ``include_notes`` when notes are asked for."""
    out = patient_only(request)
    if re.search(r"\bnotes?\b", request.query, re.IGNORECASE):
        out["include_notes"] = True
    return out


def prescription(request: Request) -> dict[str, Any]:
    """The patient and the order as written: product, dose, frequency, route, duration, indication ("not
    specified" when not stated); words no field took are kept in the note and shown (``order_extract``)."""
    return prescription_args(request.query, request.entities, request.patient_id)


def allergy(request: Request) -> dict[str, Any]:
    """The patient, the substance and the reaction by meaning (``order_extract``), and a stated severity."""
    return allergy_args(request.query, request.entities, request.patient_id)


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
