"""Asking instead of guessing: the buttons of an unsure turn on a model not fit to judge medical requests.

Each candidate action of the turn's decision (:func:`docgemma.agent.decision.candidate_labels`: the rule's, then
the learned router's) becomes a request filled in with what the message named — the patient it named (never
another: the active patient only when it named none), every drug it named. A request is offered only when the
rules and the router then decide it surely as that action (or, for a patient the message named who is not the
active one, as the patient search that comes first), so a button is always done without guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

from docgemma.agent import decision
from docgemma.agent.answer import suggested_patient
from docgemma.agent.button_check import decided_as, fills
from docgemma.agent.button_fill import (
    bare_name,
    connection_subject,
    cued_name,
    drugs_named,
    is_class_name,
    possible_family_name,
    possible_name,
    record_owner,
)
from docgemma.agent.patterns import is_write_request
from docgemma.agent.state import AgentState
from docgemma.clinical.drug_spelling import unread_drugs
from docgemma.clinical.entities import DRUG_ALIASES, ExtractedEntities, extract_entities
from docgemma.clinical.function_words import FUNCTION_WORDS, only_function_words
from docgemma.clinical.record_concepts import RECORD_CONCEPT_RE, asks_medication_map
from docgemma.clinical.request_spelling import respelt
from docgemma.clinical.roster import PatientRoster
from docgemma.tools.order_extract import allergy_args
from docgemma.tools.registry import ToolRegistry, ToolSpec
from docgemma.tools.routing import Role

MAX_BUTTONS = 3
#: The router's probability below which a candidate is not offered (the rule's own candidate always is).
MIN_PROBABILITY = 0.02
#: The router's probability from which a write it does not rank first is offered, for a message in command form.
WRITE_PROBABILITY = 0.1
#: ... and for any message, from this probability ("change his antibiotic to amlodipine 5 mg od": order or note?).
LIKELY_WRITE_PROBABILITY = 0.3
#: A record concept as a request names it ("kidneys" → "kidney function").
_CONCEPT_WORDS = {"nkda": "allergies", "nka": "allergies", "allergic": "allergies", "allergy": "allergies",
                  "u&es": "electrolytes", "u&e": "electrolytes",
                  "obs": "vitals", "kidney": "kidney function", "renal": "kidney function",
                  "liver function": "liver function",
                  "thyroid": "thyroid function", "bp": "blood pressure", "temp": "temperature"}


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


_ORGAN_RE = re.compile(r"\b(kidney|renal|liver|thyroid|nkda|nka)s?\b", re.IGNORECASE)


def _concept(query: str) -> str | None:
    """The record item the message asks about; None when it names none (a button for "active medications" on
    any message was offered for "cheers" and for questions about admissions)."""
    match = _ORGAN_RE.search(query) or RECORD_CONCEPT_RE.search(query)
    if not match:
        return None
    word = match.group(1 if match.re is _ORGAN_RE else 0).lower()
    if re.match(r"(?:documented|recorded|coded|listed)\s+as\b", word):  # "is she documented as having gout"
        return "conditions"
    # "is she on …", "what's he taking": a question about her medications.
    if re.search(r"\s(?:on|taking)$", word):
        return "medications"
    return _CONCEPT_WORDS.get(word, word)


_MEDS_ONLY_RE = re.compile(r"(?:(?:all|each|every|of)\s+)*(?:meds?|medications?|medicines?|drugs?|tablets|pills)(?:\s+for)?",
                           re.IGNORECASE)


def _connection(drugs: list[str], patient: str, query: str) -> str | None:
    """A connection question: from the one drug named, else from what the message asks about ("what led to her
    asthma diagnosis?" → "What is linked to this patient's asthma in the record?")."""
    if not patient:
        return None
    if drugs:
        # "remind me why he's on bisoprolol and ramipril": from the first drug named (a button per question).
        return f"What is {patient}'s {drugs[0]} treating?"
    subject = connection_subject(query)
    if asks_medication_map(query, owner_read=True) or (subject and _MEDS_ONLY_RE.fullmatch(subject)):
        # "what are all her meds for?": the whole record's map, not one item called "meds for".
        return f"Which of {patient}'s medications is for which condition?"
    return f"What is linked to {patient}'s {subject} in the record?" if subject and not drugs else None


def _order_tail(query: str, drug: str) -> str:
    """What the message says after the drug (its dose, frequency, duration), to the end of the clause: the
    drug as the message wrote it may be a shortening or a brand the dictionary resolved."""
    words = [drug, *(alias for alias, name in DRUG_ALIASES.items() if name == drug)]
    words += [written for written, name in unread_drugs(query) if name == drug]  # "tiootropium" as typed
    for word in sorted(words, key=len, reverse=True):
        # A decimal point is part of a dose ("2.5 mg"); "or"/"if" starts another thought ("40 mg or is her eGFR …").
        match = re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])\s*((?:[^,;.?!]|\.(?=\d)){{0,60}})", query,
                          re.IGNORECASE)
        if match:
            tail = re.sub(r"\bto\s+(?:her|his|their|the)\s+(?:drug\s+|med(?:ication)?\s+)?(?:chart|kardex)\b.*", "",
                          match.group(1))
            tail = re.split(r"\s+(?:or|if|unless|but|whether)\b", tail, maxsplit=1, flags=re.IGNORECASE)[0]
            tail = " ".join(re.sub(r"\b(?:for|to)\s+(?:her|him|them)\b|\bthen\b", "", tail).split())
            return f" {tail}" if re.match(r"\d", tail) else ""  # a dose first, or nothing of the rest
    return ""


