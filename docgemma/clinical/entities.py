"""Deterministic entity pre-extraction (hints that make stage 2 find names and drugs): patient IDs by
regex, drug names from a real drug dictionary (brand names resolved to generics), action verbs by keyword.
No model involved."""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any, NotRequired, TypedDict

from docgemma.clinical.drug_shortenings import shortening
from docgemma.clinical.function_words import FUNCTION_WORDS


class ExtractedEntities(TypedDict):
    """Deterministic pre-extraction: what the message states, found without the model."""

    patient_ids: list[str]
    patient_names: list[str]
    drug_mentions: list[str]
    action_verbs: list[str]
    has_image: bool
    #: An identifier as the message wrote it (lower case; an MRN, a ``Patient/<id>`` reference) → the record id it
    #: stands for, when the record's roster resolved it (``clinical/roster.with_known_patients``).
    patient_aliases: NotRequired[dict[str, str]]


UUID_RE = re.compile(r"\b[a-f0-9]{8}(?:-[a-f0-9]{4}){3}-[a-f0-9]{12}\b", re.IGNORECASE)
#: Clinic identifiers: a short letter prefix, a hyphen and at least three digits ("abc-123", "pat-44201",
#: "mrn-0012345"). The seed's ``[a-z]{3}-\d{3}`` is the floor, not the whole set. Lab and coding words
#: ("ICD-10", "COVID-19", "IL-6") have fewer digits and never match.
SHORT_ID_RE = re.compile(r"\b[a-z]{2,5}-\d{3,10}\b", re.IGNORECASE)
#: "patient 402", "patient ID 555", "MRN 12345", "MRN: A1234567": an identifier introduced as one.
NUMBERED_ID_RE = re.compile(r"\b(?:patient(?:\s+id)?|mrn|id)\s*(?:number|no\.?)?\s*[:#]?\s*([A-Z]?\d{3,10})\b", re.IGNORECASE)
#: One capitalised name word: "Grace", "O'Brien", "Al-Rashidi", "McDonald", "Jean-Luc".
_NAME_WORD = r"[A-Z][a-z]*(?:[A-Z][a-z]+)?(?:['\-][A-Z]?[a-z]+)*"
_FULL_NAME = rf"{_NAME_WORD}(?:\s+{_NAME_WORD}){{1,3}}"
NAME_RE = re.compile(rf"\b(?i:patient|pt\.?|mr\.?|mrs\.?|ms\.?|miss)\s+(?i:named\s+|called\s+)?({_FULL_NAME})")
#: "Grace Mensah's chart".
POSSESSIVE_NAME_RE = re.compile(rf"\b({_FULL_NAME})'s\b")
#: "... for Grace Mensah": a name after "for"/"to"/"on", trusted only in a patient-record request (see
#: :func:`extract_patient_names`), since "trials for Heart Failure" puts a capitalised disease there.
FOR_NAME_RE = re.compile(rf"\b(?:for|to|on|of)\s+({_FULL_NAME})")
_RECORD_REQUEST_RE = re.compile(
    r"\b(presc\w*|order|start|record|document|note|allerg\w*|chart|record|meds|medications?|labs?|results?|"
    r"visits?|history|timeline|summary|admit|discharge)\b", re.IGNORECASE,
)
#: Words that begin a sentence or name a thing, never a person's first name.
_NOT_A_NAME = frozenset({
    "Find", "Search", "Check", "Show", "Pull", "Look", "Open", "Review", "Prescribe", "Record", "Document", "Add",
    "Save", "Write", "Start", "Order", "Get", "Give", "What", "When", "Which", "Who", "How", "Is", "Are", "Does",
    "Do", "Can", "Could", "Please", "The", "This", "That", "Her", "His", "Their", "Patient", "Dr", "Doctor", "Nurse",
    "FDA", "Today", "Tomorrow", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    "What's", "Whats", "Who's", "Where's", "How's", "Put", "Note", "Progress", "Rx", "Hi", "Hello", "Hey", "Good",
    "Morning", "Afternoon", "Evening", "Thanks", "Thank", "Any", "Anyone", "Latest", "Last", "New", "Recent",
    "Mr", "Mrs", "Ms", "Miss", "Mr.", "Mrs.", "Ms.", "St", "St.", "Saint", "Switch", "Commence",
    "And", "But", "Also", "So", "Now", "Then", "Or", "Next", "Ok", "Okay", "Yes", "No",
})
#: Capitalised words of clinical topics, never part of a person's name: a message that is only a capitalised
#: pair ("Heart Failure", "Sickle Cell") names a topic, not a patient.
_CLINICAL_WORDS = frozenset({
    "heart", "failure", "cancer", "disease", "syndrome", "acute", "chronic", "type", "kidney", "renal", "liver",
    "lung", "breast", "blood", "pressure", "cell", "sickle", "atrial", "fibrillation", "infection", "fever", "pain",
    "attack", "stroke", "asthma", "diabetes", "malaria", "tuberculosis", "pneumonia", "hypertension", "sepsis",
    "injury", "fracture", "deficiency", "disorder", "insufficiency", "arrest", "shock", "test", "trial", "trials",
    "study", "studies", "report", "guidelines", "guideline", "score", "covid", "hiv", "aids", "hepatitis", "anaemia",
    "anemia", "multiple", "sclerosis", "cystic", "fibrosis", "coronary", "artery", "myocardial", "infarction",
    "pulmonary", "embolism", "deep", "vein", "thrombosis", "urinary", "tract", "skin", "bone", "brain", "spinal",
    "mental", "health", "clinical", "medical", "emergency", "intensive", "care", "unit", "ward", "clinic", "hospital",
    "drug", "drugs", "safety", "warning", "warnings", "interaction", "interactions", "evidence", "research",
    # Named tools of practice ("wells criteria", "sepsis bundle"), looked up as lower-case searches.
    "criteria", "rule", "rules", "scale", "bundle", "protocol", "pathway", "classification", "staging", "dose",
    "dosing", "regimen", "algorithm", "calculator", "formula", "sign", "signs", "symptoms", "management",
    "treatment", "therapy", "vaccine", "vaccination", "schedule", "chart", "results", "labs", "notes",
    # What a patient is, before the word for one ("the Diabetic patient in bed 4")
    "diabetic", "cardiac", "septic", "elderly", "frail", "surgical", "paediatric", "pediatric", "psychiatric",
    "obstetric", "asthmatic", "epileptic", "hypertensive", "dialysis", "trauma", "oncology",
})
_CLINICAL_SUFFIX_RE = re.compile(r"(itis|osis|emia|aemia|oma|pathy|algia|ectomy|plasty|scopy|gram|ology|iasis|plegia)$",
                                 re.IGNORECASE)
