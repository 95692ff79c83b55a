"""A trials request split the way a librarian fills ClinicalTrials.gov's search form: the condition, the
intervention (drugs or treatments, alternatives joined with OR), the place, the recruitment status, the phase,
an age group and any other terms (a population such as "immunocompromised").

"belimumab or voclosporin in lupus nephritis" is an intervention and a condition, not one condition: sent whole
as ``query.cond`` it finds almost nothing. Only what the message states is filled; the rest is left to the
model (stage 2) or left out.
"""

from __future__ import annotations

import re
from typing import Any

from docgemma.clinical.entities import DrugDictionary
from docgemma.tools import places

#: Words for a recruitment status → the API's ``filter.overallStatus`` values (first match wins).
STATUS_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bnot yet (?:recruiting|open|enrolling)\b|\bupcoming\b", re.I), "NOT_YET_RECRUITING"),
    (re.compile(r"\b(?:recruiting|enrolling|enrol+ment (?:is )?open|open (?:for|to) (?:recruitment|enrol\w*)|"
                r"accepting (?:new )?(?:patients|participants))\b", re.I), "RECRUITING"),
    # "active" is a status only said of the trials ("active trials", "… that are still active"): "active
    # tuberculosis" and "active lupus nephritis" are conditions.
    (re.compile(r"\b(?:active|ongoing|running)\b(?=\s+(?:clinical\s+|interventional\s+)?(?:trials?|stud(?:y|ies))\b|"
                r"\s*[?.!]*$)", re.I), "RECRUITING,ACTIVE_NOT_RECRUITING,ENROLLING_BY_INVITATION"),
    (re.compile(r"\b(?:completed|finished)\b", re.I), "COMPLETED"),
    (re.compile(r"\b(?:terminated|stopped early)\b", re.I), "TERMINATED"),
)
#: A clinician who wants to refer someone needs a trial that enrols now.
REFERRAL_RE = re.compile(
    r"\b(?:i|we)\s+(?:could|can|might|may)\s+refer\s+(?:someone|somebody|a patient|my patient|him|her|them)(?:\s+to)?\b"
    r"|\bto refer (?:someone|somebody|a patient|my patient|him|her|them)(?:\s+to)?\b|\bfor referral\b", re.I)
PHASE_RE = re.compile(
    r"\b(?P<early>early\s+)?phase\s*(?P<a>iv|i{1,3}|[0-4])\b(?:\s*(?P<sep>/|-|or|and|to|,)\s*(?:phase\s*)?(?P<b>iv|i{1,3}|[1-4])\b)?",
    re.I)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}
AGE_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:children|child|kids|paediatric|pediatric|infants?|neonates?|newborns?|adolescents?|"
                r"teenagers?|teens)\b", re.I), "child"),
    (re.compile(r"\b(?:elderly|older (?:adults|people|patients)|geriatric)\b", re.I), "older adult"),
)
#: "within 50 km of Nairobi", "near Kampala", "in Nairobi".
DISTANCE_RE = re.compile(
    r"\bwithin\s+(?P<n>\d{1,4})\s*(?P<unit>km|kilomet(?:er|re)s?|mi|miles?)\s+(?:of|from)\s+(?P<place>[a-z][\w'\-]*(?:\s+[a-z][\w'\-]*){0,3})",
    re.I)
NEAR_RE = re.compile(
    r"\b(?:near|around|close to|nearby|in the vicinity of|in|at)\s+(?P<place>[a-z][\w'\-]*(?:\s+[a-z][\w'\-]*){0,3})", re.I)
_COUNTRY_AFTER_RE = re.compile(r"\s*,\s*(?P<place>[a-z][\w'\-]*(?:\s+[a-z][\w'\-]*){0,2})", re.I)
#: Study-design words: they describe how a trial is run, not what it studies.
_DESIGN_RE = re.compile(r"\b(?:open[- ]label|(?:double|single|triple)[- ]blind(?:ed)?|placebo[- ]controlled|"
                        r"randomi[sz]ed|controlled|multi-?cent(?:er|re)|pragmatic|pilot|interventional|observational)\b",
                        re.I)
#: Leading words of a request, and words that say nothing about what is studied.
_LEAD_RE = re.compile(
    r"^(?:(?:please|pls|can you|could you|are there|is there|were there|any|find|search(?: for)?|look(?: up| for)?|"
    r"show(?: me)?|list|get|give me|what|which|do you know of|i need|i'm looking for|looking for|check|"
    r"are|is|there|a|an|the|some|me|for)\s+)+", re.I)
_TRIGGER_RE = re.compile(
    r"\b(?:(?:clinical|randomi[sz]ed|drug|interventional)\s+)*(?:trials?|studies|study|research)\b"
    r"(?:\s+(?:that are\s+)?(?:recruiting|enrolling))?"
    r"(?:\s+(?:being\s+)?(?:of|on|for|about|in|into|with|testing|evaluating|using|comparing|investigating|looking at|"
    r"that (?:test|use|evaluate|compare)s?))?\s+", re.I)
