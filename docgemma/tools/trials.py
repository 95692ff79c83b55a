"""find_clinical_trials: ClinicalTrials.gov API v2 ``/studies``, searched the way its own form is filled.

Each part of the request goes to its own parameter: the condition to ``query.cond``, the intervention to
``query.intr`` (Essie syntax: "belimumab OR voclosporin"), other words to ``query.term``, a place to
``query.locn`` — or, with a distance around a city whose coordinates are known, ``filter.geo`` — the status to
``filter.overallStatus`` and the phase and age group to ``filter.advanced`` (the API has no phase filter of its
own: ``AREA[Phase]PHASE3``). Each trial is shown with its conditions, interventions, phase, status and its sites
nearest the place asked about first.

Error bodies of this API are plain text (400 for a bad query, 404 for an unknown id) and are classified by
status, never shown.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from docgemma.tools import places
from docgemma.tools.http import HttpClient, HttpError
from docgemma.tools.outcome import Source, ToolOutcome, failure, success
from docgemma.tools.spec import ToolContext

MAX_TRIALS = 5
MAX_SITES = 3
FIELDS = ("NCTId,BriefTitle,OverallStatus,Phase,Condition,InterventionName,InterventionType,LocationFacility,"
          "LocationCity,LocationState,LocationCountry,LocationStatus,LocationGeoPoint")
STATUSES = frozenset({"RECRUITING", "NOT_YET_RECRUITING", "ACTIVE_NOT_RECRUITING", "ENROLLING_BY_INVITATION",
                      "COMPLETED", "TERMINATED", "WITHDRAWN", "SUSPENDED", "UNKNOWN"})
ONGOING = "RECRUITING,ACTIVE_NOT_RECRUITING,ENROLLING_BY_INVITATION"
#: Plain words → ``filter.overallStatus``. "Recruiting" means enrolling now: a trial not yet recruiting cannot
#: take a patient today.
STATUS_WORDS: dict[str, str] = {
    "not yet recruiting": "NOT_YET_RECRUITING", "recruiting": "RECRUITING", "enrolling": "RECRUITING",
    "open": "RECRUITING", "active": ONGOING, "ongoing": ONGOING, "completed": "COMPLETED", "finished": "COMPLETED",
    "terminated": "TERMINATED", "withdrawn": "WITHDRAWN", "suspended": "SUSPENDED",
}
AGE_GROUPS = {"child": "CHILD", "adult": "ADULT", "older adult": "OLDER_ADULT"}
_PHASE_PART = re.compile(r"\b(?:phase\s*)?(iv|i{1,3}|[0-4])\b", re.I)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}


def status_filter(words: str | None) -> str | None:
    """The API's ``filter.overallStatus`` for plain words or the API's own values; None means any status."""
    if not words:
        return None
    tokens = [t.strip() for t in words.split(",") if t.strip()]
    if tokens and all(t.upper().replace(" ", "_") in STATUSES for t in tokens):
        return ",".join(t.upper().replace(" ", "_") for t in tokens)
    text = words.strip().lower()
    if text in STATUS_WORDS:
        return STATUS_WORDS[text]
    return next((value for word, value in STATUS_WORDS.items() if word in text), None)


def phase_filter(words: str | None) -> str | None:
    """``AREA[Phase]…`` for "3", "phase II", "2/3" (a phase 2/3 trial: both), "2 or 3" (either), "early 1"."""
    if not words:
        return None
    if re.search(r"\bearly\b", words, re.I):
        return "AREA[Phase]EARLY_PHASE1"
    found = [_ROMAN.get(m.group(1).lower(), m.group(1)) for m in _PHASE_PART.finditer(words)]
    phases = [f"PHASE{n}" for n in dict.fromkeys(found) if n in "1234"]
    if not phases:
        return None
    if len(phases) == 1:
        return f"AREA[Phase]{phases[0]}"
    if re.search(r"\bor\b|,", words, re.I):
        return "AREA[Phase](" + " OR ".join(phases) + ")"
    return " AND ".join(f"AREA[Phase]{p}" for p in phases)


class Trials:
    """ClinicalTrials.gov client over the shared HTTP client."""

    def __init__(self, http: HttpClient, base_url: str) -> None:
        self.http = http
        self.url = f"{base_url}/studies"

    def params(self, args: BaseModel) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the request's parameters, what was searched for, in words) for ``args``."""
        a = args.model_dump()
        params: dict[str, Any] = {"query.cond": a["condition"]}
        searched: dict[str, Any] = {"condition": a["condition"]}
        for field, param in (("intervention", "query.intr"), ("other_terms", "query.term")):
            if a.get(field):
                params[param] = a[field]
                searched[field] = a[field]
        place = places.lookup(a["location"]) if a.get("location") else None
        if a.get("location"):
            searched["location"] = a["location"]
            if a.get("distance_km") and place and place.point:
                lat, lon = place.point
                params["filter.geo"] = f"distance({lat},{lon},{a['distance_km']}km)"
                searched["distance_km"] = a["distance_km"]
            else:
                params["query.locn"] = a["location"]
                if a.get("distance_km"):
                    searched["distance_not_applied"] = (f"no coordinates known for {a['location']}: sites matched by "
                                                        "place name, at any distance")
        statuses = status_filter(a.get("status"))
        if statuses:
            params["filter.overallStatus"] = statuses
        elif a.get("status"):
            searched["status_not_applied"] = f"status '{a['status']}' not understood: any status"
        advanced = [f for f in (phase_filter(a.get("phase")),
                                f"AREA[StdAge]{AGE_GROUPS[a['age_group']]}" if a.get("age_group") else None) if f]
        if a.get("phase") and not phase_filter(a.get("phase")):
            searched["phase_not_applied"] = f"phase '{a['phase']}' not understood: any phase"
        if advanced:
            params["filter.advanced"] = " AND ".join(advanced)
        searched.update({k: a[k] for k in ("phase", "age_group") if a.get(k)})
        searched["status_filter"] = statuses or "any"
        params.update({"pageSize": MAX_TRIALS, "countTotal": "true", "fields": FIELDS, "format": "json"})
        return params, searched

    def search(self, args: BaseModel) -> dict[str, Any]:
        """Top studies for ``args``, each with its nearest sites."""
        params, searched = self.params(args)
        body = self.http.get_json(self.url, params)
        if not isinstance(body, dict) or not isinstance(body.get("studies"), list):
            raise HttpError("invalid_response", "studies answer without a studies list")
        location = searched.get("location")
        place = places.lookup(location) if location else None
        trials = [_trial(study, location, place) for study in body["studies"][:MAX_TRIALS]]
        return {**searched, "total": body.get("totalCount"), "results": trials}