#: The topic a request ends on: "… trials he could join for gout?", "find studies on AF management".
_TOPIC_RE = re.compile(r"\b(?:for|on|about|in|with)\s+([A-Za-z][\w' \-]{2,50}?)\s*[?.!]*\s*$", re.IGNORECASE)
_TOPIC_START_RE = re.compile(r"\b(?:for|on|about|in|with)\s", re.IGNORECASE)


#: A topic inside the message: "a review article on heart failure for my presentation", "she has refractory DKA - is
#: there any trial she might be eligible for?".
_INNER_TOPIC_RE = re.compile(r"\b(?:on|about|regarding|has|have|with)\s+([A-Za-z][\w' \-]{2,50}?)\s*"
                             r"(?:[-–,.;:?!]|\bfor\s+(?:my|the|our|a|journal|me|us)\b|\banything\b|$)"
                             # "open heart failure studies", "cellulitis trials - Accra", "my gout patient"
                             r"|\bopen\s+([A-Za-z][\w' \-]{2,40}?)\s+(?:studies|trials)\b"
                             r"|(?:^|[:,.]\s*)([A-Za-z][\w' \-]{2,40}?)\s+tri+als\b"
                             r"|\bmy\s+([A-Za-z][\w' \-]{2,40}?)\s+patient\b"
                             # "clinicaltrials search: hiv, recruiting, phase 3"
                             r"|\bsearch\s*:\s*([A-Za-z][\w' \-]{1,40}?)\s*(?:[,;]|$)"
                             # "research for her asthma, any trials?", "a study she could be screened for, given her COPD"
                             r"|\b(?:for|given|with)\s+(?:her|his|their)\s+([A-Za-z][\w' \-]{2,40}?)\s*(?:[-–,.;:?!]|$)",
                             re.IGNORECASE)
#: A condition that has outrun treatment: "she has refractory psoriasis and has run out of options" (read on its own:
#: the inner topics above may take the words around it first).
_CONDITION_TOPIC_RE = re.compile(r"\b(?:refractory|relapsed|resistant|recurrent|advanced|metastatic)\s+"
                                 r"([A-Za-z][\w'\-]+(?:\s+[A-Za-z][\w'\-]+)?)(?=\s*(?:[-–,.;:?!]|\band\b|\bbut\b|$))",
                                 re.IGNORECASE)


def _topic(drugs: list[str], query: str) -> str | None:
    """What a knowledge search is about: the drugs the message named, else the topic it ends on, else the first
    topic inside it."""
    if drugs:
        return _and(drugs)
    # Every place the ending topic may start, leftmost first: "open to enrolment on the registry for breast cancer".
    endings = (m.group(1).strip() for at in _TOPIC_START_RE.finditer(query) if (m := _TOPIC_RE.match(query, at.start())))
    topic = next((t for found in endings if (t := _topic_words(found))), None)
    # A condition that has outrun treatment first: it is what the patient needs a trial for.
    inner = [m.group(1) for m in _CONDITION_TOPIC_RE.finditer(query)]
    inner += [next(g for g in m.groups() if g) for m in _INNER_TOPIC_RE.finditer(query)]
    return topic or next((t for found in inner if (t := _topic_words(found.strip()))), None)