#: Where a capitalised full name can only be a person the clinician is looking for: a search verb with nothing
#: after the name; "anyone named …" (any case); "is … registered / in the system"; "put … on <drug>"; "when was …
#: last seen"; a name alone, with "please", or before " - " / ":" / "," at the start of a message; "<type> note,
#: … :". Each is a whole-message or tightly bounded form, so a capitalised disease in a sentence is not taken.
_NAME_CONTEXT_RES = (
    re.compile(rf"^\s*(?i:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?i:find|look\s+up|look\s+for|pull\s+up|search\s+for|"
               rf"search|open|bring\s+up)\s+"
               rf"({_FULL_NAME})(?:\s*(?i:for\s+me)?\s*(?i:please|pls)?\s*[?.!]*\s*$|\s*,\s|\s+(?i:and|then)\s)"),
    # "do we have a Maria Garcia in the system?", "what meds is Margaret Oduya on?"
    re.compile(rf"^\s*(?i:do\s+we\s+have|have\s+we\s+got|is\s+there)\s+(?i:an?\s+)?({_FULL_NAME})\b"),
    re.compile(rf"\b(?i:is|was)\s+({_FULL_NAME})\s+(?i:on|taking)\b"),
    # "Joseph Mwangi gets a rash with …", "Grace Mensah has …": a name as the subject that opens the message.
    re.compile(rf"^\s*({_FULL_NAME})\s+(?i:gets|got|has|had|is|was|developed|reports|reported|complains|"
               rf"complained|reacted|came\s+in|presented|presents)\b"),
    re.compile(rf"^\s*(?i:is|are)\s+({_FULL_NAME})\s+(?i:registered|in\s+the\s+system|on\s+the\s+system|"
               rf"a\s+patient|on\s+file|known\s+here|here)\b"),
    re.compile(rf"\b(?i:put|start|commence|switch)\s+({_FULL_NAME})\s+(?i:on)\b"),
    re.compile(rf"\b(?i:when\s+(?:was|did))\s+({_FULL_NAME})\s+(?i:last)\b"),
    # "does Grace Mensah have any allergies?", "has Joseph Mwangi had his bloods?".
    re.compile(rf"^\s*(?i:does|did|has|is)\s+({_FULL_NAME})\s+(?i:have|had|got|take|taking|been|on)\b"),
    # "switch to Amina Okafor.", "move on to Joseph Mwangi - …", "ok now Samuel Kariuki, …", "next patient Kofi
    # Asante": a change of patient, as clinicians say it on a round.
    re.compile(rf"(?:^|[.,;:!?]\s*)(?i:ok(?:ay)?,?\s+|right,?\s+|and\s+)?(?i:switch(?:ing)?\s+(?:over\s+)?to|"
               rf"mov(?:e|ing)\s+(?:on\s+)?to|over\s+to|now|next\s+(?:up|patient)(?:\s+is)?:?)\s+(?i:patient\s+)?"
               rf"({_FULL_NAME})\s*(?:[-–—.,:;!?]|$|\s+(?i:please|now|then)\b)"),
    # "Next patient is Grace Mensah", "patient: Grace Mensah".
    re.compile(rf"\b(?i:patient)\s*(?:(?i:is)\s+|:\s*)({_FULL_NAME})\b"),
    re.compile(rf"^\s*({_FULL_NAME})\s*(?:\s[-–—]\s|:\s|,\s|\s+(?i:please|pls)\s*(?:[?.!]*\s*$|\s[-–—,]\s?)|[?.!]*\s*$)"),
    re.compile(rf"\b(?i:note)\s*[,\-–]\s*({_FULL_NAME})\s*:"),
    # "Grace Mensah allergies?", "Check Grace Mensah labs": a name right before a part of the record.
    re.compile(rf"\b({_FULL_NAME})\s+(?i:allerg\w*|meds|medications?|labs?|lab\s+results|results|chart|record|vitals|"
               rf"history|visits|notes|problems|conditions|diagnoses|summary|timeline|inr|egfr|creatinine|potassium|"
               rf"kidney\s+function|renal\s+function|blood\s+pressure|hba1c|a1c)\b"),
    # "What allergies does Grace Mensah have?", "Is Joseph Mwangi on warfarin?", "what meds is Amina Okafor taking".
    re.compile(rf"\b(?i:does|did|is|was|has|had)\s+({_FULL_NAME})\s+(?i:have|has|had|take|takes|taking|on|got|been|"
               rf"need|needs|allergic|due|seen)\b"),
)
#: A name of one word or more where only a person can be meant: "anyone named Ahmed?" (any case), "who is
#: Kariuki?", "Mrs Oduya".
_SURNAME_CONTEXT_RES = (
    # "look for maria garcia": a search verb and two lower-case words, the whole message. Names in lower case are
    # taken only here, where the message is nothing but the search, and never when a word is clinical.
    re.compile(r"^\s*(?:please\s+|pls\s+)?(?:find|look\s+up|look\s+for|search\s+for|pull\s+up)\s+(?:patient\s+)?"
               r"(?!(?:an?|the|my|our|his|her|their|some|any|new|recent|latest|more|other|all|this|that|mrs?|ms|miss|"
               r"dr|mr)\.?\s)"
               r"([a-z][a-z'\-]+\s+[a-z][a-z'\-]+)\s*[?.!]*\s*$"),
    re.compile(r"\b(?:anyone|anybody|someone|somebody|any\s+patients?|a\s+patient)\s+(?:named|called)\s+"
               r"([a-z][\w'\-]*(?:\s+[a-z][\w'\-]*){0,3}?)\s*(?:[?.!,]|$)", re.IGNORECASE),
    re.compile(rf"^\s*(?i:who\s+is)\s+({_NAME_WORD}(?:\s+{_NAME_WORD}){{0,2}})\s*\?"),
    # "have we got anyone under the name reyes?", "find all patients with surname Wilson": a family name, asked for.
    re.compile(r"\b(?:under\s+the\s+(?:sur|family\s+|last\s+)?name|(?:sur|family\s+|last\s+)name)\s+([a-z][a-z'\-]+)"
               r"(?=\s*(?:[?.!,]|$))", re.IGNORECASE),
    # "Find patient Reyes": the product's own search button for a family name alone.
    re.compile(rf"^\s*(?i:find|look\s+up|search\s+for)\s+(?i:patient)\s+({_NAME_WORD})\s*[?.!]*\s*$"),
    # "check if daniel reyes exists in the system"
    re.compile(r"\bif\s+(?!(?:the|this|that|these|her|his|their|its|a|an|my|our|your|any|some|she|he|they|it|we|you)\b)"
               r"([a-z][a-z'\-]+\s+[a-z][a-z'\-]+)\s+(?:exists|is\s+(?:on|in)\s+the\s+system|is\s+registered)\b",
               re.IGNORECASE),
    # "mrs" in any case is only ever a title; "Mr", "Ms" and "Miss" only capitalised ("MR" is modified release or
    # mitral regurgitation, "miss" a verb), before a capitalised surname.
    re.compile(r"\b(?i:mrs)\.?\s+([A-Za-z][a-z\-]*(?:'(?!s\b)[A-Za-z][a-z]+)?)\b(?!\s+[A-Z])"),
    re.compile(r"\b(?:Mr|Ms|Miss)\.?\s+([A-Z][a-z\-]*(?:'(?!s\b)[A-Z]?[a-z]+)?)\b(?!\s+[A-Z])"),
    # One capitalised name where only a patient can stand (with another patient active, each of these was answered
    # from the active patient's record): "the chart of patient Sofia", "latest labs for pt Martins", "open the chart
    # for Duarte", "is Delgado allergic to anything", "what meds is Nwosu on", "what's Banda taking". Not an
    # eponym ("meds for Parkinson's", "history of Crohn disease"): no possessive, no clinical word after it.
    re.compile(rf"\b(?i:patient|pt)\.?\s+([A-Z][a-z\-]+(?:'(?!s\b)[A-Z]?[a-z]+)?)\b(?!\s+{_NAME_WORD})"),
    re.compile(rf"(?:\b(?i:chart|record|notes|file|meds|medications|drugs|allergies|labs|results|bloods|obs|vitals|"
               rf"history|timeline|summary)\s+(?i:of|for)\s+"
               rf"|\b(?i:is|was)\s+(?=[A-Z][a-z'\-]+\s+(?i:allergic|on|taking|still\s+on)\b)"
               rf"|\b(?i:what|which)\s+(?i:meds?|medications?|drugs|tablets|pills|medicines)\s+(?i:is|was|has)\s+"
               rf"|\b(?i:what['’]?s|what\s+is)\s+(?=[A-Z][a-z'\-]+\s+(?i:on|taking)\b))"
               rf"([A-Z][a-z\-]+(?:'(?!s\b)[A-Z]?[a-z]+)?)\b(?!['’]s\b|\s+{_NAME_WORD}|\s+(?i:disease|syndrome))"),
    # "find me the Okafor patient, around 35": a family name before the word for a patient.
    re.compile(r"\b(?i:the)\s+([A-Z][a-z\-]+(?:'(?!s\b)[A-Z]?[a-z]+)?)\s+(?i:patient|lady|gentleman|gent|man|woman|boy|girl)\b"),
    # "for Asante - is there a link between the insulin and his troponin": a name as the heading of a question about
    # him or her.
    re.compile(r"^\s*(?i:for|re:?|regarding)\s+([A-Z][a-z\-]+)\s*[-–:,]\s+(?=.*\b(?i:his|her|their|he|she|they|him)\b)"),
)
TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9\-/]*")

