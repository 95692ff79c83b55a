"""The words for what a patient's record holds, in one place: the agent's rules read them to tell a question
about the record from a general one, the record query's extractor to choose its filters, the record query to
widen a concept to the names results carry, and both to read a record item named by its id.

The alternations shared by several patterns are spelled once below and composed into each.
"""

from __future__ import annotations

import re

from docgemma.clinical.entities import DrugDictionary

# ── shared alternations ───────────────────────────────────────────────────────────────────────────────
#: ... and a condition asked after as the record has it: "is Fatima Bello documented as having gout" ("listed as an
#: allergy" is not one).
CONDITION_WORDS = r"conditions?|diagnos[ie]s|problems?|(?:documented|recorded|coded|listed)\s+as\s+h[a-z]{4,7}\b"
IMMUNIZATION_WORDS = r"immuni[sz]ations?|vaccines?|vaccinations?|(?:flu|covid|booster|tetanus|pneumo\w*)\s+jabs?|jabs"
PROCEDURE_WORDS = r"procedures?|surgery|surgeries"
MEDICATION_WORDS = r"medications?|meds|prescriptions?|drug\s+chart|med(?:ication)?\s+chart|kardex"
#: "Is she on …?", "what is he taking?": a question about her medications.
ON_MEDICATION = r"(?:is|are)\s+(?:she|he|they)\s+(?:on|taking)"
#: "remind me what she's on at home": the same question, the words the other way round (not "what he's taking for X").
#: "what's she on at the moment" ("what's" written as one word was read as no record question: a set written apart).
TAKING = (r"(?:what(?:\s+(?:is|are)|\s*['’]s|s)\s+(?:she|he|they)\s+(?:on|taking)\b(?!\s+(?:for|about)\b)"
          r"|what\s+(?:she|he|they)(?:['’]s|['’]re|\s+is|\s+are)\s+(?:on|taking)\b(?!\s+(?:for|about)\b)"
          # "what's DG-1002 on": a patient given by a hospital number or a reference
          r"|what(?:\s+is|\s*['’]s|s)\s+(?:[a-z]{2,5}-\d{3,10}|patient/[\w\-]+)['’]?\s+(?:on|taking)\b(?!\s+(?:for|about)\b))")

#: Results the record holds, by the names clinicians use (abbreviations included).
RESULT_WORDS = (
    r"labs?|lab results?|results?|creatinine|egfr|kidneys?|renal|potassium|sodium|glucose|hba1c|a1c|hemoglobin|"
    r"haemoglobin|cholesterol|lipids?|ldl|hdl|blood pressure|bp|vitals?|vital signs|weight|bmi|heart rate|pulse|"
    r"temperature|temp|inr|tsh|thyroid|lfts?|liver function|platelets?|wbc|crp|ferritin|troponin|bnp|urine pcr|upcr|"
    r"sats|spo2|electrolytes|fbc|blood count|"
    # The ward's abbreviations: urea and electrolytes, observations.
    r"u\s?&\s?es?|u\s?and\s?es?|obs|observations|"
    # "her K+?": potassium by its symbol (the word boundary after it is the "k", the "+" follows)
    r"k(?=\+)|na(?=\+)"
)
#: A result the record holds, named in the message.
RESULT_CONCEPT_RE = re.compile(rf"\b(?:{RESULT_WORDS})\b", re.IGNORECASE)
#: What a patient's record holds: a question about one of these for the active patient reads the record.
RECORD_CONCEPT_RE = re.compile(
    # "NKDA?", "NKA or not": the ward's "no known (drug) allergies" asks about the allergies on record.
    rf"\b({RESULT_WORDS}|allerg\w*|nkd?a|nkfa|{CONDITION_WORDS}|problem list|{IMMUNIZATION_WORDS}|"
    rf"{PROCEDURE_WORDS}|{MEDICATION_WORDS}|drugs?|notes?|visits?|encounters?|appointments?|follow-?ups?|"
    r"admissions?|history|timeline|trend|last seen|seen last|last time|"
    # The history abbreviations clinicians type: past medical/surgical history, drug, social and family history.
    r"PMH|PMHx|PSH|PSHx|DHx|SHx|FHx|Hx|"
    # "Is she on any blood thinners?", "what is he taking?": her medications.
    rf"{ON_MEDICATION}|{TAKING})\b",
    re.IGNORECASE,
)

