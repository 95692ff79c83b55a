"""find_clinical_trials: ClinicalTrials.gov API v2 ``/studies`` with ``query.cond`` and a status filter.

The status is mapped from plain words ("recruiting", "enrolling", "completed"). Error bodies of this API
are plain text (400 for a bad query, 404 for an unknown id) and are classified by status, never shown.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from docgemma.tools.http import HttpClient, HttpError
from docgemma.tools.outcome import Source, ToolOutcome, failure, success
from docgemma.tools.registry import ToolContext

MAX_TRIALS = 5
FIELDS = "NCTId,BriefTitle,OverallStatus,Phase,Condition,LocationFacility"
STATUS_WORDS: dict[str, str] = {
    "recruiting": "RECRUITING,NOT_YET_RECRUITING", "enrolling": "RECRUITING,NOT_YET_RECRUITING",
    "open": "RECRUITING,NOT_YET_RECRUITING", "active": "RECRUITING,ACTIVE_NOT_RECRUITING,ENROLLING_BY_INVITATION",
    "ongoing": "RECRUITING,ACTIVE_NOT_RECRUITING,ENROLLING_BY_INVITATION", "not yet recruiting": "NOT_YET_RECRUITING",
    "completed": "COMPLETED", "finished": "COMPLETED", "terminated": "TERMINATED", "withdrawn": "WITHDRAWN",
    "suspended": "SUSPENDED",
}


def status_filter(words: str | None) -> str | None:
    """The API's ``filter.overallStatus`` for plain words; None means no filter (any status)."""
    if not words:
        return None
    text = words.strip().lower()
    if text in STATUS_WORDS:
        return STATUS_WORDS[text]
    return next((value for word, value in STATUS_WORDS.items() if word in text), None)


class Trials:
    """ClinicalTrials.gov client over the shared HTTP client."""

    def __init__(self, http: HttpClient, base_url: str) -> None:
        self.http = http
        self.url = f"{base_url}/studies"

    def search(self, condition: str, status: str | None) -> dict[str, Any]:
        """Top studies for ``condition``."""
        params: dict[str, Any] = {"query.cond": condition, "pageSize": MAX_TRIALS, "countTotal": "true",
                                  "fields": FIELDS, "format": "json"}
        statuses = status_filter(status)
        if statuses:
            params["filter.overallStatus"] = statuses
        body = self.http.get_json(self.url, params)
        if not isinstance(body, dict) or not isinstance(body.get("studies"), list):
            raise HttpError("invalid_response", "studies answer without a studies list")
        trials = []
        for study in body["studies"][:MAX_TRIALS]:
            section = study.get("protocolSection", {})
            ident = section.get("identificationModule", {})
            nct = ident.get("nctId", "")
            trials.append({
                "nct_id": nct, "title": ident.get("briefTitle", ""),
                "status": section.get("statusModule", {}).get("overallStatus", ""),
                "phases": section.get("designModule", {}).get("phases", []),
                "conditions": section.get("conditionsModule", {}).get("conditions", [])[:3],
                "locations": len(section.get("contactsLocationsModule", {}).get("locations", [])),
                "url": f"https://clinicaltrials.gov/study/{nct}",
            })
        return {"condition": condition, "status_filter": statuses or "any", "total": body.get("totalCount"),
                "results": trials}


def find_clinical_trials(trials: Trials, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Search trials; map HTTP failures to the error taxonomy."""
    try:
        data = trials.search(str(args.condition), args.status)  # type: ignore[attr-defined]
    except HttpError as exc:
        return failure(exc.error_type)
    sources = [Source(title=f"{t['nct_id']}: {t['title']}", url=t["url"]) for t in data["results"]]
    return success(data, sources)


def format_trials(data: dict[str, Any]) -> str:
    """One line per trial."""
    total = f" ({data['total']} in total)" if data.get("total") is not None else ""
    lines = [f"Trials for {data['condition']}, status {data['status_filter']}{total}:"]
    for t in data["results"]:
        phase = "/".join(p for p in t["phases"] if p != "NA") or "n/a"
        lines.append(f"- {t['nct_id']}: {t['title']} — {t['status'].lower().replace('_', ' ')}, phase {phase}, "
                     f"{t['locations']} site(s)")
    return "\n".join(lines)
