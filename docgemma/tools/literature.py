"""search_medical_literature: PubMed through NCBI E-utilities (esearch + esummary), Europe PMC second.

The search is built as a librarian builds it: the concepts as the query, the study types asked for as
publication type filters (PubMed ``"Meta-Analysis"[pt]``; Europe PMC ``PUB_TYPE:"Meta-Analysis"``), a date range
(PubMed ``mindate``/``maxdate`` on the publication date; Europe PMC ``FIRST_PDATE:[… TO …]``) and, for "recent"
or "latest", newest first (PubMed ``sort=pub_date``; Europe PMC ``sort=P_PDATE_D desc``). Each article is shown
with its year, journal and study type.

NCBI can answer HTTP 200 with an error body (``{"error": "API rate limit exceeded"}``), and Europe PMC
can answer HTTP 200 without ``hitCount``: both are failures, never "zero results". Europe PMC is asked
when PubMed fails or finds nothing, with the same filters in its own syntax.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from docgemma.tools.http import HttpClient, HttpError
from docgemma.tools.literature_query import this_year
from docgemma.tools.outcome import Source, ToolOutcome, failure, success
from docgemma.tools.spec import ToolContext

MAX_ARTICLES = 5
TOOL_NAME = "docgemma-connect"
#: Publication types → PubMed's ``[pt]`` tags and Europe PMC's ``PUB_TYPE`` values (either matches).
PUBMED_TYPES: dict[str, tuple[str, ...]] = {
    "meta-analysis": ("Meta-Analysis",), "systematic review": ("Systematic Review",),
    "randomized controlled trial": ("Randomized Controlled Trial",),
    "guideline": ("Guideline", "Practice Guideline"), "review": ("Review",),
}
#: The most telling type an article carries, strongest design first (a meta-analysis is also a review).
STUDY_TYPES: tuple[tuple[str, str], ...] = (
    ("meta-analysis", "meta-analysis"), ("systematic review", "systematic review"),
    ("randomized controlled trial", "randomised controlled trial"), ("practice guideline", "guideline"),
    ("guideline", "guideline"), ("clinical trial", "clinical trial"), ("observational study", "observational study"),
    ("comparative study", "comparative study"), ("multicenter study", "multicentre study"), ("review", "review"),
    ("case reports", "case report"), ("editorial", "editorial"), ("letter", "letter"), ("comment", "comment"),
)


@dataclass(frozen=True)
class Search:
    """One literature search: the concepts and the filters."""

    query: str
    publication_types: tuple[str, ...] = ()
    since_year: int | None = None
    newest_first: bool = False

    @classmethod
    def of(cls, args: BaseModel) -> Search:
        """The search ``args`` ask for."""
        a = args.model_dump()
        return cls(str(a["query"]), tuple(a.get("publication_types") or ()), a.get("since_year"),
                   bool(a.get("newest_first")))

    def pubmed_term(self) -> str:
        """The esearch ``term``: the concepts, AND the publication types (any of them)."""
        tags = [f'"{tag}"[pt]' for kind in self.publication_types for tag in PUBMED_TYPES[kind]]
        if not tags:
            return self.query
        return f"({self.query}) AND ({' OR '.join(tags)})"

    def pubmed_params(self) -> dict[str, Any]:
        """esearch parameters besides the term: date range on the publication date, sort order."""
        params: dict[str, Any] = {"sort": "pub_date" if self.newest_first else "relevance"}
        if self.since_year:
            params.update({"datetype": "pdat", "mindate": str(self.since_year), "maxdate": str(this_year())})
        return params

    def europe_pmc_query(self) -> str:
        """The same search in Europe PMC's syntax."""
        parts = [f"({self.query})"]
        types = [f'PUB_TYPE:"{tag}"' for kind in self.publication_types for tag in PUBMED_TYPES[kind]]
        if types:
            parts.append(f"({' OR '.join(types)})")
        if self.since_year:
            parts.append(f"FIRST_PDATE:[{self.since_year}-01-01 TO {this_year()}-12-31]")
        return " AND ".join(parts) if len(parts) > 1 else self.query

    def describe(self) -> dict[str, Any]:
        """The filters, for the result."""
        out: dict[str, Any] = {}
        if self.publication_types:
            out["publication_types"] = list(self.publication_types)
        if self.since_year:
            out["years"] = f"{self.since_year}-{this_year()}"
        if self.newest_first:
            out["sorted"] = "newest first"
        return out


def study_type(types: list[str]) -> str:
    """The most telling publication type of an article ("" when it has none beyond "journal article")."""
    lowered = {t.strip().lower() for t in types}
    return next((label for key, label in STUDY_TYPES if key in lowered), "")


