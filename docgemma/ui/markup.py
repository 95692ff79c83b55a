"""Markup helpers every part of the page uses: text shown as text (HTML escaped, no remote images), record
headings as bold lines, clipped details, and who a write is for."""

from __future__ import annotations

import html
import re

from docgemma.agent.approval import PatientCard

_IMAGE_MD = re.compile(r"!\[")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
#: Characters of a step's detail shown in the timeline panel: room for a prescription's arguments.
DETAIL_LIMIT = 300


def escape(text: str) -> str:
    """Show text as text: HTML escaped, Markdown image syntax defused (no remote images)."""
    return _IMAGE_MD.sub("!\\[", html.escape(text, quote=False))


def demote_headings(text: str) -> str:
    """Markdown headings as bold lines: in the chat a record's ``## Safety`` rendered as a page-size title. Each
    is a paragraph of its own: right after a list, a bare bold line became part of the list's last item."""
    return _HEADING.sub(r"\n**\1**\n", text)


def clip(text: str, limit: int = DETAIL_LIMIT) -> str:
    """At most ``limit`` characters, with an ellipsis when cut (a cut argument list must not look complete)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def patient_header(patient: PatientCard | None) -> str:
    """Who the write is for: name, birth date, sex, allergies, active medications (the id once, last)."""
    if not patient:
        return ""
    allergies = "; ".join(escape(a) for a in patient.get("allergies", [])) or "none recorded"
    meds = patient.get("medications", [])
    listed = f": {'; '.join(escape(m) for m in meds)}" if meds else ""
    more = " …" if patient.get("active_medications", 0) > len(meds) else ""
    return (f"**Patient:** {escape(str(patient.get('name', '?')))} · born {escape(str(patient.get('birth_date', '?')))} · "
            f"{escape(str(patient.get('gender', '?')))}  \n**Allergies:** {allergies}  \n"
            f"**Active medications ({patient.get('active_medications', 0)})**{listed}{more}  \n"
            f"*Patient ID {escape(str(patient.get('id', '?')))}*\n\n")