#: Record sections → the record query's filters (the first that the question names).
SECTIONS: tuple[tuple[re.Pattern[str], dict[str, str]], ...] = (
    (re.compile(rf"\b({MEDICATION_WORDS}|drugs?)\b|\b{ON_MEDICATION}\b|\b{TAKING}\b", re.I),
     {"resource_type": "MedicationRequest"}),
    (re.compile(r"\ballerg\w*|\bnkd?a\b|\bnkfa\b", re.I), {"resource_type": "AllergyIntolerance"}),
    (re.compile(rf"\b({CONDITION_WORDS})\b", re.I), {"resource_type": "Condition"}),
    (re.compile(rf"\b({IMMUNIZATION_WORDS})\b", re.I), {"resource_type": "Immunization"}),
    (re.compile(rf"\b({PROCEDURE_WORDS})\b", re.I), {"resource_type": "Procedure"}),
    (re.compile(r"\bnotes?\b", re.I), {"resource_type": "DocumentReference"}),
    (re.compile(r"\b(vitals?|vital signs|obs)\b", re.I), {"resource_type": "Observation", "category": "vital-signs"}),
    (re.compile(r"\b(labs?|lab results?)\b", re.I), {"resource_type": "Observation", "category": "laboratory"}),
)
#: A named result or result group the record query searches for by name.
LAB_NAME_RE = re.compile(
    r"\b(kidney function|kidneys|renal function|liver function(?: tests?)?|lfts?|creatinine|egfr|potassium|sodium|glucose|"
    r"hba1c|a1c|hemoglobin|haemoglobin|cholesterol|lipids?|ldl|hdl|blood pressure|bp|heart rate|pulse|weight|bmi|"
    r"temperature|temp|inr|tsh|thyroid function|platelets?|white cell count|wbc|troponin|bnp|crp|ferritin|urine pcr|"
    r"upcr|protein[/: -]creatinine(?: ratio)?|oxygen saturation|sats|spo2|electrolytes|u&es?|blood count|fbc|cbc|"
    r"k(?=\+)|na(?=\+))\b",
    re.IGNORECASE,
)
#: What a record search is named when the clinician abbreviates it (the names results carry, or a concept the
#: record tool expands: "liver function" finds ALT, AST and bilirubin).
LAB_NAMES = {
    "kidneys": "kidney function", "lft": "liver function", "lfts": "liver function", "liver function test": "liver function",
    "liver function tests": "liver function", "temp": "temperature", "bp": "blood pressure", "pulse": "heart rate",
    "urine pcr": "protein/creatinine", "upcr": "protein/creatinine", "sats": "oxygen saturation",
    "spo2": "oxygen saturation", "u&e": "electrolytes", "u&es": "electrolytes",
    "k": "potassium", "na": "sodium", "fbc": "blood count", "cbc": "blood count",
    "lipid": "lipids", "thyroid function": "thyroid",
}

#: Concept → the words its results are named with (a "kidney function" search must find creatinine and eGFR).
RESULT_TERMS: dict[str, tuple[str, ...]] = {
    "kidney": ("creatinine", "glomerular", "egfr", "urea", "albumin", "kidney", "renal"),
    "renal": ("creatinine", "glomerular", "egfr", "urea", "albumin", "kidney", "renal"),
    "liver": ("alanine aminotransferase", "aspartate", "bilirubin", "alkaline phosphatase", "albumin", "liver", "hepat"),
    "thyroid": ("thyrotropin", "thyroxine", "thyroid"),
    "diabetes": ("a1c", "glucose", "diabetes"),
    "sugar": ("a1c", "glucose"),
    "blood pressure": ("blood pressure", "systolic", "diastolic"),
    "anticoagulation": ("inr", "prothrombin", "warfarin", "apixaban"),
    "clotting": ("inr", "prothrombin", "platelets"),
    "cholesterol": ("cholesterol", "triglyceride", "lipoprotein"),
    "lipids": ("cholesterol", "triglyceride", "lipoprotein"),
    "blood count": ("hemoglobin", "hematocrit", "platelets", "leukocytes", "erythrocytes"),
    "anemia": ("hemoglobin", "hematocrit", "ferritin"),
    "anaemia": ("hemoglobin", "hematocrit", "ferritin"),
    "electrolytes": ("sodium", "potassium", "chloride", "bicarbonate"),
    "weight": ("body weight", "body mass index"),
    "pregnancy": ("pregnan", "preeclampsia", "pre-eclampsia", "protein/creatinine"),
    # Abbreviations clinicians type, and the names LOINC gives those results.
    "tsh": ("thyrotropin", "tsh"),
    "hba1c": ("a1c", "glycated"),
    "egfr": ("glomerular", "egfr"),
    "oxygen saturation": ("oxygen saturation", "spo2"),
}


