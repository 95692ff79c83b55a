"""Markup helpers every part of the page uses: text shown as text (HTML escaped, no links, no remote images),
source links only to the tools' own hosts, record headings as bold lines, clipped details, and who a write is
for."""

from __future__ import annotations

import html
import re
from urllib.parse import quote, urlsplit

from docgemma.workspace import PatientCard

#: Backslashes and brackets: no Markdown link or image (``[x](…)``, ``![x](…)``, ``[x]: …``) can open in text.
_LINK_MD = re.compile(r"([\\\[\]])")
#: What the page's Markdown would turn into a link by itself (GFM autolinks): ``https://…``, ``www.…``.
_AUTOLINK = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]*:/+|www\.)")
#: The hosts the tools cite (openFDA/DailyMed, PubMed/NCBI, Europe PMC, ClinicalTrials.gov): the only links
#: the page makes from a tool's value.
SOURCE_HOSTS = frozenset({
    "dailymed.nlm.nih.gov", "open.fda.gov", "www.fda.gov", "fda.gov", "api.fda.gov",
    "pubmed.ncbi.nlm.nih.gov", "www.ncbi.nlm.nih.gov", "ncbi.nlm.nih.gov",
    "europepmc.org", "www.europepmc.org", "www.ebi.ac.uk",
    "clinicaltrials.gov", "www.clinicaltrials.gov",
})
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
#: Characters of a step's detail shown in the timeline panel: room for a prescription's arguments.
DETAIL_LIMIT = 300


def escape(text: str) -> str:
    """Show text as text: HTML escaped, Markdown link and image syntax defused (no links, no remote images),
    bare URLs left unlinked (a tool's or the record's text chooses no link target)."""
    text = _LINK_MD.sub(r"\\\1", html.escape(text, quote=False))
    return _AUTOLINK.sub(lambda m: m.group(0).replace("/", "&#47;").replace(".", "&#46;"), text)


def safe_source_url(url: object) -> str | None:
    """``url`` re-encoded for a Markdown link when it is https on one of :data:`SOURCE_HOSTS` (no user, no
    port but 443); None otherwise. Path and query are percent-encoded again, so no character of a tool's value
    (``"``, ``<``, ``)``, ``?``, ``://``) can end the link, open markup or name another place."""
    try:
        parts = urlsplit(str(url).strip())
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme != "https" or host not in SOURCE_HOSTS or port not in (None, 443) or parts.netloc.lower() != host:
        return None
    path = quote(parts.path or "/", safe="/-._~%")
    query = quote(parts.query, safe="=&-._~%")
    return f"https://{host}{path}" + (f"?{query}" if query else "")


def source_link(title: str, url: object) -> str:
    """A source as a Markdown link when its URL is one of the tools' own (:func:`safe_source_url`); as plain
    text otherwise."""
    safe = safe_source_url(url)
    return f"[{escape(title)}]({safe})" if safe else escape(title)


def demote_headings(text: str) -> str:
    """Markdown headings as bold lines: in the chat a record's ``## Safety`` rendered as a page-size title. Each
    is a paragraph of its own: right after a list, a bare bold line became part of the list's last item."""
    return _HEADING.sub(r"\n**\1**\n", text)


def clip(text: str, limit: int = DETAIL_LIMIT) -> str:
    """At most ``limit`` characters, with an ellipsis when cut (a cut argument list must not look complete)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def patient_header(patient: PatientCard | None) -> str:
    """Who the write is for: name, birth date, sex, allergies, active medications (a clinician knows a patient by
    name and birth date; the record id stays in the card's data, off the page)."""
    if not patient:
        return ""
    allergies = "; ".join(escape(a) for a in patient.get("allergies", [])) or "none recorded"
    meds = patient.get("medications", [])
    listed = f": {'; '.join(escape(m) for m in meds)}" if meds else ""
    more = " …" if patient.get("active_medications", 0) > len(meds) else ""
    return (f"**Patient:** {escape(str(patient.get('name', '?')))} · born {escape(str(patient.get('birth_date', '?')))} · "
            f"{escape(str(patient.get('gender', '?')))}  \n**Allergies:** {allergies}  \n"
            f"**Active medications ({patient.get('active_medications', 0)})**{listed}{more}\n\n")
