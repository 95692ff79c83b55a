"""What the tools' argument extractors share (each tool's own extractor lives in its ``tools/catalog/`` module):
the words that ask for a label, an interaction or a study, the clause split, the drugs of one clause, a drug
list, the patient. What the message states plainly is filled by code for TOOL_SELECT stage 2; the model is asked
only for the required fields still missing.

Every value here stands in the clinician's own words or in the deterministic entities. A write's dose or
frequency that the message does not state is left "not specified" rather than asked of the model: the
approval card shows it, so nothing invented reaches the record.
"""

from __future__ import annotations

import re
from typing import Any

from docgemma.clinical.entities import DrugDictionary, combination_parts
from docgemma.clinical.ingredients import resolve_local
from docgemma.tools.order_extract import NOT_SPECIFIED
from docgemma.tools.order_extract import REACTION_RE as REACTION_WORDS
from docgemma.tools.routing import Request

__all__ = ["NOT_SPECIFIED", "REACTION_WORDS"]
#: Words asking for a drug's label warnings, or for drugs together: the tools' task keywords, and the clause
#: whose drugs the extractor takes when a message names several.
SAFETY_WORDS = ("safety", "warning", "warnings", "boxed warning", "fda")
INTERACTION_WORDS = ("interaction", "interactions", "combining", "together with", "clash", "clashes", "combo")
#: Words of a clause that asks about a drug's label (its drugs are the ones looked up).
LABEL_WORDS = (*SAFETY_WORDS, "label", "labels", "labelling", "labeling", "package insert")
#: Words for a study: a literature search's, unless the message asks for studies that enrol patients
#: (``Role.TRIALS``).
STUDY_WORDS = ("studies", "study", "rct", "rcts")

#: Where a message splits into clauses ("check X, then Y").
CLAUSE_RE = re.compile(r"[,;]|\band then\b|\bthen\b")


#: Where a message splits into sentences: a full stop, "!" or "?" before a space (not after a title or "e.g."), a
#: semicolon or a line break. "4.2" has no space after its point.
SENTENCE_RE = re.compile(r"(?<![A-Za-z]\.[A-Za-z]\.)(?<!\b(?:dr|mr|ms|vs|no|st)\.)(?<!\bmrs\.)(?<!\b[A-Za-z]\.)(?<=[.!?])\s+"
                         r"|[;\n]\s*", re.IGNORECASE)


def sentences(query: str) -> list[str]:
    """The message's sentences (context sentences first, as a clinician writes them: "He's on X. Check Y.")."""
    return [s for s in SENTENCE_RE.split(query) if s.strip()]


def _named_in(text: str, drugs: list[str]) -> list[str]:
    return [d for d in DrugDictionary.find(text) if d in drugs]


def drugs_near(query: str, keywords: tuple[str, ...], drugs: list[str], *, whole_sentence: bool = False) -> list[str]:
    """The drugs of the request: those named in the sentence of ``query`` that holds one of ``keywords`` (the
    drugs of the other sentences are context: "He's on clopidogrel. Check interactions between …"), and within
    it, unless ``whole_sentence`` (a list spans its commas), the clause that holds the keyword ("check metformin
    safety, then lisinopril …"); all of them when no sentence does."""
    for sentence in sentences(query):
        if not says(sentence, keywords):
            continue
        in_sentence = _named_in(sentence, drugs)
        if not in_sentence:
            continue
        if whole_sentence:
            return in_sentence
        clause = next((near for c in CLAUSE_RE.split(sentence) if says(c, keywords) and (near := _named_in(c, drugs))),
                      None)
        return clause or in_sentence
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
        found = drugs_near(request.query, near, drugs, whole_sentence=True)
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


def says(text: str, keywords: tuple[str, ...]) -> bool:
    """True when ``text`` says one of ``keywords`` (whole word, any case)."""
    return any(re.search(rf"\b{re.escape(k)}\b", text, re.IGNORECASE) for k in keywords)


def patient_only(request: Request) -> dict[str, Any]:
    """``patient_id``: the id the message names, else the active patient's."""
    pid = request.patient_id
    return {"patient_id": pid} if pid else {}


#: "her other meds", "his current medications", "anything she's on", "whatever he is taking": the active patient's
#: own medicines, which the record gives (never the model).
OWN_MEDICINES_RE = re.compile(
    r"\b(?:her|his|their|(?:the|this|that)\s+patient'?s|pt'?s)\s+(?:other\s+|current\s+|regular\s+|usual\s+|existing\s+|home\s+|"
    r"active\s+)*(?:meds|medications?|medicines?|drugs|prescriptions|tablets|pills|(?:drug|med|medication)\s+list)\b"
    r"|\b(?:anything|what(?:ever)?|everything)\s+(?:else\s+)?(?:she|he|they)(?:'s|'re|\s+is|\s+are)\s+"
    r"(?:already\s+|currently\s+)?(?:on|taking)\b",
    re.IGNORECASE,
)


def asks_about_own_medicines(query: str) -> bool:
    """True when the message asks about the patient's own medicines ("her other meds", "anything he's on")."""
    return bool(OWN_MEDICINES_RE.search(query))