#: Combination brands and common abbreviations the dictionary does not resolve (or resolves to one part).
#: Values are the generic names as pharmacists write them.
DRUG_ALIASES: dict[str, str] = {
    "augmentin": "amoxicillin-clavulanate", "amox-clav": "amoxicillin-clavulanate",
    "co-amoxiclav": "amoxicillin-clavulanate", "zosyn": "piperacillin-tazobactam",
    "tazocin": "piperacillin-tazobactam", "pip-tazo": "piperacillin-tazobactam",
    "unasyn": "ampicillin-sulbactam", "bactrim": "trimethoprim-sulfamethoxazole",
    "septra": "trimethoprim-sulfamethoxazole", "tmp-smx": "trimethoprim-sulfamethoxazole",
    "co-trimoxazole": "trimethoprim-sulfamethoxazole", "cotrimoxazole": "trimethoprim-sulfamethoxazole",
    "biktarvy": "bictegravir/emtricitabine/tenofovir alafenamide", "truvada": "emtricitabine/tenofovir disoproxil",
    "paxlovid": "nirmatrelvir/ritonavir", "entresto": "sacubitril/valsartan", "janumet": "sitagliptin/metformin",
    "sinemet": "carbidopa/levodopa", "percocet": "oxycodone/acetaminophen", "norco": "hydrocodone/acetaminophen",
    "vicodin": "hydrocodone/acetaminophen", "advair": "fluticasone/salmeterol", "symbicort": "budesonide/formoterol",
    # British and ward names the dictionary does not resolve ("ferrous" is how the ward says ferrous sulfate).
    "ferrous": "ferrous sulfate", "adrenaline": "epinephrine",
    "asa": "aspirin", "apap": "acetaminophen", "hctz": "hydrochlorothiazide", "ntg": "nitroglycerin",
    # Drugs of the dose table the dictionary does not hold: read by their own names ("is senna ok if eGFR is 40?"
    # was a question about no drug; tests/unit/test_entities_dose_table.py checks every name of the table).
    "senna": "senna", "thiamine": "thiamine", "oxytocin": "oxytocin",
    # The first-line malaria combination by the brand most clinicians in malaria-endemic settings write.
    "coartem": "artemether-lumefantrine", "riamet": "artemether-lumefantrine",
}