#: Where a topic's own words end: a clause about it ("depression that's open to recruitment", "TB which is
#: recruiting") or who it is for ("… in renal research for me").
_TOPIC_END_RE = re.compile(r"\s+(?:that|which|who|where)(?:['’]s|\s)|\s+(?:open\s+to|recruiting|for\s+(?:me|us|my|our)\b)|"
                           # what the clinician will do with it: "on HIV I can cite in my audit", "… to use in teaching"
                           r"\s+(?:i|we|you)\s+(?:can|could|need|want|would|will|might|should|am|have|may)\b|"
                           r"\s+(?:to|so\s+i\s+can)\s+(?:cite|use|share|present|teach|show|quote|reference)\b",
                           re.IGNORECASE)


def _topic_words(topic: str) -> str | None:
    """``topic`` when it can be searched for (see :func:`_topic`), else None."""
    topic = _TOPIC_END_RE.split(topic, maxsplit=1)[0].strip()
    # A topic of a few words that names no drug and no one ("for someone taking simvastatin" is not a topic).
    # Up to six words when two topics are joined ("Alzheimer's disease and atrial fibrillation co-occurring").
    limit = 6 if re.search(r"\b(?:and|with|in)\b", topic) else 4
    if not topic or len(topic.split()) > limit or extract_entities(topic)["drug_mentions"]:
        return None
    if re.match(r"(?:the|this|that|a|an|my|our|it)\b", topic, re.IGNORECASE):  # "the system", "the 2nd trimester"
        return None
    if topic.split()[0].lower() in FUNCTION_WORDS:  # "… on at the moment?": no topic begins with a preposition
        return None
    # "… compared with before?", "… in general?": words that are no topic of a search (seen as "Find recruiting
    # clinical trials for before" in bench/results/results_router.md).
    if only_function_words(topic) or all(w in _NOT_TOPICS for w in topic.lower().split()):
        return None
    return None if re.search(r"\b(?:her|him|them|patient|me|us|someone|anyone)\b", topic, re.I) else topic


#: Words that end a sentence without naming what to search for.
_NOT_TOPICS = frozenset({"before", "after", "general", "now", "later", "today", "tonight", "tomorrow", "here", "there",
                         "sure", "example", "instance", "real", "once", "again", "good", "simple", "terms", "practice",
                         "interns", "students", "short", "brief", "detail", "full", "total", "home", "work", "file",
                         "anything", "something", "options", "it", "them"})


#: What a reaction was to: "gets hives with eggs - record it", "angioedema to IV contrast, please document it".
_REACTS_TO_RE = re.compile(r"\b(?:with|to|after|from)\s+([A-Za-z][\w\- ]{1,30}?)\s*(?:[-–,.;:!?(]|\b(?:please|pls|"
                           r"record|document|add|log|note|put|as\s+an?)\b|$)", re.IGNORECASE)


#: Allergens that are no drug, as clinicians write them ("peanuts gave him facial swelling", "shellfish-allergic").
_ALLERGEN_RE = re.compile(r"\b(latex|peanuts?|tree\s+nuts|nuts|shellfish|eggs?|cow'?s\s+milk|milk|dairy|soy|soya|wheat|"
                          r"gluten|sesame|fish|bee\s+stings?|wasp\s+stings?|(?:iv\s+|iodinated\s+)?contrast|iodine|"
                          r"sticking\s+plasters?|adhesive\s+tape|chlorhexidine|nickel)(?=[\s,.;:!?()-]|$)", re.IGNORECASE)


def _allergen(drugs: list[str], query: str) -> str | None:
    """The substance of an allergy as the allergy's own reader takes it ("shellfish", "sulfonamides"), else the one
    drug named, else what the message says a reaction was to (the clinician sees it on the button)."""
    substance = allergy_args(query, ExtractedEntities(patient_ids=[], patient_names=[], drug_mentions=drugs,
                                                      action_verbs=[], has_image=False), None).get("substance")
    if substance:
        return str(substance)
    if len(drugs) == 1:
        return drugs[0]
    known = [m.group(1) for m in _ALLERGEN_RE.finditer(query)]
    if len({k.lower() for k in known}) == 1:
        return known[0]
    said = [m.group(1).strip() for m in _REACTS_TO_RE.finditer(query)]
    said = [s for s in said if not only_function_words(s) and not re.search(
        r"\b(?:her|him|his|them|patient|me|it|this|that|allerg\w*|anything|something|nothing|everything)\b", s, re.I)]
    return said[-1] if len(said) == 1 else None


def _order(drugs: list[str], patient: str, query: str) -> str | None:
    """A prescription of the one drug named; a class is no drug to order ("change his antibiotic to …")."""
    ordered = [d for d in drugs if not is_class_name(d)]
    if len(ordered) != 1 or not patient:
        return None
    return f"Prescribe {ordered[0]}{_order_tail(query, ordered[0])} for {patient}"


