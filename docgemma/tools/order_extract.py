"""Reading a medication order and an allergy report off the clinician's message without losing a word.

* A prescription: the product as the clinician wrote it ("Augmentin", "amoxicillin and clavulanate",
  "Xyzzolam" — an unknown name stays, and the write check says it could not be verified), dose, frequency
  (any "every <n> <unit>", an implausible one included), route, duration ("for 7 days", "x7d", "7/7",
  "until review"), indication ("for otitis media"). Words that none of these took are kept apart, under
  ``tools.args.UNREAD``: the card shows them as a finding and no write stores them (they once filled the
  order's note with "not understood: 'otitis media'", which Approve would have written).
* An allergy: substance and reaction by meaning, not by position — the substance is what the ingredient
  resolver identifies as a drug, class or allergen; the reaction is what the reaction vocabulary names
  ("gets angioedema with lisinopril": substance lisinopril, reaction angioedema).
"""

from __future__ import annotations

import re
from typing import Any

from docgemma.clinical.dosing import DOSE_TEXT_RE, canonical_dose, duration_match, frequency_match, route_match
from docgemma.clinical.drug_classes import CLASSES
from docgemma.clinical.entities import ExtractedEntities
from docgemma.clinical.function_words import only_function_words
from docgemma.clinical.ingredients import resolve_local
from docgemma.clinical.negation import negations, without_negations
from docgemma.tools.args import UNREAD

NOT_SPECIFIED = "not specified"

_ORDER_VERB_RE = re.compile(
    r"\b(?:please\s+)?(?:prescribe|prescription\s+(?:of|for)|order|start(?:ing)?|give|commence|begin|initiate|put|"
    r"rx|dispense|add|write(?:\s+up)?)\b",
    re.IGNORECASE,
)
#: Where the product's name ends: a number (dose), a frequency, duration or route word, or a preposition.
_PRODUCT_END_RE = re.compile(
    r"\s*(?:[,;:.!?()]|\d|\b(?:for|to|in|at|every|each|daily|once|twice|thrice|three|four|times?|bd|bid|tds|tid|qds|"
    r"qid|od|qd|prn|stat|nocte|mane|po|iv|im|sc|sq|sl|pr|orally|oral|by|until|till|x\d|then|and then|starting|from|"
    r"as|with\s+food|please|now|today|tomorrow|q\d)\b)",
    re.IGNORECASE,
)
_PRODUCT_LEAD_RE = re.compile(r"^(?:(?:a|an|the|some|new|course\s+of|a\s+course\s+of|prescription\s+for|"
                              r"script\s+for|her|him|them|patient|pt)\s+)+", re.IGNORECASE)
_PATIENT_WORDS_RE = re.compile(
    r"\b(?:for|to|on)\s+(?:the\s+|this\s+)?(?:active\s+)?(?:patient|pt|lady|gentleman|man|woman|child|boy|girl)\b|"
    r"\b(?:for|to)\s+(?:her|him|them)\b|\b(?:her|him|them)\s+on\b|\bpatient(?:\s+id)?\b|\bmrn\b|"
    r"\bthe\s+active\s+patient\b",
    re.IGNORECASE,
)
_FILLER = frozenset({
    "please", "kindly", "can", "could", "would", "you", "we", "i", "want", "like", "need", "to", "a", "an", "the", "of",
    "and", "then", "for", "on", "in", "at", "with", "new", "course", "script", "prescription", "order", "medication",
    "drug", "dose", "doses", "take", "taken", "give", "start", "prescribe", "put", "her", "him", "them", "his",
    "she", "he", "they", "patient", "pt", "thanks", "thank", "ok", "now", "today", "go", "ahead", "it", "also",
    "that", "this", "as", "is", "be", "by", "mouth", "via", "route", "id", "mrn", "let's", "lets", "tablet",
    "tablets", "tab", "tabs", "capsule", "capsules", "cap", "caps", "mg", "g", "ml", "x", "rx", "up", "write",
    "add", "commence", "begin", "initiate", "dispense", "starting", "from", "record", "chart", "ordering",
    "prescribing", "please,", "orally", "oral",
})
_INDICATION_RE = re.compile(
    r"\b(?:for|to\s+treat|treating|indication\s*:?|indicated\s+for|because\s+of|due\s+to)\s+"
    r"(?P<what>(?:(?:her|his|their|the|a|an|suspected|presumed|likely)\s+)*[a-z][a-z0-9'\- ]{1,58}?)"
    r"(?=\s*(?:[,;.!?()]|\bfor\b|\bto\b|\bx\d|\bevery\b|\bthen\b|\bstarting\b|\buntil\b|$))",
    re.IGNORECASE,
)
#: How to take it: kept in the order's note as instructions.
_INSTRUCTION_RE = re.compile(
    r"\b(?:(?:take|given?|to be taken)\s+)?(?:with|after|before)\s+(?:food|meals?|breakfast|dinner|supper|milk)\b|"
    r"\b(?:on an empty stomach|with (?:a full glass of )?water|do not crush|swallow whole|dissolved? in water)\b",
    re.IGNORECASE,
)
_POSSESSIVES_RE = re.compile(r"^(?:(?:her|his|their|the|a|an)\s+)+", re.IGNORECASE)