_TRIALLED_RE = re.compile(r"\b(?:being\s+)?(?:trialled|trialed|tested|studied|investigated|evaluated)\s+(?:for|in|against)\s+",
                          re.I)
_FILLER_WORDS = re.compile(
    r"\b(?:novel|new|newer|emerging|experimental|promising|investigational|latest|recent|current|currently|ongoing|"
    r"available|open|clinical|possible|potential|any|some|good)\b", re.I)
#: Nouns that name "a treatment" without saying which: "novel toxoplasmosis treatments" is the condition.
_GENERIC_TREATMENT = re.compile(
    r"\b(?:treatments?|therap(?:y|ies)|drugs?|medications?|medicines?|options?|agents?|approaches|interventions?|"
    r"regimens?|management|cures?)\b", re.I)
#: Words that make a phrase a specific intervention even without a drug name.
_MODALITY_RE = re.compile(
    r"\b(?:ablation|surgery|surgical|resection|transplant\w*|stimulation|vaccin\w*|radiotherapy|radiation|chemotherapy|"
    r"immunotherapy|gene therapy|cell therapy|car-t|stem cells?|exercise|diet|dietary|supplement\w*|device|stent\w*|"
    r"implant\w*|behaviou?ral|psychotherapy|counselling|counseling|acupuncture|dialysis|ventilation|screening|"
    r"app|mobile|text messag\w*|training|education|rehabilitation|physiotherapy|catheter\w*|laser|ultrasound)\b", re.I)
#: A drug name followed by one of these is part of a condition ("insulin resistance", "vitamin D deficiency").
_DRUG_AS_CONDITION = re.compile(
    r"\b(?:resistance|resistant|deficiency|deficient|toxicity|poisoning|overdose|dependence|use disorder|"
    r"addiction|allergy|intolerance|withdrawal|induced)\b", re.I)
_POPULATION_NOUNS = re.compile(
    r"\b(?:patients?|people|persons?|adults?|individuals|participants|subjects|populations?|women|men|those|cases|"
    r"recipients?)\b", re.I)
_WITH_RE = re.compile(r"\b(?:patients?|people|persons?|adults?|children|kids|women|men|individuals|those|infants)\s+"
                      r"(?:with|who have|having|suffering from|living with)\s+", re.I)
_CONNECTOR_RE = re.compile(r"\s+(?:in|for|among|amongst|against|to treat|to prevent|treating)\s+", re.I)
_VACCINE_RE = re.compile(r"^(?P<disease>.*?)\s*\bvaccin(?:e|es|ation)\b", re.I)
_TESTING_RE = re.compile(r"\s+(?:testing|evaluating|using|comparing|of|with)\s+(?P<what>.+)$", re.I)
_ALTERNATIVES_RE = re.compile(r"\s*(?:,|\bor\b|\band\b|\bversus\b|\bvs\.?|/)\s*", re.I)
_COMBINATION_RE = re.compile(r"\s*(?:\bplus\b|\bcombined with\b|\bin combination with\b|\+)\s*", re.I)
_CLAUSE_RE = re.compile(r"[;.!?]|,\s*(?:and\s+)?(?=(?:then\s+)?(?:check|find|pull|show|search|look|get|prescribe|"
                        r"record|document|add|save|what|and)\b)|\s+and\s+(?=(?:then\s+)?(?:check|pull|show|look|get|"
                        r"prescribe|record|document|add|save)\b)", re.I)
#: The registry by its name: what follows is what to search it for.
_REGISTRY_RE = re.compile(r"\b(?:clinicaltrials(?:\.gov)?|ct\.gov)(?:\s+search(?:\s+for)?)?\s*:?\s*", re.I)
#: "… that are recruiting": the status is read; the words around it are not part of the condition.
_RELATIVE_RE = re.compile(r"\b(?:that|which)\s+(?:are|is)(?:\s+(?:still|currently|now))?\s+(?=(?:recruiting|enrolling|"
                          r"active|ongoing|running|completed|finished|terminated|open)\b)", re.I)
_TAIL_RE = re.compile(r"\s*(?:for|in)\s+(?:my|a|this|our)\s+(?:patient|client)s?\b.*$|\s*(?:near me|nearby)\b", re.I)


def _clean(text: str) -> str:
    text = _FILLER_WORDS.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip(" ,;:-?.!'\"")
    # Articles only at the edges: "vitamin A deficiency" and "hepatitis A" keep theirs.
    text = re.sub(r"^(?:(?:of|for|in|on|with|and|or|to|the|a|an)\s+)+|(?:\s+(?:of|for|in|on|with|and|or|to|the))+$", "",
                  text, flags=re.I).strip()
    return "" if text.lower() in _EDGE_ONLY else text


