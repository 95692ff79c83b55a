"""Whole-message accounting (issue 26, item 1): before a rule's decision is trusted, everything the extractors find
in the message — drugs (shortenings included), patients (names, ids, pronouns), places, study and publication words,
dose, frequency, duration, record concepts — is either used by the chosen action's arguments, or set aside as
context (a context sentence: "He's on clopidogrel and aspirin. Check …"; a negated statement; a pronoun for the
active patient the named-drug lines read), or LEFT OVER. Anything left over makes the decision unsure: the rule does
not decide, and the model (shown the candidates) or the clinician (asked) does. "is ramipril a problem with her
potassium?" read as a record query leaves ramipril over; "open studies near Nairobi" sent to the literature leaves
Nairobi over.

Pure: it reads the state and the registry and runs only the tools' own extractors (``agent/prefill``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from docgemma.agent.patterns import (
    _IMPERATIVE_CLAUSE_RE,
    PATIENT_REF_RE,
    is_question,
    is_write_request,
    remaining_tools,
)
from docgemma.agent.prefill import prefill, wants_own_medicines
from docgemma.agent.state import AgentState
from docgemma.clinical.dosing import DOSE_TEXT_RE, duration_match, frequency_match
from docgemma.clinical.drug_spelling import unread_drugs
from docgemma.clinical.entities import DrugDictionary, combination_parts
from docgemma.clinical.negation import without_negations
from docgemma.clinical.record_concepts import RECORD_CONCEPT_RE
from docgemma.tools import places
from docgemma.tools.extract import sentences
from docgemma.tools.label_query import TOPIC_WORDS
from docgemma.tools.registry import ToolRegistry, ToolSpec
from docgemma.tools.routing import Role

Status = Literal["used", "set aside", "left over"]

#: Words before a place the patient would go to ("near Nairobi", "close to Kisumu").
_NEAR_RE = re.compile(r"\b(?:near|nearby|around|close\s+to|within\s+\d+\s*(?:km|miles?)\s+of)\s*$", re.IGNORECASE)
#: Words for studies and publications: a literature or trials search uses them; any other action leaves them over.
STUDY_RE = re.compile(r"\b(?:stud(?:y|ies)|trials?|rcts?|systematic\s+reviews?|meta-?analys[ie]s|literature|papers?|"
                      r"publications?|evidence)\b", re.IGNORECASE)
#: Record words too general to stand for an item of the record on their own ("drugs", "history", "results").
_GENERIC_CONCEPTS = frozenset({"drug", "drugs", "history", "result", "results", "trend", "last time", "note", "notes",
                               "problem", "problems",
                               # "K+ risk?" qualifies an interaction question; "her K+?" alone is a record question
                               "k", "na"})
#: Place names that are also common words or given names: a place only when capitalised.
_CAPITALISED_PLACES = frozenset({"us", "uk", "chad", "georgia", "jordan", "turkey", "guinea", "niger", "china", "india"})


@dataclass(frozen=True)
class Item:
    """One thing the message states, and what the decision does with it."""

    kind: str
    text: str
    status: Status
    why: str = ""


@dataclass(frozen=True)
class Accounting:
    """Every item of the message, each used, set aside or left over."""

    items: tuple[Item, ...]

    @property
    def left_over(self) -> tuple[Item, ...]:
        return tuple(i for i in self.items if i.status == "left over")

    @property
    def sure(self) -> bool:
        """True when nothing is left over."""
        return not self.left_over

    def describe(self) -> str:
        """"used: amoxicillin (drug), 500 mg (dose); set aside: clopidogrel (drug, context sentence)"."""
        parts = []
        for status in ("used", "set aside", "left over"):
            shown = [f"{i.text} ({i.kind}{', ' + i.why if i.why else ''})" for i in self.items if i.status == status]
            if shown:
                parts.append(f"{status}: {', '.join(dict.fromkeys(shown))}")
        return "; ".join(parts) or "nothing to account for"


@dataclass(frozen=True)
class _Found:
    kind: str
    text: str
    start: int
    #: A drug's name as the dictionary gives it ("metronidazol" → "metronidazole").
    name: str = ""


@lru_cache(maxsize=1)
def _place_re() -> re.Pattern[str]:
    names = sorted({*places.CITIES, *places.COUNTRIES, *places._ALIASES}, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b", re.IGNORECASE)


def _places(query: str) -> Iterator[_Found]:
    for match in _place_re().finditer(query):
        word = match.group(0)
        if word.lower() in _CAPITALISED_PLACES and not word[0].isupper():
            continue
        yield _Found("place", word, match.start())


def _dosing(query: str) -> Iterator[_Found]:
    for match in DOSE_TEXT_RE.finditer(query):
        yield _Found("dose", match.group(0).strip(), match.start())
    # A frequency or a duration counts in a dosing instruction (with a dose): "a stat dose of haloperidol an hour
    # ago" and "ongoing trials" give none.
    if not DOSE_TEXT_RE.search(query):
        return
    frequency = frequency_match(query)
    if frequency is not None:
        yield _Found("frequency", frequency[0], frequency[1][0][0])
    duration = duration_match(query)
    if duration is not None and duration[0].value is not None:  # as the order reads it ("for five days" → "5 days")
        yield _Found("duration", duration[0].label, duration[1].start())


def found_items(state: AgentState) -> list[_Found]:
    """What the extractors find in the message, where."""
    query = state.get("user_query", "")
    lowered = query.lower()
    entities = state["extracted_entities"]
    out: list[_Found] = []
    for written, name in DrugDictionary.mentions(query):
        out.append(_Found("drug", written, lowered.find(written.lower()), name))
    # A drug of the dose table misspelt by one slip of the keyboard ("methhadone"): a drug the decision must account
    # for too ("is methhadone ok with esomeprazole?" is not a question about esomeprazole alone). Not the
    # dictionary's own fuzzy suggestion, which reads "happens" as haptens.
    out += [_Found("drug", written, lowered.find(written.lower()), name)
            for written, name in unread_drugs(query, suggest=False)]
    out += [_Found("patient", n, lowered.find(n.lower())) for n in entities["patient_names"]]
    out += [_Found("patient id", i, lowered.find(i.lower())) for i in entities["patient_ids"]]
    out += [_Found("pronoun", m.group(0), m.start()) for m in PATIENT_REF_RE.finditer(query)]
    out += list(_places(query))
    out += [_Found("study word", m.group(0), m.start()) for m in STUDY_RE.finditer(query)]
    out += list(_dosing(query))
    out += [_Found("record concept", m.group(0), m.start()) for m in RECORD_CONCEPT_RE.finditer(query)
            if m.group(0).lower() not in _GENERIC_CONCEPTS]
    return out


def _context_spans(query: str, tools: ToolRegistry) -> list[tuple[int, int]]:
    """Where the message's context sentences are: in a message of several sentences, a statement that asks for
    nothing ("He's on clopidogrel and aspirin after his stent.", "His B12 came back at 98.")."""
    parts = sentences(query)
    if len(parts) < 2:
        return []
    spans, at = [], 0
    for part in parts:
        start = query.find(part, at)
        at = start + len(part)
        asks = (is_question(part) or is_write_request(part) or _IMPERATIVE_CLAUSE_RE.match(part)
                or any(s.mention(part) is not None for s in tools))
        if not asks:
            spans.append((start, at))
    return spans


def _values(args: dict[str, Any]) -> str:
    flat: list[str] = []
    for value in args.values():
        flat += [str(v) for v in value] if isinstance(value, list) else [str(value)]
    return " ".join(flat).lower()


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text.lower())


@dataclass(frozen=True)
class _Plan:
    """The actions the decision leads to: their specs, the arguments code gives each, and those values as text."""

    specs: list[ToolSpec]
    args: list[dict[str, Any]]
    values: str
    own_medicines: bool


def _plan(state: AgentState, tools: ToolRegistry, first: str | None) -> _Plan:
    names = remaining_tools(state, tools) or ([first] if first else [])
    specs = [tools[n] for n in names if n in tools]
    args = [prefill(s, state) for s in specs]
    return _Plan(specs, args, " ".join(_values(a) for a in args),
                 any(wants_own_medicines(s, state) for s in specs))


#: "fluoroquinolones like cipro": a class named by its example (the example is the drug looked up).
_EXAMPLE_AFTER_RE = re.compile(r"^\s*[,(]?\s*(?:like|such as|e\.g\.?|eg|for example|including|especially)\b", re.I)
#: "her penicillin allergy": a drug that names an allergy.
_ALLERGY_AFTER_RE = re.compile(r"^\s*(?:allerg\w*|intoleran\w*|reaction)", re.I)
#: Record lists whose items are drugs: a question about her medications, allergies or immunisations is about the
#: drugs it names ("has he had his pneumococcal vaccine?": the vaccine is the item looked for).
_DRUG_LISTS = {"MedicationRequest", "AllergyIntolerance", "Immunization"}


def _drug_used(found: _Found, plan: _Plan, query: str) -> bool:
    names = [found.name, *DrugDictionary.find(found.text)]
    parts = [p for n in names if n for p in (n, *combination_parts(n))]
    if plan.own_medicines or any(p.lower() in plan.values for p in parts):
        return True
    after = query[found.start + len(found.text):]
    if _EXAMPLE_AFTER_RE.match(after):
        return True
    # A question about one item of her record ("what was the aspirin (<id>) prescribed for?", "what dose of
    # furosemide is she on?", "did we document her penicillin allergy?"): the drug is the item looked for.
    record_item = any(Role.CONNECTIONS in s.roles for s in plan.specs)
    drug_list = any(a.get("resource_type") in _DRUG_LISTS for a in plan.args)
    allergy = bool(_ALLERGY_AFTER_RE.match(after)) and any(s.record for s in plan.specs)
    return record_item or drug_list or allergy


def _concept_used(text: str, plan: _Plan) -> bool:
    if plan.own_medicines or any(s.record or Role.CHART in s.roles for s in plan.specs):
        return True
    topics = {str(a["topic"]) for a in plan.args if a.get("topic")}
    return any(pattern.search(text) for name, pattern in TOPIC_WORDS if name in topics)


def _in_keyword(found: _Found, plan: _Plan, query: str) -> bool:
    """True when ``found`` is part of a planned tool's own words ("renal" in "the renal dose of …")."""
    for spec in plan.specs:
        for keyword in spec.keywords:
            for match in re.finditer(rf"\b{re.escape(keyword)}\b", query, re.IGNORECASE):
                if match.start() <= found.start < match.end():
                    return True
    return False