#: Reaction vocabulary (manifestations of drug and other allergies), longest phrases first when matched.
REACTIONS: tuple[str, ...] = (
    "anaphylactic shock", "anaphylactic reaction", "anaphylaxis", "anaphylactoid reaction", "angioedema",
    "angio-oedema", "angioneurotic oedema", "angioneurotic edema", "stevens-johnson syndrome",
    "stevens johnson syndrome", "toxic epidermal necrolysis", "dress syndrome", "sjs",
    "urticaria", "hives", "maculopapular rash", "itchy rash", "skin rash", "rash", "itching", "itch", "pruritus",
    "bronchospasm", "wheezing", "wheeze", "shortness of breath", "dyspnoea", "dyspnea", "difficulty breathing",
    "throat swelling", "swollen throat", "lip swelling", "swollen lips", "tongue swelling", "facial swelling",
    "swelling", "nausea and vomiting", "nausea", "vomiting", "diarrhoea", "diarrhea", "gi upset", "stomach upset",
    "abdominal pain", "headache", "dizziness", "dry cough", "cough", "hypotension", "syncope", "palpitations",
    "flushing", "red man syndrome", "myalgia", "tendon rupture", "tendinitis", "tendonitis", "photosensitivity",
    "blistering", "blisters", "fever", "serum sickness", "interstitial nephritis", "hepatitis", "jaundice",
    "neutropenia", "thrombocytopenia", "agranulocytosis", "confusion", "hallucinations", "seizures", "seizure",
    "qt prolongation", "arrhythmia", "lip and tongue swelling", "erythema", "eczema", "dermatitis",
    "contact dermatitis", "sneezing", "rhinitis", "watery eyes", "conjunctivitis", "hemolysis", "haemolysis",
)
REACTION_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, REACTIONS), key=len, reverse=True)) + r")\b",
                          re.IGNORECASE)
SEVERITY_RE = re.compile(r"\b(mild|moderate|severe|anaphyla\w*|life-threatening|angio-?o?edema|"
                         r"stevens[- ]johnson|toxic epidermal)\b", re.IGNORECASE)
_ALLERGEN_AFTER_RE = re.compile(
    # "alergy:", "allergic to": the word spelt with a slip too (the rules read "document alergy: …" as an allergy)
    r"\b(?:a+l+e?r+g(?:y|ic|ies)\s*(?:to|:)|intoleran(?:ce|t)\s+(?:to|of)|reaction\s+to|sensitivity\s+to|"
    r"hypersensitivity\s+to)\s+(?P<name>[a-z][a-z0-9\-/ ]{1,58}?)"
    # A dash after a space ends the substance: "add allergy: aspirin - GI bleed" (or "aspirin -GI bleed") is aspirin,
    # reaction GI bleed; a hyphen inside a name ("co-trimoxazole") does not.
    r"(?=\s*[.,;(:]|\s+[-\u2013\u2014]|\s*[\u2013\u2014]|\s+(?:for|in|with|causing|caused|that|which|reaction|"
    r"presenting|manifest\w*|giving|resulting|leading|patient|please)\b|\s*$)",
    re.IGNORECASE,
)
_ALLERGEN_BEFORE_RE = re.compile(r"\b(?P<name>[a-z][a-z0-9\-]{1,40}(?:\s+[a-z][a-z0-9\-]{1,40})?)\s+"
                                 r"(?:allerg(?:y|ies)|intolerance|sensitivity)\b", re.IGNORECASE)