def search_terms(name: str) -> list[str]:
    """The words to match for a name: the name itself plus the concept's expansions."""
    lowered = name.lower().strip()
    terms = [lowered]
    for concept, words in RESULT_TERMS.items():
        if concept in lowered:
            terms += list(words)
    return terms


#: A record item's id after the words naming it: in brackets ("the aspirin (751be8bb-…)", "condition (cond-123)"),
#: or a UUID right after them ("the falls assessment visit c19cf5d7-…", "the AF dx 749be1e9-…").
#: An id in brackets has a digit: "(wheeze)" after a drug is a reaction, not a record item's id.
_MEDS = r"(?:meds?|medications?|medicines?|drugs?|tablets|prescriptions|pills|scripts|rx)"
_CONDITIONS = r"(?:conditions?|diagnos[ie]s|dx|problems?|problem\s+list|comorbidities|co-morbidities|indications?|pmh)"
#: The record's conditions as a whole, not one of them: "her problems", "the diagnoses on record", "which condition",
#: "each diagnosis" ("her kidney problems", "her problems with dizziness" name one).
_ALL_CONDITIONS = (rf"(?:(?:her|his|their|the|[\w\-]+['’]s|all\s+(?:of\s+)?(?:her|his|their|the)|each|every|which)\s+"
                   rf"(?:active\s+|current\s+|listed\s+|recorded\s+|other\s+|various\s+)?{_CONDITIONS}\b(?!\s+with\b)"
                   rf"|\b{_CONDITIONS}\s+on\s+(?:the\s+)?record)")
_LINK = r"(?:map|match|link|pair|tie|line\s+up|connect|relate|go(?:es)?\s+with)\w*"
#: A question about how the whole record's medications and conditions go together, no one item named: "which of her
#: drugs are for which problem", "map his meds to his diagnoses", "match each med to the condition it's treating",
#: "link DG-1010's medications to the diagnoses on record", "what are her meds for?". The connections tool answers it
#: from every active order (:func:`asks_medication_map` also requires the record and no other question).
MEDICATION_MAP_RE = re.compile(
    rf"\bwhich\s+(?:of\s+(?:\S+\s+){{1,3}}?)?{_MEDS}\b[^.?!]*\b{_ALL_CONDITIONS}"
    rf"|\b{_LINK}\b[^.?!]*\b{_MEDS}\b[^.?!]*\b(?:to|with|against|and|onto)\b[^.?!]*{_ALL_CONDITIONS}"
    rf"|\b{_LINK}\b[^.?!]*{_ALL_CONDITIONS}[^.?!]*\b(?:to|with|against|and|onto)\b[^.?!]*\b{_MEDS}\b"
    rf"|\b{_MEDS}\b[^.?!]*\b{_LINK}\b[^.?!]*{_ALL_CONDITIONS}"
    rf"|{_ALL_CONDITIONS}[^.?!]*(?:\band|&|,)\s+(?:\w+\s+){{0,2}}{_MEDS}\b[^.?!]*\b(?:{_LINK}|fit\s+together|go\s+together)\b"
    rf"|\bwhat\s+(?:is|are)\s+(?:each\s+of\s+|all\s+(?:of\s+)?)?(?:her|his|their|the\s+patient['’]s|[\w\-]+['’]s)\s+{_MEDS}"
    rf"\s+for(?=\s*(?:[?.!]|$))"
    rf"|\bindications?\s+for\s+(?:each\s+of\s+|all\s+(?:of\s+)?)?(?:her|his|their|the\s+patient['’]s|[\w\-]+['’]s)\s+"
    rf"{_MEDS}\b",
    re.IGNORECASE)