Phrase = Callable[[list[str], str, str], str | None]
_BY_ROLE: dict[Role, Phrase] = {
    Role.DRUG_SAFETY: lambda d, p, q: f"What are the FDA safety warnings for {d[0]}?" if d else None,
    Role.INTERACTIONS: lambda d, p, q: (f"Check interactions between {_and(d)}" if len(d) >= 2 else
                                        f"Check interactions between {d[0]} and {p}'s medications" if d and p else None),
    Role.LITERATURE: lambda d, p, q: f"Find recent studies on {t}" if (t := _topic(d, q)) else None,
    Role.TRIALS: lambda d, p, q: f"Find recruiting clinical trials for {t}" if (t := _topic([], q)) else None,
    Role.CONNECTIONS: _connection,
    Role.CHART: lambda d, p, q: f"Show the chart of {p}" if p else None,
    # A record question naming a drug or a class and no other item is about her medications ("blood thinners?").
    Role.RECORD_QUERY: lambda d, p, q: f"Show {p}'s {c}" if p and (c := _concept(q) or ("medications" if d else None))
    else None,
    Role.RECORD_HISTORY: lambda d, p, q: f"When was {p} last seen?" if p else None,
    Role.MEDICATION_ORDER: _order,
    Role.ALLERGY_ENTRY: lambda d, p, q: f"Record an allergy to {a} for {p}" if p and (a := _allergen(d, q)) else None,
    # "put in the notes: K+ 5.4 …": the note is what follows the colon.
    Role.NOTE_ENTRY: lambda d, p, q: f"Note for {p}: {q.split(':', 1)[-1].strip()}" if p and q.split(":", 1)[-1].strip()
    else None,
}


def request_for(spec: ToolSpec | None, drugs: list[str], patient: str, query: str, named: str) -> str | None:
    """The request for one candidate action, or None when the message does not name what it needs (``spec`` None,
    a general answer, is never offered: the model that asks is not fit to write one)."""
    if spec is None:
        # A general answer: this model writes none (it is not fit to), so it is no action to offer.
        return None
    if spec.patient_search:
        # A name written in lower case is offered capitalised ("Find patient Kariuki"), as the search's own button
        # reads it; a hospital number as written.
        shown = named.title() if named and named.islower() and not re.search(r"\d", named) else named
        return f"Find patient {shown}" if shown else None
    if spec.needs_image:
        return "Analyse the attached image"
    for role in spec.roles:
        if role in _BY_ROLE:
            return _BY_ROLE[role](drugs, patient, query)
    return None


def buttons(state: AgentState, registry: ToolRegistry, offline: bool = False,
            roster: PatientRoster | None = None) -> list[str]:
    """Up to three requests for the unsure turn's candidate actions, each one the rules then decide surely.
    ``offline``: only the patient record's actions (every other tool asks a public service)."""
    return [text for text, _label, _action in offered(state, registry, offline, roster)]


def _named(state: AgentState) -> tuple[str | None, bool]:
    """(the patient the message names who is not the active one, as written; whether a patient is active and none
    other is named). A lower-case name the patterns could not be sure of counts: it is asked about, never replaced
    by the active patient."""
    active, named = suggested_patient(state)
    entities = state["extracted_entities"]
    named = named or (entities["patient_names"][0] if entities["patient_names"] and not active else None)
    # A patient given by an identifier the roster knows ("DG-1002", "Patient/<id>") is named by it.
    aliases = entities.get("patient_aliases") or {}
    current = state.get("active_patient")
    alias = next((a for a, pid in aliases.items() if current is None or pid != current["id"]), None)
    written = re.search(re.escape(alias), state.get("user_query", ""), re.IGNORECASE) if alias else None
    named = named or (written.group(0) if written else alias)
    if not named and not entities["patient_names"] and not aliases:
        named = possible_name(state.get("user_query", "")) or possible_family_name(state.get("user_query", ""), current)
    # "Document in Banda's record: …": whose record the write goes to, when it is not the active patient's.
    if not named and not entities["patient_names"]:
        named = record_owner(state.get("user_query", ""), current)
    return named, bool(active) and not named