#: "shellfish gives her wheeze", "co-trimoxazole gave him a rash": the substance is the subject.
_GIVES_RE = re.compile(r"(?:^|[.,;:]\s*|\b(?:apparently|says|said|reports?|and|but)\s+)(?P<name>[a-z][a-z0-9\-]{2,30}"
                       r"(?:\s+[a-z][a-z0-9\-]{2,30})?)\s+(?:gives?|gave|causes?|caused|brings?\s+on|brought\s+on)\s+"
                       r"(?:her|him|them|the\s+patient)\b", re.IGNORECASE)
_CAUSE_RE = re.compile(r"\b(?:with|after|from|to|on|taking|following|when\s+given|when\s+taking|due\s+to|caused\s+by|"
                       r"secondary\s+to|because\s+of)\s+(?P<name>[a-z][a-z0-9\-/ ]{1,58}?)"
                       r"(?=\s*[.,;(:]|\s+(?:for|in|with|causing|please|and|which|that|patient)\b|\s*$)",
                       re.IGNORECASE)
_FREE_REACTION_RE = re.compile(
    r"\((?P<paren>[^)]{2,60})\)|(?:\s[-\u2013\u2014]|[\u2013\u2014])\s*(?P<dash>[a-z][a-z \-]{1,58}?)\s*"
    r"(?=[.,;]|\s+(?:for|in|to)\b|$)|"
    r"\b(?:reaction|causing|caused|causes|presenting as|manifest(?:ing|ed)? as|"
    r"reaction was|reacts? with)\s*:?\s+(?P<word>[a-z][a-z \-]{1,58}?)(?=[.,;]|\s+for\b|\s+in\b|\s+to\b|$)",
    re.IGNORECASE,
)
#: Allergens that are no drug, which the resolver does not identify.
KNOWN_ALLERGENS = frozenset({"shellfish", "peanuts", "peanut", "eggs", "egg", "latex", "nuts", "tree nuts", "milk",
                              "dairy", "soy", "soya", "wheat", "gluten", "sesame", "fish", "iv contrast", "contrast",
                              "iodine", "bee stings", "wasp stings", "strawberries", "kiwi"})
_NOT_ALLERGENS = frozenset({"an", "a", "the", "new", "her", "his", "drug", "known", "severe", "mild", "moderate",
                           "document", "record", "add", "log", "enter", "save", "note", "patient", "this", "that",
                           "it", "please", "allergy", "reaction", "drug allergy", "medication",
                           # "is she allergic to anything?": an indefinite pronoun is no substance
                           "anything", "something", "nothing", "everything", "any", "all", "them", "these", "those"})


def _patient_spans(query: str, entities: ExtractedEntities) -> list[tuple[int, int]]:
    spans = [m.span() for m in _PATIENT_WORDS_RE.finditer(query)]
    for text in [*entities["patient_names"], *entities["patient_ids"]]:
        spans += [m.span() for m in re.finditer(re.escape(text), query, re.IGNORECASE)]
    return spans


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(a <= start and end <= b for a, b in spans)