#: What makes a message about her medicines and conditions another question than the map: whether a drug causes,
#: harms or interacts, doses, allergies, changes to orders, a write, the literature, or how it is done in general.
_NOT_MAP_RE = re.compile(
    r"\b(?:caus\w*|explain\w*|due\s+to|because|responsible|side[\s-]+effects?|adverse|contraindicat\w*|unsafe|safe\w*|"
    r"interact\w*|worsen\w*|harm\w*|risk\w*|doses?|dosing|dosage|adjust\w*|allerg\w*|intoleran\w*|stopp?ed|stop|held|"
    r"hold|withheld|changed|discontinu\w*|switch\w*|check|prescribe|start|commence|order|add|document|save|"
    r"record(?=\s+(?:a|an|that|this|the\s+following)\b)|"
    r"trials?|studies|papers|literature|evidence|guidelines?|codes?|coding|fhir|snomed|icd|in\s+general|generally|"
    r"best|should|recommended|first.line|choice|preferred)\b"
    r"|\b(?:could|might|would|can)\b(?!\s+(?:you|u|we|i)\b)",
    re.IGNORECASE)
#: Whose record: a pronoun, the patient, a possessive name or a record number.
_RECORD_OWNER_RE = re.compile(r"(?i:\b(?:her|his|their|him|them|she|he|they|patient|pt)\b|[\w\-]+['’]s\b|\bDG-\d+|"
                              r"\bPatient/)|\b[A-Z][a-z'\-]+,?\s+[A-Z][a-z'\-]+\b")


def asks_medication_map(query: str, owner_read: bool = False) -> bool:
    """True when ``query`` asks which of a patient's medications is for which condition, across the record, and
    nothing else (a question whether one causes or harms a condition is not the map: the map holds only the reasons
    the record gives). ``owner_read``: whose record it is was read elsewhere (a lower-case name a button names)."""
    return bool(MEDICATION_MAP_RE.search(query) and (owner_read or _RECORD_OWNER_RE.search(query))
                and not _NOT_MAP_RE.search(query))


ITEM_ID_RE = re.compile(r"\b(?P<words>[\w\- ]{2,60}?)\s*(?:\(\s*"
                        r"(?P<id>(?=[A-Za-z0-9.\-]*\d)[A-Za-z0-9][A-Za-z0-9.\-]{2,63})\s*\)|"
                        r"(?P<uuid>[a-f0-9]{8}(?:-[a-f0-9]{4}){3}-[a-f0-9]{12})\b)", re.IGNORECASE)
#: The words that say what kind of record item an id names → its FHIR resource type.
ITEM_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"\b({CONDITION_WORDS}|dx)\b", re.I), "Condition"),
    (re.compile(r"\b(encounters?|visits?|admissions?)\b", re.I), "Encounter"),
    (re.compile(r"\b(observations?|results?|labs?|vitals?)\b", re.I), "Observation"),
    (re.compile(r"\b(notes?|documents?)\b", re.I), "DocumentReference"),
    (re.compile(rf"\b({MEDICATION_WORDS}|orders?)\b", re.I), "MedicationRequest"),
)


def record_item(query: str) -> tuple[str, str] | None:
    """(id, FHIR resource type) of a record item the message names by its id after the words that say what it
    is ("the aspirin (751be8bb-…)", "the falls visit c19cf5d7-…"); None when there is none, or its kind is not
    said (a bare id may be a patient's)."""
    for found in ITEM_ID_RE.finditer(query):
        words = found.group("words")
        kind = next((t for pattern, t in ITEM_KINDS if pattern.search(words)), None)
        if kind is None and DrugDictionary.find(words):
            kind = "MedicationRequest"
        if kind:
            item = found.group("id") or found.group("uuid")
            return (item.lower() if found.group("uuid") else item), kind
    return None