_EDGE_ONLY = frozenset({"of", "for", "in", "on", "with", "and", "or", "to", "the", "a", "an"})


def status_words(text: str) -> str | None:
    """The ``filter.overallStatus`` the message asks for (a referral asks for trials recruiting now)."""
    for pattern, value in STATUS_PATTERNS:
        if pattern.search(text):
            return value
    return "RECRUITING" if REFERRAL_RE.search(text) else None


def phase_words(text: str) -> str | None:
    """"phase 3" → "3", "phase II/III" → "2/3", "phase 2 or 3" → "2 or 3", "early phase 1" → "early 1"."""
    found = PHASE_RE.search(text)
    if not found:
        return None
    a = _ROMAN.get(found.group("a").lower(), found.group("a"))
    if found.group("early"):
        return "early 1"
    if not found.group("b"):
        return a
    b = _ROMAN.get(found.group("b").lower(), found.group("b"))
    return f"{a}/{b}" if found.group("sep") in ("/", "-") else f"{a} or {b}"


def place_words(text: str) -> tuple[dict[str, Any], str]:
    """``location`` (and ``distance_km``) the message names, and the message without them."""
    found = DISTANCE_RE.search(text)
    if found:
        place = _known_prefix(found.group("place"))
        if place:
            n = int(found.group("n"))
            km = n if found.group("unit").lower().startswith("k") else round(n * 1.609)
            return {"location": place, "distance_km": km}, _cut(text, found.start(), found.start("place") + len(place))
    for found in NEAR_RE.finditer(text):
        place = _known_prefix(found.group("place"))
        if place:
            end = found.start("place") + len(place)
            country = _COUNTRY_AFTER_RE.match(text, end)  # "Lagos, Nigeria": the country is part of the place
            if country and _known_prefix(country.group("place")):
                end = country.start("place") + len(_known_prefix(country.group("place")) or "")
            return {"location": place}, _cut(text, found.start(), end)
    return {}, text


def _known_prefix(words: str) -> str | None:
    """The longest leading run of ``words`` that names a known place, in the message's own spelling."""
    parts = words.split()
    for n in range(min(len(parts), 4), 0, -1):
        candidate = " ".join(parts[:n]).rstrip(",.;?!")
        if places.lookup(candidate):
            return candidate
    return None


def _cut(text: str, start: int, end: int) -> str:
    return (text[:start] + " " + text[end:]).strip()


def _has_intervention(phrase: str) -> bool:
    if _MODALITY_RE.search(phrase):
        return True
    return bool(_drugs(phrase))


def _drugs(phrase: str) -> list[str]:
    """Drugs named in ``phrase`` that are not part of a condition ("insulin resistance")."""
    if _DRUG_AS_CONDITION.search(phrase):
        return []
    return DrugDictionary.find(phrase)


def intervention_text(phrase: str) -> str:
    """The intervention as ClinicalTrials.gov's Essie syntax reads it: alternatives joined with OR, a
    combination with AND; a drug named inside a longer phrase by its name ("psilocybin-assisted therapy" →
    psilocybin), a brand by its generic."""
    combination = [p for p in _COMBINATION_RE.split(phrase) if p.strip()]
    if len(combination) > 1:
        return " AND ".join(intervention_text(p) for p in combination)
    names: list[str] = []
    for alternative in _ALTERNATIVES_RE.split(phrase):
        alt = _clean(_GENERIC_TREATMENT.sub(" ", alternative)) if _drugs(alternative) else _clean(alternative)
        if not alt:
            continue
        drugs = _drugs(alt)
        if len(drugs) == 1 and (drugs[0] in alt.lower() or len(alt.split()) <= 2):
            alt = drugs[0]
        if alt.lower() not in (n.lower() for n in names):
            names.append(alt)
    return " OR ".join(names)


def _population(phrase: str) -> tuple[str | None, str]:
    """(other terms, rest) of a phrase that names a population: "immunocompromised patients" → immunocompromised."""
    if not _POPULATION_NOUNS.search(phrase):
        return None, phrase
    rest = _clean(_POPULATION_NOUNS.sub(" ", phrase))
    return (rest or None), ""


def _topic(clause: str) -> str:
    """The words about what is studied: after "trials of/for/on …" or "being tested for …", before "trial(s)"
    ("a sickle cell trial"), or both ("Benlysta trials for lupus" → "Benlysta for lupus")."""
    found = _TRIALLED_RE.search(clause) or _TRIGGER_RE.search(clause + " ")
    if not found:
        return _LEAD_RE.sub("", clause).strip()
    before = _LEAD_RE.sub("", clause[: found.start()]).strip()
    after = clause[found.end():].strip()
    if _clean(after) and _clean(_GENERIC_TREATMENT.sub(" ", before)):
        return f"{before} for {after}"
    return after if _clean(after) else before