def _product(query: str, patient: list[tuple[int, int]], dose_start: int
             ) -> tuple[str, tuple[int, int], tuple[int, int] | None] | None:
    """The product as written after the order verb (and after "<patient> on" in "put her on ..."), where it
    is, and where the skipped "<patient> on" is. It ends before the dose (``dose_start``): the drug's name never
    takes a dose's sign or number ("amlodipine -5 mg", "amlodipine five thousand mg")."""
    verb = _ORDER_VERB_RE.search(query)
    if verb is None:
        return None
    start = verb.end()
    rest = query[start:]
    # "put her on X", "start Grace Mensah on X": the product follows the patient and "on".
    on = re.match(r"\s*(?P<who>.{1,60}?)\s+on\s+(?=[A-Za-z])", rest)
    skipped: tuple[int, int] | None = None
    if on and (_inside(patient, start + on.start("who"), start + on.end("who"))
               or re.fullmatch(r"(?i)her|him|them|(?:the|this)\s+patient|patient|pt", on.group("who").strip())
               or re.fullmatch(r"[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*){0,3}", on.group("who").strip())):
        skipped = (start, start + on.end())
        start += on.end()
        rest = query[start:]
    lead = _PRODUCT_LEAD_RE.match(rest.lstrip())
    start += len(rest) - len(rest.lstrip()) + (lead.end() if lead else 0)
    rest = query[start:]
    end = _PRODUCT_END_RE.search(rest)
    stop = min(end.start() if end else len(rest), dose_start - start if dose_start >= start else len(rest))
    words = rest[:stop].strip().rstrip("-–—−~:").strip()
    for a, _b in patient:  # a patient name right after the verb ("prescribe Grace Mensah amoxicillin") is not it
        if a >= start and a < start + len(words):
            words = query[start:a].strip()
            break
    if len(words) < 2 or _NO_PRODUCT_RE.fullmatch(words):
        return None
    return words[:60], (start, start + len(words)), skipped


#: Words that stand where a product would and name none: "prescribe something for her pain", "start her on
#: anything for sleep" (the product is the clinician's to name; a pronoun is never a write's argument).
_NO_PRODUCT_RE = re.compile(r"(?i)(?:some|any|no|every)(?:thing|one)|it|that|this|them|those|these|one|something\s+else|"
                            r"(?:a|an|the|some)\s+(?:med(?:ication|icine)?s?|drugs?|tablets?|treatment|painkillers?|"
                            r"antibiotics?)|stuff")