def alias(token: str) -> str | None:
    """The drug name a combination brand, an abbreviation or a ward shortening stands for ("co-amox",
    "vanc"), or None."""
    return DRUG_ALIASES.get(token.lower()) or shortening(token)


#: Words the dictionary knows as a substance that, in a clinician's message, are a dose form: "500mg caps" (CAPS is a
#: laboratory buffer).
NOT_DRUGS = frozenset({"caps", "tabs",
                       # A result the record holds, not a drug asked about ("ferritin from this morning?").
                       "ferritin"})

ACTION_VERBS: dict[str, str] = {
    "prescribe": "prescribe", "prescribed": "prescribe", "order": "order", "ordered": "order",
    "start": "start", "document": "document", "record": "record", "note": "note", "write": "write",
    "save": "save", "check": "check", "search": "search", "find": "find", "look": "look up",
    "verify": "verify", "review": "review", "pull": "pull", "analyze": "analyze", "analyse": "analyze",
    "add": "add", "compare": "compare", "show": "show",
}
_VERB_RE = re.compile(r"\b(" + "|".join(sorted(ACTION_VERBS, key=len, reverse=True)) + r")\b", re.IGNORECASE)


class DrugDictionary:
    """The ``drug-named-entity-recognition`` dictionary (MeSH/DrugBank/NHS names, brands included),
    loaded once on first use (about 3 s) and shared by all sessions (it is read-only)."""

    _lock = threading.Lock()
    _find: Any = None

    @classmethod
    def warm(cls) -> None:
        """Load the dictionary now (e.g. at start-up) rather than on the first message."""
        with cls._lock:
            if cls._find is None:
                try:
                    from drug_named_entity_recognition import find_drugs
                except ImportError as exc:
                    raise ImportError(
                        "drug name extraction needs the drug dictionary: pip install drug-named-entity-recognition"
                    ) from exc
                cls._find = find_drugs

    @classmethod
    @lru_cache(maxsize=4096)
    def _single(cls, token: str) -> bool:
        """True when the dictionary knows ``token`` on its own (e.g. "co-amoxiclav" as one word)."""
        return bool(cls._find([token], is_ignore_case=True))

    @classmethod
    def _tokens(cls, text: str) -> list[tuple[str, int, int]]:
        """(token, start, end) in ``text``. A hyphen/slash compound stays whole when the dictionary or the
        alias table knows it; otherwise it is split, so its parts can be found (and joined again)."""
        out: list[tuple[str, int, int]] = []
        for match in TOKEN_RE.finditer(text):
            word = match.group(0).rstrip("-/")
            if not re.search(r"[-/]", word) or alias(word) or cls._single(word):
                out.append((word, match.start(), match.start() + len(word)))
                continue
            for part in re.finditer(r"[A-Za-z0-9]+", word):
                out.append((part.group(0), match.start() + part.start(), match.start() + part.end()))
        return out

    @classmethod
    def find(cls, text: str) -> list[str]:
        """Drug names in ``text``, in order of appearance, lower case.

        Single drugs are given by their generic name (brands resolved). A combination product keeps the
        user's own spelling ("amoxicillin-clavulanate", "bictegravir/emtricitabine/tenofovir alafenamide"):
        parts joined by '-' or '/' with no space are one mention, never one of its parts or its class.
        """
        return list(dict.fromkeys(name for _written, name in cls.mentions(text)))

    @classmethod
    def mentions(cls, text: str) -> list[tuple[str, str]]:
        """(the words as written, the name :meth:`find` gives) for each drug mention of ``text``, in order:
        ("co-amoxiclav", "amoxicillin-clavulanate"), so an answer can name a drug the way the clinician did."""
        cls.warm()
        tokens = cls._tokens(text)
        spans: list[tuple[int, int, str]] = []  # (start char, end char, name)
        words = [tok for tok, _s, _e in tokens]
        found = cls._find(words, is_ignore_case=True)
        # A name of several words the dictionary knows is read whole: "ferrous fumarate" is not "ferrous" (the ward's
        # word for ferrous sulfate) and a salt.
        whole = {i for _data, first, last in found if last - first > 1 for i in range(first, last)}
        aliased = {i: name for i, (tok, _s, _e) in enumerate(tokens) if i not in whole and (name := alias(tok))}
        for i, name in aliased.items():
            spans.append((tokens[i][1], tokens[i][2], name))
        for data, first, last in found:
            if any(i in aliased for i in range(first, last)):
                continue
            generic = str(data.get("name", "")).strip().lower()
            written = text[tokens[first][1]:tokens[last - 1][2]].lower()
            if written in NOT_DRUGS:
                continue
            if generic in (f"{written}s", f"{written}es"):  # "penicillin" is the drug; "penicillins" is its class
                generic = written
            if generic:
                spans.append((tokens[first][1], tokens[last - 1][2], generic))
        spans.sort()
        merged: list[tuple[int, int, str]] = []
        for start, end, name in spans:
            if merged and re.fullmatch(r"\s*[-/]\s*", text[merged[-1][1]:start]) and not text[merged[-1][1]:start].isspace():
                # Parts of one combination product: keep the span as the user wrote it.
                prev_start = merged[-1][0]
                merged[-1] = (prev_start, end, text[prev_start:end].lower())
            else:
                merged.append((start, end, name))
        return [(text[start:end], name) for start, end, name in merged]

    @classmethod
    @lru_cache(maxsize=8192)
    def exact(cls, phrase: str) -> str | None:
        """The generic name when the dictionary knows the whole ``phrase`` as one drug (every word of it, not a
        drug somewhere inside it: "amoxicillin xyzzol" is None), lower case."""
        cls.warm()
        words = phrase.split()
        if not words:
            return None
        hits = cls._find(words, is_ignore_case=True)
        whole = [data for data, first, last in hits if first == 0 and last == len(words)]
        name = str(whole[0].get("name", "")).strip().lower() if len(whole) == 1 else ""
        return name or None

    @classmethod
    def canonical(cls, name: str) -> str | None:
        """The generic name for a drug name (``"Coumadin"`` → ``"warfarin"``), or None if unknown."""
        found = cls.find(name)
        return found[0] if len(found) == 1 else None