def _trial(study: dict[str, Any], location: str | None, place: places.Place | None) -> dict[str, Any]:
    section = study.get("protocolSection", {})
    ident = section.get("identificationModule", {})
    nct = ident.get("nctId", "")
    interventions = section.get("armsInterventionsModule", {}).get("interventions", [])
    sites = section.get("contactsLocationsModule", {}).get("locations", [])
    return {
        "nct_id": nct, "title": ident.get("briefTitle", ""),
        "status": section.get("statusModule", {}).get("overallStatus", ""),
        "phases": section.get("designModule", {}).get("phases", []),
        "conditions": section.get("conditionsModule", {}).get("conditions", [])[:3],
        "interventions": list(dict.fromkeys(str(i.get("name", "")) for i in interventions if i.get("name")))[:3],
        "sites": nearest_sites(sites, location, place),
        "site_count": len(sites),
        "url": f"https://clinicaltrials.gov/study/{quote(str(nct), safe='')}",
    }


def nearest_sites(sites: list[dict[str, Any]], location: str | None, place: places.Place | None) -> list[dict[str, Any]]:
    """Up to :data:`MAX_SITES` sites: those in the named place first, then by distance from it when its
    coordinates are known; the registry's order otherwise."""
    wanted = (location or "").lower()

    def in_place(site: dict[str, Any]) -> bool:
        return bool(wanted) and any(wanted in str(site.get(k, "")).lower() for k in ("city", "state", "country", "facility"))

    def km(site: dict[str, Any]) -> float | None:
        point = site.get("geoPoint") or {}
        if place is None or place.point is None or "lat" not in point or "lon" not in point:
            return None
        return places.distance_km(place.point, (float(point["lat"]), float(point["lon"])))

    ranked = []
    for order, site in enumerate(sites):
        distance = km(site)
        ranked.append(((not in_place(site), distance if distance is not None else float("inf"), order), site, distance))
    ranked.sort(key=lambda item: item[0])
    out = []
    for _key, site, distance in ranked[:MAX_SITES]:
        where = ", ".join(str(site[k]) for k in ("city", "country") if site.get(k))
        entry: dict[str, Any] = {"facility": site.get("facility", ""), "where": where}
        if site.get("status"):
            entry["status"] = str(site["status"])
        if distance is not None:
            entry["distance_km"] = round(distance)
        out.append(entry)
    return out