class Literature:
    """PubMed and Europe PMC clients over the shared HTTP client."""

    def __init__(self, http: HttpClient, eutils_url: str, europepmc_url: str,
                 api_key: str | None = None, email: str | None = None) -> None:
        self.http = http
        self.eutils = eutils_url
        self.europepmc = europepmc_url
        self.ncbi_params: dict[str, str] = {"tool": TOOL_NAME}
        if api_key:
            self.ncbi_params["api_key"] = api_key
        if email:
            self.ncbi_params["email"] = email

    def _ncbi(self, endpoint: str, params: dict[str, Any]) -> dict[str, Any]:
        body = self.http.get_json(f"{self.eutils}/{endpoint}", {**params, **self.ncbi_params, "retmode": "json"})
        if not isinstance(body, dict):
            raise HttpError("invalid_response", f"{endpoint} answer is not an object")
        error = body.get("error") or (body.get("esearchresult") or {}).get("ERROR")
        if error:
            if "rate limit" in str(error).lower():
                raise HttpError("rate_limit", f"{endpoint} error body")
            raise HttpError("invalid_response", f"{endpoint} error body")
        return body

    def pubmed(self, search: Search | str) -> tuple[list[dict[str, Any]], int | None]:
        """Articles from PubMed (best match or newest first) and how many matched."""
        search = Search(search) if isinstance(search, str) else search
        found = self._ncbi("esearch.fcgi", {"db": "pubmed", "term": search.pubmed_term(), "retmax": MAX_ARTICLES,
                                            **search.pubmed_params()})
        result = found.get("esearchresult")
        if not isinstance(result, dict) or not isinstance(result.get("idlist"), list):
            raise HttpError("invalid_response", "esearch answer has no idlist")
        total = int(result["count"]) if str(result.get("count", "")).isdigit() else None
        ids = [str(i) for i in result["idlist"]][:MAX_ARTICLES]
        if not ids:
            return [], total
        summary = self._ncbi("esummary.fcgi", {"db": "pubmed", "id": ",".join(ids)}).get("result")
        if not isinstance(summary, dict):
            raise HttpError("invalid_response", "esummary answer has no result")
        articles = []
        for pmid in ids:
            doc = summary.get(pmid)
            if not isinstance(doc, dict) or doc.get("error"):
                continue
            doi = next((a["value"] for a in doc.get("articleids", []) if a.get("idtype") == "doi"), None)
            year = re.match(r"\d{4}", str(doc.get("pubdate", "")))
            articles.append({
                "title": str(doc.get("title", "")).strip(), "journal": doc.get("fulljournalname") or doc.get("source", ""),
                "year": year.group(0) if year else "", "study_type": study_type(list(doc.get("pubtype") or [])),
                "pmid": pmid, "doi": doi, "url": f"https://pubmed.ncbi.nlm.nih.gov/{quote(str(pmid), safe='')}/",
            })
        return articles, total

    def europe_pmc(self, search: Search | str) -> tuple[list[dict[str, Any]], int | None]:
        """Articles from Europe PMC (``hitCount`` must be present) and how many matched."""
        search = Search(search) if isinstance(search, str) else search
        params: dict[str, Any] = {"query": search.europe_pmc_query(), "format": "json", "pageSize": MAX_ARTICLES,
                                  "resultType": "lite"}
        if search.newest_first:
            params["sort"] = "P_PDATE_D desc"
        body = self.http.get_json(f"{self.europepmc}/search", params)
        if not isinstance(body, dict) or "hitCount" not in body:
            raise HttpError("invalid_response", "Europe PMC answer without hitCount")
        results = (body.get("resultList") or {}).get("result") or []
        articles = []
        for doc in results[:MAX_ARTICLES]:
            pmid, doi = doc.get("pmid"), doc.get("doi")
            # Links only to the sources' own sites (not a DOI resolver, which sends the browser anywhere).
            if pmid:
                url = f"https://pubmed.ncbi.nlm.nih.gov/{quote(str(pmid), safe='')}/"
            else:
                url = (f"https://europepmc.org/article/{quote(str(doc.get('source') or 'MED'), safe='')}/"
                       f"{quote(str(doc.get('id', '')), safe='')}")
            kinds = [t for t in str(doc.get("pubType", "")).split(";") if t.strip()]
            articles.append({"title": str(doc.get("title", "")).strip(), "journal": doc.get("journalTitle", ""),
                             "year": str(doc.get("pubYear", "")), "study_type": study_type(kinds),
                             "pmid": pmid, "doi": doi, "url": url})
        hits = str(body.get("hitCount"))
        return articles, int(hits) if hits.isdigit() else None


def search_medical_literature(lit: Literature, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """PubMed first; Europe PMC when PubMed fails or finds nothing. Both failing → PubMed's error type."""
    search = Search.of(args)
    pubmed_error: HttpError | None = None
    try:
        articles, total = lit.pubmed(search)
        database = "PubMed"
    except HttpError as exc:
        pubmed_error, articles, total = exc, [], None
    if not articles:
        try:
            articles, total = lit.europe_pmc(search)
            database = "Europe PMC"
        except HttpError as exc:
            return failure((pubmed_error or exc).error_type)
    sources = [Source(title=f"{a['title']} ({a['journal']}, {a['year']})", url=a["url"]) for a in articles]
    return success({"query": search.query, **search.describe(), "database": database, "total": total,
                    "results": articles}, sources)


def format_articles(data: dict[str, Any]) -> str:
    """The search (database, concepts, filters), then one line per article: title, journal, year, study type, id."""
    filters = []
    if data.get("publication_types"):
        filters.append("types: " + ", ".join(data["publication_types"]))
    if data.get("years"):
        filters.append(f"published {data['years'].replace('-', '–')}")
    if data.get("sorted"):
        filters.append(str(data["sorted"]))
    found = f" — {data['total']} found" if data.get("total") is not None else ""
    where = data.get("database", "")
    lines = [f"{where + ' search' if where else 'Search'}: {data['query']}"
             f"{' (' + '; '.join(filters) + ')' if filters else ''}{found}"]
    if not data["results"]:
        lines.append("No article matched.")
    for a in data["results"]:
        ident = f"PMID {a['pmid']}" if a.get("pmid") else (f"DOI {a['doi']}" if a.get("doi") else "")
        kind = f" — {a['study_type']}" if a.get("study_type") else ""
        lines.append(f"- {a['title']} — {a['journal']}, {a['year']}{kind}. {ident}".rstrip())
    return "\n".join(lines)