def combination_parts(name: str) -> list[str]:
    """The parts of a combination product ("amoxicillin-clavulanate" → both), or ``[name]``."""
    parts = [p.strip() for p in re.split(r"\s*[-/]\s*", name) if p.strip()]
    return parts if len(parts) >= 2 and all(len(p) > 2 for p in parts) else [name]


def claimed_patient_ids(text: str) -> list[str]:
    """Well-formed identifiers the message introduces as a patient's that the patterns above do not know (a
    truncated UUID, a UUID with letters after it, a site's own id): after "id" or "MRN" any identifier with a
    digit; after a bare "patient" one that mixes letters with at least four digits ("patient 45" is an age,
    "patient T2DM" a condition). Looked
    up like any id, so that an id on no record is answered as such, never with the active patient's record."""
    found: list[str] = []
    for match in _CLAIMED_ID_RE.finditer(text):
        token = match["token"].lstrip("([{").rstrip(".,;:!?)]}")
        if not _FHIR_ID_RE.match(token) or not re.search(r"\d", token) or len(token) < 4:
            continue
        if match["key"].lower() == "patient" and (not re.search(r"[A-Za-z]", token)
                                                   or len(re.findall(r"\d", token)) < 4):
            continue  # "patient 45", "patient T2DM", "patient covid-19": an age or a condition, not an id
        found.append(token)
    return found