def _covered(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """True when the fields' spans together cover ``start``..``end`` ("80mg/5min": a dose and a frequency)."""
    return all(any(a <= i < b for a, b in spans) for i in range(start, end))


def _leftover(query: str, spans: list[tuple[int, int]]) -> str:
    """The clinician's words that no field took, in runs as written ("take with meals"); a run of filler words
    only ("please", "for her") is dropped, and "" is returned when nothing else is left."""
    runs: list[list[str]] = [[]]
    for match in re.finditer(r"[^\s,;:.!?]+", query):
        if _covered(spans, *match.span()):
            runs.append([])
            continue
        runs[-1].append(match.group(0).strip("()\"'"))
    kept = [" ".join(w for w in run if w) for run in runs
            if any(w.lower() not in _FILLER and not re.fullmatch(r"[\d.,/%-]+", w) for w in run if w)]
    return "; ".join(kept)


def dose_field(dose: re.Match[str]) -> tuple[str, str | None]:
    """The order's dosage from the dose as typed (a space before its unit: "500mg" → "500 mg"), and the typed
    words when the dosage shows the number read in plain digits instead ("two and a half mg" → "2.5 mg", "2,5 mg"
    → "2.5 mg"); a dose that cannot be read stays as typed (the card's dose check says why)."""
    typed = " ".join(dose.group(0).split())
    amount = " ".join(dose.group(0)[: dose.start("unit") - dose.start()].split())
    written = f"{amount} {dose.group('unit')}" + (f" {' '.join(dose.group('after').split())}" if dose.group("after") else "")
    plain = canonical_dose(written)
    return (plain, typed) if plain else (written, None)


def prescription_args(query: str, entities: ExtractedEntities, patient_id: str | None) -> dict[str, Any]:
    """The order's fields as the clinician wrote them; unread words noted (see the module docstring)."""
    out: dict[str, Any] = {"patient_id": patient_id} if patient_id else {}
    patient = _patient_spans(query, entities)
    spans: list[tuple[int, int]] = list(patient)
    verb = _ORDER_VERB_RE.search(query)
    if verb:
        spans.append(verb.span())
    dose = DOSE_TEXT_RE.search(query)
    product = _product(query, patient, dose.start() if dose else len(query))
    if product is not None and product[2] is not None:
        spans.append(product[2])
    drugs = entities["drug_mentions"]
    if product is not None and (resolve_local(product[0]).resolved or len(drugs) != 1):
        out["medication_name"] = product[0]
        spans.append(product[1])
    elif len(drugs) == 1:
        out["medication_name"] = drugs[0]
        named = re.search(rf"\b{re.escape(drugs[0])}\b", query, re.IGNORECASE)
        spans += [product[1]] if product is not None else [named.span()] if named else []
    notes: list[str] = []
    if dose:
        out["dosage"], typed = dose_field(dose)
        notes += [f"dose typed as: {typed}"] if typed else []
        spans.append(dose.span())
    else:
        out["dosage"] = NOT_SPECIFIED
    frequency = frequency_match(query)
    out["frequency"] = frequency[0] if frequency else NOT_SPECIFIED
    spans += frequency[1] if frequency else []
    duration = duration_match(query)
    if duration:
        out["duration"] = duration[0].label
        spans.append(duration[1].span())
    route = route_match(query)
    if route:
        notes.append(f"route: {route.group(0).lower()}")
        spans.append(route.span())
    instruction = _INSTRUCTION_RE.search(query)
    if instruction:
        notes.append(f"instructions: {instruction.group(0).lower()}")
        spans.append(instruction.span())
    for found in _INDICATION_RE.finditer(query):
        lead = _POSSESSIVES_RE.match(found.group("what"))
        begin = found.start("what") + (lead.end() if lead else 0)
        what = query[begin:found.end("what")].strip()
        if not what or _inside(spans, begin, found.end("what")) or any(a < found.end() and begin < b for a, b in patient):
            continue
        if not re.match(r"\d", what) and what.lower() not in ("review", "now", "today", "her", "him", "them"):
            out["indication"] = what[:60]
            spans.append(found.span())
            break
    left = _leftover(query, spans)
    if left:  # shown on the card as a finding, never written into the note (issue 46)
        out[UNREAD] = left[:200]
    if notes:
        out["notes"] = "; ".join(notes)[:120]
    return out


def _is_reaction(text: str) -> bool:
    return bool(REACTION_RE.fullmatch(text.strip()))


def _substance(text: str) -> str | None:
    """``text`` when it names an allergen (drug, drug class or other allergen) and not a reaction."""
    words = text.strip(" .,;:-")
    if not words or words.lower() in _NOT_ALLERGENS or _is_reaction(words) or REACTION_RE.search(words):
        return None
    if only_function_words(words):  # "on her", "him": never a substance
        return None
    if re.fullmatch(r"(?:none|nil|nkda|nka|nkfa|no\s+known.*|nil\s+known|not\s+known|unknown|n/?a)", words, re.IGNORECASE):
        return None  # "alergy: none": no allergy told
    # "sulfa", "sulpha drugs": the class's name, as a record and the class checks know it.
    return "sulfonamides" if _SULFA_RE.fullmatch(words) else words


#: The colloquial words for the sulfonamide antibiotics.
#: A word of its own: "ferrous sulphate" holds no "sulpha" (it was read as a sulfonamide allergy).
_SULFA_RE = re.compile(r"\bsul(?:f|ph)a\b(?:\s+(?:drugs?|antibiotics|meds|medications?))?", re.IGNORECASE)


def _class_named(query: str) -> str | None:
    """The one drug class the message names by a phrase of the class ("sulfa antibiotics", "penicillin class"),
    as the record and the class checks name it; None when it names none or several. A phrase, because a single
    word ("penicillin") is also a drug, which the drug mentions read."""
    if _SULFA_RE.search(query):
        return "sulfonamides"
    named = {c.name for c in CLASSES for w in c.words if " " in w or "-" in w
             if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", query, re.IGNORECASE)}
    return named.pop() if len(named) == 1 else None


#: A dictated allergy's substance: the words before an arrow, after the note's head ("…: latex -> facial swelling").
_ARROW_RE = re.compile(r"(?:^|[:;,.]\s*)(?P<name>[A-Za-z][\w\- ]{1,40}?)\s*(?:->|→|=>|-->|—>)\s*\w")


_NO_KNOWN_RE = re.compile(r"\b(?:nkda|nka|no\s+known\s+(?:drug\s+)?allerg(?:y|ies))\b", re.IGNORECASE)


def _no_known_allergy(query: str) -> str | None:
    """"NKDA" or "NKA" when the message says there is no known (drug) allergy: the coded entry, never an allergy to
    "not specified" (tools/catalog/add_allergy.py writes it with its SNOMED CT code)."""
    found = _NO_KNOWN_RE.search(query)
    if not found:
        return None
    return "NKA" if found.group(0).lower() in ("nka", "no known allergies", "no known allergy") else "NKDA"


def allergy_args(query: str, entities: ExtractedEntities, patient_id: str | None) -> dict[str, Any]:
    """The patient, the substance and the reaction by meaning, and a severity the message states."""
    out: dict[str, Any] = {"patient_id": patient_id} if patient_id else {}
    # A drug named inside a negation ("denies any penicillin allergy") is never the allergen: no entity fallback then.
    negated = any(n.kind == "allergy" for n in negations(query))
    original = query
    query = without_negations(query)  # "record a penicillin allergy; NOT allergic to latex": never latex
    for pattern in (_ALLERGEN_AFTER_RE, _ALLERGEN_BEFORE_RE):  # "allergy to X", "X allergy": the clearest phrasing
        for found in pattern.finditer(query):
            name = re.sub(r"^(?:(?:a|an|the|known|new|severe|mild|moderate|record|document|add|log|note|enter|save|"
                          r"please|patient|her|his|has|had|with)\s+)+", "", found.group("name").strip(), flags=re.IGNORECASE)
            if (substance := _substance(name)) is not None:
                out["substance"] = substance
                break
        if "substance" in out:
            break
    if "substance" not in out:  # "latex -> facial swelling": a dictated allergy, the substance before the arrow
        arrow = _ARROW_RE.search(query)
        named = _substance(arrow.group("name")) if arrow else None
        if named and resolve_local(named).identified:
            out["substance"] = named
    if "substance" not in out:  # "angioedema with lisinopril", "hives after amoxicillin": what the resolver knows
        for cause in _CAUSE_RE.finditer(query):
            named = _substance(cause.group("name"))
            if named and resolve_local(named).identified:
                out["substance"] = named
                break
    if "substance" not in out:  # "apparently shellfish gives her wheeze": the substance is what gives it
        gives = _GIVES_RE.search(query)
        named = _substance(re.sub(r"^(?:the|apparently)\s+", "", gives.group("name"), flags=re.IGNORECASE)) if gives else None
        if named and (resolve_local(named).identified or named.lower() in KNOWN_ALLERGENS):
            out["substance"] = named
    if "substance" not in out:  # "sulfa antibiotics gave her hives": the class the message names, not "antibiotics"
        out.update({"substance": cls} if (cls := _class_named(query)) else {})
    if "substance" not in out and not negated:
        drugs = [d for d in entities["drug_mentions"] if not _is_reaction(d)]
        if len(drugs) == 1:
            out["substance"] = drugs[0]
    if "substance" not in out and (none := _no_known_allergy(original)):
        return {**out, "substance": none, "reaction": "not applicable"}
    reactions = list(dict.fromkeys(m.group(1).lower() for m in REACTION_RE.finditer(query)))
    if reactions:
        out["reaction"] = ", ".join(reactions)[:60]
    else:
        # A reaction is written after the substance ("Kofi Asante - allergic to sulfa, felt unwell": the dash
        # introduces the allergy, not its reaction).
        at = query.lower().find(str(out.get("substance", "")).lower()) if out.get("substance") else -1
        free = _FREE_REACTION_RE.search(query, at + len(str(out["substance"])) if at >= 0 else 0)
        text = (free.group("paren") or free.group("dash") or free.group("word") or "").strip() if free else ""
        if "allerg" in text.lower():
            text = ""
        if text and text.lower() != str(out.get("substance", "")).lower() and not resolve_local(text).resolved:
            out["reaction"] = text[:60]
        elif "substance" in out:
            out["reaction"] = NOT_SPECIFIED  # shown on the card for the clinician to fill, never invented
    severity = SEVERITY_RE.search(query)
    if severity:
        word = severity.group(1).lower()
        out["severity"] = word if word in ("mild", "moderate", "severe") else "severe"
    return out
