"""A literature request read the way a medical librarian reads it: the concepts to search for, the study types
asked for (publication type filters, not words in the query) and how recent the articles must be.

"recent meta-analyses on SGLT2 inhibitors in heart failure" is the concepts "SGLT2 inhibitors in heart failure",
the type meta-analysis, and the last five years newest first (PubMed's own "5 years" filter): sent as one
sentence, "recent" and "meta-analyses" become words every article must contain. Words that only qualify the
request ("optimal", "protocols", "expected", "latest") are left out; the clinical terms stay as written, so
PubMed's automatic term mapping can find their MeSH headings.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from docgemma.clinical.entities import DrugDictionary

#: Study-type words → the publication type (``args.PublicationType``).
PUBLICATION_TYPES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bmeta[- ]?analy(?:sis|ses|tic)\b", re.I), "meta-analysis"),
    (re.compile(r"\bsystematic(?:\s+literature)?\s+reviews?\b", re.I), "systematic review"),
    (re.compile(r"\b(?:rcts?|randomi[sz]ed(?:\s+controlled)?(?:\s+clinical)?\s+trials?|randomi[sz]ed\s+studies|"
                r"controlled\s+trials?)\b", re.I), "randomized controlled trial"),
    (re.compile(r"\b(?:(?:clinical\s+)?(?:practice\s+)?guidelines?|consensus\s+statements?|"
                r"(?:who|nice)\s+recommendations)\b", re.I), "guideline"),
    (re.compile(r"\b(?:narrative\s+)?reviews?(?:\s+articles?)?\b", re.I), "review"),
)
#: Recency words: the last :data:`RECENT_YEARS` years, newest first.
RECENT_YEARS = 5
RECENT_RE = re.compile(r"\b(?:most\s+recent|recent(?:ly)?|latest|newest|current|up[- ]to[- ]date|updated?)\b", re.I)
THIS_YEAR_RE = re.compile(r"\b(?:this|the current)\s+year\b|\bpublished\s+this\s+year\b", re.I)
LAST_YEARS_RE = re.compile(r"\b(?:in\s+)?(?:the\s+)?(?:last|past)\s+(?P<n>\d{1,2}|two|three|four|five|ten)\s+years?\b",
                           re.I)
SINCE_RE = re.compile(r"\b(?:since|after|from)\s+(?P<year>(?:19|20)\d{2})\b", re.I)
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "ten": 10}
#: The words that introduce the topic ("studies on …", "evidence for …").
TOPIC_RE = re.compile(
    r"\b(?:studies|study|papers?|articles?|research|evidence|literature|pubmed|publications?|data|trials?|rcts?|"
    r"reviews?|meta-analy(?:sis|ses)|guidelines?|recommendations)\s+"
    r"(?:on|about|for|regarding|of|in|into|comparing|supporting|looking at|evaluating|that|whether)\s+"
    r"(?P<topic>.+?)\s*[?.!]*$",
    re.I)
#: "What does PubMed say about …", "what the literature shows on …": the topic follows the verb, not a source word
#: (the whole question was sent as the search, and shown as the step's search terms).
SAYS_RE = re.compile(r"\b(?:says?|said|shows?|tells?(?:\s+us)?|reports?|found)\s+(?:about|on|regarding|for)\s+"
                     r"(?P<topic>.+?)\s*[?.!]*$", re.I)
#: Words that qualify the request rather than name a concept.
FILLER_RE = re.compile(
    r"\b(?:optimal|optimum|best|ideal|protocols?|expected|timelines?|recent(?:ly)?|latest|newest|current|"
    r"up[- ]to[- ]date|updated|evidence|studies|study|literature|research|papers?|articles?|publications?|"
    r"published|any|some|please|pls|versus|vs\.?)\b", re.I)
_LEAD_RE = re.compile(
    r"^(?:(?:please|pls|can you|could you|find|search|look(?:\s+up)?|show(?:\s+me)?|get|give\s+me|list|"
    r"pull(?:\s+up)?|what(?:'s| is| are)|is there|are there|do we have|i need|i want|summari[sz]e|pubmed|"
    r"europe\s*pmc|medline)\b[\s:,]*)+", re.I)
_EDGE_WORDS = re.compile(r"^(?:(?:on|for|about|of|in|and|or|with|to|regarding|known|the|a|an)\s+)+|(?:\s+(?:on|for|about|of|in|"
                         r"and|or|with|to))+$", re.I)


def this_year() -> int:
    """The current year (a function so that a date range is computed when the request is made)."""
    return date.today().year


def publication_types(text: str) -> list[str]:
    """The study types the message asks for, in a fixed order; a systematic review is not also a plain review."""
    found: list[str] = []
    rest = text
    for pattern, kind in PUBLICATION_TYPES:
        if pattern.search(rest):
            found.append(kind)
            rest = pattern.sub(" ", rest)
    return found


def recency(text: str) -> dict[str, Any]:
    """``since_year`` and ``newest_first`` for "recent", "latest", "this year", "last 3 years", "since 2019"."""
    year = this_year()
    if THIS_YEAR_RE.search(text):
        return {"since_year": year, "newest_first": True}
    last = LAST_YEARS_RE.search(text)
    if last:
        n = last.group("n").lower()
        return {"since_year": year - (int(n) if n.isdigit() else _NUMBERS[n]), "newest_first": True}
    since = SINCE_RE.search(text)
    if since:
        return {"since_year": int(since.group("year"))}
    if RECENT_RE.search(text):
        return {"since_year": year - RECENT_YEARS, "newest_first": True}
    return {}


def concepts(text: str) -> str:
    """The concept words of ``text``: study-type, recency and filler words removed, clinical terms as written."""
    for pattern, _kind in PUBLICATION_TYPES:
        text = pattern.sub(" ", text)
    for pattern in (THIS_YEAR_RE, LAST_YEARS_RE, SINCE_RE, FILLER_RE):
        text = pattern.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip(" ,;:-?.!'\"")
    previous = None
    while previous != text:
        previous = text
        text = _EDGE_WORDS.sub("", text).strip(" ,;:-?.!'\"")
    return text


def parse(query: str) -> dict[str, Any]:
    """query / publication_types / since_year / newest_first read off the message."""
    clause = _literature_clause(query)
    found = TOPIC_RE.search(clause) or SAYS_RE.search(clause)
    topic = found.group("topic") if found else _LEAD_RE.sub("", clause)
    # Study-type and recency words may stand before the topic ("recent meta-analyses on …").
    out: dict[str, Any] = {}
    text = concepts(_PRONOUN_RE.sub(lambda m: _the_drug(query) or m.group(0), topic))
    if len(text) >= 3:
        out["query"] = text[:110].rsplit(" ", 1)[0] if len(text) > 110 else text
    kinds = publication_types(clause)
    if kinds:
        out["publication_types"] = kinds[:3]
    out.update(recency(clause))
    return out


_CLAUSE_RE = re.compile(r"[;]|,\s*(?:and\s+)?(?=(?:then\s+)?(?:check|find|pull|show|search|look|get|prescribe|record|"
                        r"document|add|save)\b)|\s+and\s+(?=(?:then\s+)?(?:check|find|pull|show|search|look|get|"
                        r"prescribe|record|document|add|save)\b)", re.I)
_LITERATURE_WORDS = re.compile(r"\b(?:studies|study|papers?|articles?|research|evidence|literature|pubmed|publications?|"
                               r"rcts?|reviews?|meta-analy\w*|guidelines?|trials?)\b", re.I)


_PRONOUN_RE = re.compile(r"\b(?:its|it|this drug|the drug)\b", re.I)


def _the_drug(query: str) -> str | None:
    """The one drug the whole message names ("… dofetilide and find studies on its use in AF")."""
    drugs = DrugDictionary.find(query)
    return drugs[0] if len(drugs) == 1 else None


def _literature_clause(query: str) -> str:
    """The part of a multi-request message that asks for literature (the whole message otherwise)."""
    clauses = [c.strip() for c in _CLAUSE_RE.split(query) if c and c.strip()]
    return next((c for c in clauses if _LITERATURE_WORDS.search(c)), query.strip())