def extract_patient_ids(text: str) -> list[str]:
    """UUIDs, short ids (``abc-123``), numbers introduced as patient ids and other identifiers a message
    introduces as one (:func:`claimed_patient_ids`), without duplicates."""
    found: list[str] = []
    for match in [*UUID_RE.findall(text), *SHORT_ID_RE.findall(text), *NUMBERED_ID_RE.findall(text),
                  *claimed_patient_ids(text)]:
        ident = match.lower() if UUID_RE.fullmatch(match) else match
        if any(ident in other for other in found):  # "mrn-0012345" and its digits
            continue
        if ident not in found:
            found.append(ident)
    return found


#: Whatever follows "patient id", "id", "MRN" or "patient" as one token: what the message offers as an identifier.
_CLAIMED_ID_RE = re.compile(r"\b(?P<key>patient\s+id|patient|mrn|id)(?:\s+(?:number|no\.?))?(?:\s+|\s*[:#=]\s*)"
                            r"(?P<token>\S+)", re.IGNORECASE)
#: Characters no record identifier has: a path, a query, markup or injection text.
_NOT_ID_CHARS_RE = re.compile(r"[/\\<>%$;=`|{}*\[\]()'\"&?!,+@]|\.\.")
#: A path, markup or percent-encoding: never in a name, never in an identifier ("patient 88%" is a saturation).
_PATH_CHARS_RE = re.compile(r"[/\\<>]|%[0-9A-Fa-f]{2}|\.\.")
#: A search wildcard: "patient *" asks for anyone, and no record identifier holds one ("%" alone: "patient 88%" is
#: a saturation).
_WILDCARD_RE = re.compile(r"\*|^%+$")
#: A well-formed identifier (FHIR id: letters, digits, '-', '.'; at most 64).
_FHIR_ID_RE = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")
#: A word, not an identifier ("who", "O'Brien", "Al-Rashidi").
_WORD_RE = re.compile(r"[A-Za-z]+(?:['\u2019\-][A-Za-z]+)*")


def malformed_patient_ids(text: str) -> list[str]:
    """Tokens the message offers as a patient's identifier that no record identifier can be ("patient
    ../../etc/passwd", "id 1;DROP", "MRN <script>"): an answer says no such patient, instead of quietly reading
    the active patient's record. After a bare "patient" only a path, markup or a number run into injection text
    counts ("patient 45 years old" gives an age, "patient who" a word, "patient Robert');" a name to search);
    after "id" or "MRN" anything that is not an identifier; after any of them a wildcard ("patient *")."""
    found: list[str] = []
    for match in _CLAIMED_ID_RE.finditer(text):
        token = match["token"].lstrip("([{").rstrip(".,;:!?)]}")
        if _WILDCARD_RE.search(token):
            # "patient *", "id %": a wildcard names nobody; never the active patient in its place.
            found += [] if token in found else [token]
            continue
        if not re.search(r"[A-Za-z0-9]", token) or _WORD_RE.fullmatch(token) or re.fullmatch(r"\d+(?:\.\d+)?%", token):
            continue  # an ellipsis, a word or a percentage ("patient 88% on room air")
        if match["key"].lower() == "patient":
            # "patient Robert'); DROP…" or "patient Okafor&_count=…" is a name to search (and find nobody); a path,
            # markup, or a number run into injection text is an identifier that cannot be one.
            bad = bool(_PATH_CHARS_RE.search(token)) or (token[0].isdigit() and bool(_NOT_ID_CHARS_RE.search(token)))
        else:
            bad = not _FHIR_ID_RE.match(token)
        if bad and token not in found:
            found.append(token)
    return found