def find_clinical_trials(trials: Trials, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Search trials; map HTTP failures to the error taxonomy."""
    try:
        data = trials.search(args)
    except HttpError as exc:
        return failure(exc.error_type)
    sources = [Source(title=f"{t['nct_id']}: {t['title']}", url=t["url"]) for t in data["results"]]
    return success(data, sources)


def _words(value: str) -> str:
    return value.lower().replace("_", " ")


def searched_line(data: dict[str, Any]) -> str:
    """What was searched for, as the clinician would say it."""
    parts = [f"condition {data['condition']}"]
    if data.get("intervention"):
        parts.append(f"intervention {data['intervention']}")
    if data.get("other_terms"):
        parts.append(f"also matching {data['other_terms']}")
    if data.get("location"):
        within = f"within {data['distance_km']} km of " if data.get("distance_km") else ""
        parts.append(f"sites {within}{data['location']}")
    if data.get("phase"):
        parts.append(f"phase {data['phase']}")
    if data.get("age_group"):
        parts.append(f"{data['age_group']} participants")
    status = data.get("status_filter", "any")
    parts.append("status " + (", ".join(_words(s) for s in status.split(",")) if status != "any" else "any"))
    return "; ".join(parts)


def format_trials(data: dict[str, Any]) -> str:
    """The search, then per trial: id, title, status, phase, conditions, interventions and the nearest sites."""
    total = f" — {data['total']} found" if data.get("total") is not None else ""
    lines = [f"Trials searched: {searched_line(data)}{total}."]
    for note in ("distance_not_applied", "status_not_applied", "phase_not_applied"):
        if data.get(note):
            lines.append(f"Note: {data[note]}.")
    if not data["results"]:
        lines.append("No trial matched.")
    for t in data["results"]:
        phase = "/".join(p.replace("EARLY_PHASE", "early phase ").replace("PHASE", "") for p in t["phases"] if p != "NA")
        lines.append(f"- {t['nct_id']}: {t['title']} — {_words(t['status'])}, phase {phase or 'n/a'}")
        if t.get("conditions"):
            lines.append(f"  Conditions: {', '.join(t['conditions'])}")
        if t.get("interventions"):
            lines.append(f"  Interventions: {', '.join(t['interventions'])}")
        sites = t.get("sites", [])
        if sites:
            shown = []
            for s in sites:
                extra = ", ".join(x for x in (f"{s['distance_km']} km" if "distance_km" in s else "",
                                              _words(s["status"]) if s.get("status") else "") if x)
                shown.append(f"{s['facility'] or 'site'} ({s['where']}{'; ' + extra if extra else ''})")
            more = f" (+{t['site_count'] - len(sites)} more)" if t.get("site_count", 0) > len(sites) else ""
            lines.append(f"  Sites: {'; '.join(shown)}{more}")
        elif "site_count" in t:
            lines.append("  Sites: none listed")
    return "\n".join(lines)