def _readings(carried: decision.RouteDecision, state: AgentState, registry: ToolRegistry,
              query: str) -> tuple[list[str], set[str | None]]:
    """(the candidate labels, most likely first; the labels a write may be offered for). The message respelt
    ("admisions" → admissions) is read again and its candidates come first: a slip broke the first reading."""
    readings = [carried]
    # A drug only the dose table or one slip tells ("senna", "methhadone") is read as the drug it names.
    unread = [name for _written, name in unread_drugs(query)]
    if query != state.get("user_query", "") or unread:
        entities = extract_entities(query, has_image=state["extracted_entities"]["has_image"])
        entities["drug_mentions"] = list(dict.fromkeys([*entities["drug_mentions"], *unread]))
        readings.insert(0, decision.decide({**state, "user_query": query, "extracted_entities": entities}, registry))
    labels: list[str] = []
    # A write is offered only where a rule or the router reads a request to write it (its top candidate).
    writes: set[str | None] = set()
    # A message in command form ("add latex to his allergies") may mean a write the router ranks second.
    commands = is_write_request(query)
    for read in readings:
        writes |= {read["label"], str(read["candidates"][0][0])}
        writes |= {str(c) for c, p in read["candidates"]
                   if float(p) >= (WRITE_PROBABILITY if commands else LIKELY_WRITE_PROBABILITY)}
        sure = [str(read["label"])] if read["sure"] and read["label"] else []
        labels += sure + decision.candidate_labels(read, k=len(read["candidates"]) + 1, floor=MIN_PROBABILITY)
    return list(dict.fromkeys(labels)), writes


def offered(state: AgentState, registry: ToolRegistry, offline: bool = False,
            roster: PatientRoster | None = None) -> list[tuple[str, str, str]]:
    """:func:`buttons` as (request, the candidate action it is for, the action it is surely decided as first: the
    patient search for a patient named who is not the active one); ``bench/bench_router.py`` scores them."""
    carried = cast("decision.RouteDecision | None", state.get("route_decision"))
    if not carried:
        return []
    written = re.sub(r"\s+", " ", state.get("user_query", "")).strip()
    query = respelt(written)
    search = next((s.name for s in registry if s.patient_search), None)
    labels, writes = _readings(carried, state, registry, query)
    named, active = _named(state)
    if not named and search in labels and (bare := bare_name(query) or cued_name(query)):
        # The whole message is a name ("pt david ochieng"), or a name follows a word that asks for a patient
        # ("change patient to mei chen"), and the router thinks of a patient search: that first.
        named, active = bare, False
        labels.insert(0, labels.pop(labels.index(search)))
    if named and search and search not in labels and named.lower() not in (
            state["extracted_entities"].get("patient_aliases") or {}):
        # "what was Otieno's last sodium?": a patient named who is not the active one is found first, whatever the
        # router ranks (it read a record question).
        labels.insert(0, search)
    # The active patient is "this patient" (their name would be a search for them): the page shows who it is.
    patient = named or ("this patient" if active else "")
    if named and " " not in named.strip() and not re.search(r"\d", named):
        # A family name alone is a patient's only after the word for one ("Show the chart of patient Sofia"): the
        # rules then find that patient first, as for a full name ("Show the chart of Sofia" could be read as a place).
        patient = f"patient {named[:1].upper()}{named[1:]}"
    drugs = drugs_named(state)
    by_id = named is not None and named.lower() in (state["extracted_entities"].get("patient_aliases") or {})
    out: list[tuple[str, str, str]] = []
    # The labels with some probability, most likely first: a candidate the message cannot fill in gives way to the
    # next; an action the router all but rules out is not offered just because it could be filled in.
    for label in labels:
        spec = None if label == decision.DIRECT else registry[label]
        if offline and (spec is None or not spec.record):
            continue
        if spec is not None and spec.writes and label not in writes:
            continue
        # "her son gets hives with peanuts": a relative's reaction is never offered as the patient's allergy.
        if spec is not None and Role.ALLERGY_ENTRY in spec.roles and decision.relative_reaction(query):
            continue
        # A note is offered in the clinician's own words, slips and all: its text is what would be written.
        note = spec is not None and Role.NOTE_ENTRY in spec.roles
        text = request_for(spec, drugs, patient, written if note else query, named or "")
        if text is None or text in {t for t, _l, _a in out}:
            continue
        # A patient the message named who is not the active one is found first: that search is the action, and the
        # only one (a button naming them that the rules read as the active patient's record is never offered).
        # A patient given by a record number the roster knows is exactly that patient: the record's own actions.
        wanted = {search} if named and spec is not None and spec.record and not by_id else {label}
        action = decided_as(text, state, registry, roster)
        # Decided surely, and with every argument code reads off it (a demo model is asked for none).
        if action in wanted and action is not None and fills(registry[action], text, state):
            out.append((text, label, str(action)))
        if len(out) == MAX_BUTTONS:
            break
    return out