_LOWER_WORD = r"[a-z][a-z'\-]+"
#: Where a clinician asks whether a patient is on the system, or asks to find one, writing the name in any case
#: ("do we have a daniel reyes on the system?", "does mei chen exist in the records", "search patients: delgado,
#: rosa", "need to locate a pt - haddad, sofia", "a man called wilson", "how many wilsons have we got, search").
#: Each word is checked: no function, request, clinical or drug word is a name (:func:`_asked_name`).
_ASKED_NAME_RES = (
    re.compile(rf"\b(?:do\s+we\s+have|have\s+we\s+got)\s+(?:an?\s+|any(?:one|body)?\s+)?"
               rf"(?:(?:patient|pt)\s+)?(?:(?:called|named)\s+)?({_LOWER_WORD},?\s+{_LOWER_WORD})\s+(?:(?:on|in)\s+"
               r"(?:the\s+|our\s+)?(?:system|records?|database|books|register|computer|ehr|emr)|registered|here)\b",
               re.IGNORECASE),
    re.compile(rf"\b(?:does|is)\s+({_LOWER_WORD},?\s+{_LOWER_WORD})\s+(?:exist|registered|(?:on|in)\s+(?:the|our)\s+"
               r"(?:system|records?|database))\b", re.IGNORECASE),
    re.compile(rf"\b(?:search\s+(?:for\s+)?(?:patients?|pts?)\s*(?:for\s+|:\s*|[-–]\s*)"
               rf"|locate\s+(?:a\s+|the\s+)?(?:pt|patient)\s*(?:[-–:,]\s*|(?:called|named)\s+)|"
               rf"name\s+(?:something\s+|sth\s+)?like\s+)({_LOWER_WORD},?\s+{_LOWER_WORD}|(?-i:[A-Z])[a-z'\-]+)"
               r"(?=\s*(?:[?.!,;]|$|\s[-–]|\s+(?:dob|born|please|pls|maybe)\b))", re.IGNORECASE),
    # "looking for a man called wilson", "find the lady, mensah" (never "a rash as a child, settled": only after a
    # word that looks for someone)
    re.compile(rf"\b(?:find|search|look|locat|seek|track|trac|who|know)\w*\b[^.?!]*?"
               rf"\b(?:a|the)\s+(?:man|woman|lady|gentleman|gent|boy|girl|child|chap|guy)\s*(?:,\s*|\s+(?:called|named)\s+)"
               rf"({_LOWER_WORD})(?=\s*(?:[?.!,;]|$))", re.IGNORECASE),
    # "patient search: tunde bello"
    re.compile(rf"\b(?:patient|pt)\s+search\s*[:\-–]\s*({_LOWER_WORD}(?:,?\s+{_LOWER_WORD})?)(?=\s*(?:[?.!,;]|$))",
               re.IGNORECASE),
    # "have we got anyone by the name of amara nwosu", "find everyone called mwangi", "searching for a mr asante",
    # "is delgado in the database at all?"
    re.compile(rf"\b(?:by|under)\s+the\s+name\s+(?:of\s+)?({_LOWER_WORD}(?:,?\s+(?!(?:on|in|registered)\b){_LOWER_WORD})?)"
               r"(?=\s*(?:[?.!,;]|$|\s+(?:(?:on|in)\s+(?:the|our)\s+(?:system|records?|database)|registered)\b))",
               re.IGNORECASE),
    re.compile(rf"\b(?:every(?:one|body)|all\s+(?:the\s+)?patients?|patients?|any(?:one|body))\s+(?:called|named)\s+"
               rf"({_LOWER_WORD}(?:\s+(?!(?:please|pls)\b){_LOWER_WORD})?)(?=\s*(?:[?.!,;]|$|\s+(?:please|pls)\b))",
               re.IGNORECASE),
    re.compile(rf"\b(?:search\w*|look\w*|find\w*|locat\w*)\s+(?:for\s+)?(?:a\s+|the\s+)?(?:mr|mrs|ms|miss)\.?\s+"
               rf"({_LOWER_WORD})\b", re.IGNORECASE),
    re.compile(rf"^\W*(?:\w+\W+){{0,6}}?(?:is|are)\s+({_LOWER_WORD}(?:\s+{_LOWER_WORD})?)\s+(?:registered(?!\s+with)|"
               r"(?:in|on)\s+(?:the|our)\s+"
               r"(?:system|database|records?|books))\b", re.IGNORECASE),
    re.compile(rf"\bhow\s+many\s+({_LOWER_WORD}?)e?s\s+(?:have\s+we\s+got|do\s+we\s+have|are\s+there|(?:are\s+)?on\s+the)"
               r"\b(?=.*\b(?:search\w*|look|find|system|records?|registered)\b)", re.IGNORECASE),
)


#: Words of the request itself that the forms above may catch where a name was expected.
_NOT_ASKED = frozenset({"patient", "patients", "pt", "pts", "system", "record", "records", "chart", "file", "notes",
                        "someone", "somebody", "anyone", "anybody", "one", "similar", "that", "name", "named", "called",
                        # what else a record or a ward holds ("a home visit in the records", "a social worker on the
                        # system", "everyone called back", "how many admissions have we got on the system")
                        "home", "visit", "form", "letter", "referral", "result", "report", "plan", "bed", "room",
                        "social", "worker", "gp", "doctor", "nurse", "physio", "scan", "appointment", "admission",
                        "falls", "smoking", "smoker", "diabetic", "back", "yesterday", "today", "tomorrow", "earlier",
                        "again", "number", "ward", "unit", "respect", "consent", "dnacpr", "test", "drug", "list",
                        "alcohol", "twelve", "eleven", "ten", "bay", "side", "new", "old", "same",
                        # "do we have a second opinion registered", "an interpreter booked"
                        "second", "opinion", "interpreter", "translator", "pharmacist", "dietitian", "chaplain",
                        "porter", "space", "slot", "booking"})


