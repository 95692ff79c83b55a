"""search_medical_literature: PubMed through NCBI E-utilities (esearch + esummary), Europe PMC second.

NCBI can answer HTTP 200 with an error body (``{"error": "API rate limit exceeded"}``), and Europe PMC
can answer HTTP 200 without ``hitCount``: both are failures, never "zero results". Europe PMC is asked
when PubMed fails or finds nothing.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from docgemma.tools.http import HttpClient, HttpError
from docgemma.tools.outcome import Source, ToolOutcome, failure, success
from docgemma.tools.registry import ToolContext

MAX_ARTICLES = 5
TOOL_NAME = "docgemma-connect"


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

    def pubmed(self, query: str) -> list[dict[str, Any]]:
        """Articles from PubMed, best match first."""
        found = self._ncbi("esearch.fcgi", {"db": "pubmed", "term": query, "retmax": MAX_ARTICLES, "sort": "relevance"})
        result = found.get("esearchresult")
        if not isinstance(result, dict) or not isinstance(result.get("idlist"), list):
            raise HttpError("invalid_response", "esearch answer has no idlist")
        ids = [str(i) for i in result["idlist"]][:MAX_ARTICLES]
        if not ids:
            return []
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
                "year": year.group(0) if year else "", "pmid": pmid, "doi": doi,
                "url": f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
            })
        return articles

    def europe_pmc(self, query: str) -> list[dict[str, Any]]:
        """Articles from Europe PMC (``hitCount`` must be present)."""
        body = self.http.get_json(f"{self.europepmc}/search",
                                  {"query": query, "format": "json", "pageSize": MAX_ARTICLES, "resultType": "lite"})
        if not isinstance(body, dict) or "hitCount" not in body:
            raise HttpError("invalid_response", "Europe PMC answer without hitCount")
        results = (body.get("resultList") or {}).get("result") or []
        articles = []
        for doc in results[:MAX_ARTICLES]:
            pmid, doi = doc.get("pmid"), doc.get("doi")
            if pmid:
                url = f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
            elif doi:
                url = f"https://doi.org/{doi}"
            else:
                url = f"https://europepmc.org/article/{doc.get('source', 'MED')}/{doc.get('id', '')}"
            articles.append({"title": str(doc.get("title", "")).strip(), "journal": doc.get("journalTitle", ""),
                             "year": str(doc.get("pubYear", "")), "pmid": pmid, "doi": doi, "url": url})
        return articles


def search_medical_literature(lit: Literature, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """PubMed first; Europe PMC when PubMed fails or finds nothing. Both failing → PubMed's error type."""
    query = str(args.query)  # type: ignore[attr-defined]
    pubmed_error: HttpError | None = None
    try:
        articles = lit.pubmed(query)
        database = "PubMed"
    except HttpError as exc:
        pubmed_error, articles = exc, []
    if not articles:
        try:
            articles = lit.europe_pmc(query)
            database = "Europe PMC"
        except HttpError as exc:
            return failure((pubmed_error or exc).error_type)
    sources = [Source(title=f"{a['title']} ({a['journal']}, {a['year']})", url=a["url"]) for a in articles]
    return success({"query": query, "database": database, "results": articles}, sources)


def format_articles(data: dict[str, Any]) -> str:
    """One line per article: title, journal, year, identifiers."""
    lines = [f"Query: {data['query']}"]
    for a in data["results"]:
        ident = f"PMID {a['pmid']}" if a.get("pmid") else (f"DOI {a['doi']}" if a.get("doi") else "")
        lines.append(f"- {a['title']} — {a['journal']}, {a['year']}. {ident}".rstrip())
    return "\n".join(lines)