def _used(found: _Found, plan: _Plan, state: AgentState) -> bool:
    """True when an argument of the planned actions takes ``found``."""
    text = found.text.lower()
    query = state.get("user_query", "")
    if found.kind == "place" and _NEAR_RE.search(query[:found.start]):
        # "open studies near Nairobi": a place to go to is a trial site's; a literature query's text does not use it.
        return any(Role.TRIALS in s.roles for s in plan.specs)
    if _squash(text) in _squash(plan.values) or _in_keyword(found, plan, query):
        return True
    if found.kind == "drug":
        return _drug_used(found, plan, state.get("user_query", ""))
    if found.kind == "patient":
        active = state.get("active_patient")
        own = bool(active) and bool(set(text.split()) & set(active["name"].lower().split())) if active else False
        return own and any("patient_id" in a for a in plan.args)
    if found.kind == "patient id":
        aliases = state["extracted_entities"].get("patient_aliases") or {}
        alias = aliases.get(text)
        # The id is used by the record id it stands for, or as written ("who is DG-1003?" searches DG-1003).
        return (bool(alias) and str(alias).lower() in plan.values) or any(
            written in plan.values for written, known in aliases.items() if known.lower() == text)
    if found.kind == "pronoun":
        return any(s.patient_search or "patient_id" in s.args_model.model_fields for s in plan.specs)
    if found.kind == "study word":
        return any(Role.LITERATURE in s.roles or Role.TRIALS in s.roles for s in plan.specs)
    if found.kind == "record concept":
        return _concept_used(found.text, plan)
    return False


def _status(found: _Found, plan: _Plan, state: AgentState, context: list[tuple[int, int]],
            affirmed: str) -> tuple[Status, str]:
    if _used(found, plan, state):
        return "used", ""
    if any(start <= found.start < end for start, end in context):
        return "set aside", "context sentence"
    if found.text.lower() not in affirmed:
        return "set aside", "negated"
    if found.kind == "pronoun":
        return "set aside", "the active patient"
    return "left over", ""


def account(state: AgentState, tools: ToolRegistry, first_tool: str | None) -> Accounting:
    """Every item of the message, accounted for against the actions a rule decided (``first_tool`` and the rest the
    task needs)."""
    query = state.get("user_query", "")
    plan = _plan(state, tools, first_tool)
    context = _context_spans(query, tools)
    affirmed = without_negations(query).lower()
    items = []
    for found in found_items(state):
        status, why = _status(found, plan, state, context, affirmed)
        items.append(Item(found.kind, found.text, status, why))
    return Accounting(tuple(items))