def _asked_name(written: str) -> str | None:
    """``written`` ("daniel reyes", "delgado, rosa") as the name to search, given then family; None when a word is
    a function, request, clinical or drug word ("do we have a bed on the ward")."""
    words = [w.strip(",") for w in written.split()]
    if any(w.lower() in FUNCTION_WORDS or w.lower() in _NOT_ASKED or w.lower() in _CLINICAL_WORDS
           or _CLINICAL_SUFFIX_RE.search(w) or DrugDictionary.find(w) for w in words):
        return None
    return " ".join(reversed(words) if "," in written else words)

#: Words a single name's place may hold that are no one's name.
NOT_SINGLE_NAMES = frozenset({
    "mum", "mom", "mother", "dad", "father", "wife", "husband", "partner", "son", "daughter", "baby", "child", "brother",
    "sister", "everyone", "everybody", "anyone", "anybody", "someone", "somebody", "nobody", "other", "same", "young",
    "old", "new", "next", "last", "first", "second", "third", "previous", "gout", "bariatric", "consent", "education",
    "reported", "safety", "information", "info", "outcome", "outcomes", "care", "transport", "feedback", "experience",
    "satisfaction", "leaflet", "group", "list", "record", "notes", "she", "he", "it", "they", "we", "you", "i"})
#: Titles of a colleague, never of the patient: a name after one is a doctor's or a nurse's.
COLLEAGUE_TITLES = frozenset({"dr", "doctor", "prof", "professor", "sister", "nurse", "consultant", "matron"})


def _clean_name(candidate: str, *, words_needed: int = 2) -> str | None:
    words = candidate.split()
    while words and words[-1] in _NOT_A_NAME:
        words.pop()
    while words and words[0] in _NOT_A_NAME:  # "What's Joseph Mwangi's INR": the name is what follows
        words.pop(0)
    if words and words[0].rstrip(".").lower() in COLLEAGUE_TITLES:  # "Sister Bello's handover": a colleague
        return None
    if len(words) < words_needed or DrugDictionary.find(" ".join(words)):
        return None
    # One word alone is a name only when it is no word of the sentence ("is Mum allergic", "the Other patient",
    # "patient Consent", "is She on warfarin" were searched for as patients).
    if len(words) == 1 and (words[0].lower() in FUNCTION_WORDS or words[0].lower() in NOT_SINGLE_NAMES):
        return None
    if any(w.lower() in _CLINICAL_WORDS or _CLINICAL_SUFFIX_RE.search(w) for w in words):
        return None
    return " ".join(words)


def extract_patient_names(text: str) -> list[str]:
    """Capitalised full names introduced as a patient ("Find patient John Smith", "Mrs Ama Owusu",
    "anyone named Maria Garcia?", "Is Fatima Bello registered here?", "Put Amina Okafor on …", a name alone),
    in a possessive ("Grace Mensah's chart"), after "for" in a record request ("Prescribe amoxicillin 500 mg
    for Grace Mensah"), or a surname where only a person can be meant ("who is Kariuki?", "mrs oduya").
    Hyphens and apostrophes stay part of a name."""
    candidates = [*NAME_RE.findall(text), *POSSESSIVE_NAME_RE.findall(text)]
    if _RECORD_REQUEST_RE.search(text):
        candidates += FOR_NAME_RE.findall(text)
    candidates += [found for pattern in _NAME_CONTEXT_RES for found in pattern.findall(text)]
    names: list[str] = []
    for candidate, needed in [*((c, 2) for c in candidates),
                              *((c, 1) for pattern in _SURNAME_CONTEXT_RES for c in pattern.findall(text)),
                              *((a, 1) for pattern in _ASKED_NAME_RES for c in pattern.findall(text)
                                if (a := _asked_name(c)))]:
        name = _clean_name(candidate, words_needed=needed)
        if name and not any(name.lower() in other.lower() or other.lower() in name.lower() for other in names):
            names.append(name)
    return names


def extract_action_verbs(text: str) -> list[str]:
    """Normalised action keywords, in order of appearance."""
    verbs: list[str] = []
    for word in _VERB_RE.findall(text):
        verb = ACTION_VERBS[word.lower()]
        if verb not in verbs:
            verbs.append(verb)
    return verbs


def extract_entities(text: str, has_image: bool = False) -> ExtractedEntities:
    """All deterministic entities of one message."""
    return ExtractedEntities(
        patient_ids=extract_patient_ids(text),
        patient_names=extract_patient_names(text),
        drug_mentions=DrugDictionary.find(text),
        action_verbs=extract_action_verbs(text),
        has_image=has_image,
    )