def _clause(query: str) -> str:
    """The part of a multi-request message that asks for trials."""
    clauses = [c for c in _CLAUSE_RE.split(query) if c and c.strip()]
    for clause in clauses:
        if re.search(r"\b(?:trials?|trialled|trialed|studies|study|research)\b", clause, re.I):
            return clause.strip()
    return query.strip()


def parse(query: str) -> dict[str, Any]:
    """The trial search fields the message states (see the module docstring)."""
    out: dict[str, Any] = {}
    # "<context>, clinicaltrials.gov search: nystatin stroke": the registry named is the trials asked for (its dot no
    # full stop), and what follows it is the search.
    registry = _REGISTRY_RE.search(query)
    keywords = bool(registry and query[registry.end():].strip())
    if keywords and registry:
        query = "clinical trials on " + query[registry.end():]
    status = status_words(query)
    if status:
        out["status"] = status
    phase = phase_words(query)
    if phase:
        out["phase"] = phase
    text = _DESIGN_RE.sub(" ", _clause(query))
    where, text = place_words(text)
    out.update(where)
    text = REFERRAL_RE.sub(" ", text)
    text = _TAIL_RE.sub("", text)
    text = _RELATIVE_RE.sub(" ", text)
    for pattern, _value in STATUS_PATTERNS:
        text = pattern.sub(" ", text)
    text = PHASE_RE.sub(" ", text)
    for pattern, group in AGE_WORDS:
        if pattern.search(text):
            out["age_group"] = group
            text = pattern.sub(" patients ", text)
    text = _WITH_RE.sub(" in ", text)  # "in patients with lupus nephritis" → "in lupus nephritis"
    topic = _topic(re.sub(r"\s+", " ", text).strip())
    out.update(_split(topic, keywords))
    return out


def _besides_the_drugs(phrase: str) -> str:
    """What a keyword search names beside its one drug ("amitriptyline psoriasis" → psoriasis): the condition; empty
    when the phrase is the drug, several drugs or a modality."""
    drugs = _drugs(phrase)
    if len(drugs) != 1 or _MODALITY_RE.search(phrase) or _ALTERNATIVES_RE.search(phrase.strip()):
        return ""
    alone = re.compile(rf"(?<![\w\-]){re.escape(drugs[0])}(?![\w\-])", re.I)  # not "psilocybin-assisted"
    if not alone.search(phrase):
        return ""
    rest = alone.sub(" ", phrase)
    rest = _clean(_GENERIC_TREATMENT.sub(" ", rest))
    return "" if DrugDictionary.find(rest) else rest


def _split(topic: str, keywords: bool = False) -> dict[str, Any]:
    """condition / intervention / other_terms from "<left> in|for <right>"."""
    out: dict[str, Any] = {}
    topic = re.sub(r"^(?:in|for|of|on|with|among)\s+", "", topic.strip(), flags=re.I)
    connector = _CONNECTOR_RE.search(topic)
    left, right = (topic[: connector.start()], topic[connector.end():]) if connector else (topic, "")
    terms, right = _population(right.strip())
    left = left.strip()
    tested = _TESTING_RE.search(left)
    if tested and not _has_intervention(left[: tested.start()]) and _has_intervention(tested.group("what")):
        left, right = tested.group("what"), left[: tested.start()]  # "lupus nephritis testing voclosporin"
    vaccine = _VACCINE_RE.match(left)
    if vaccine and _clean(vaccine.group("disease")):  # "malaria vaccines": the disease, and a vaccine
        out["intervention"] = "vaccine"
        condition = vaccine.group("disease")
    elif _has_intervention(left):
        out["intervention"] = intervention_text(left)
        # A registry's keyword search ("clinicaltrials.gov search: amitriptyline psoriasis") names the condition
        # beside the drug; anywhere else the words beside it are the drug's ("low dose aspirin", "aspirin please").
        condition = right or (_besides_the_drugs(left) if keywords else "")
    else:
        condition = _clean(_GENERIC_TREATMENT.sub(" ", left))
        if not condition:
            condition = right
        elif _has_intervention(right):
            out["intervention"] = intervention_text(right)
        elif _clean(right):
            terms = " ".join(t for t in (terms, _clean(right)) if t)
    condition = _clean(condition)
    if not condition and terms and "intervention" not in out:
        condition, terms = terms, None
    if 2 <= len(condition) <= 80:
        out["condition"] = condition
    if terms and 2 <= len(terms) <= 60 and terms.lower() != condition.lower():
        out["other_terms"] = terms
    if "intervention" in out and not (2 <= len(out["intervention"]) <= 80):
        del out["intervention"]
    return out
