"""A note dictated after a spaced dash instead of a colon: "document in her record - K+ 5.4, hold ramipril, repeat U&E
tomorrow" (a set written apart: it was decided surely as a refused write, and nothing was saved).

Read only in one narrow form, so that a dash elsewhere never cuts a message in two: the message starts with the
request (a write verb, "in/into/on/to", her / his / their / the patient's / a capitalised name's record, notes, chart
or file), no colon
follows anywhere (a colon is the note's own head: "Save in the record - Grace Mensah: …"), and the note says nothing of
an allergy ("enter in her record - penicillin allergy, hives" is an allergy to record, not a note).

Used by the rules (``agent/patterns.dictation``) and by the note tool's reader (``tools/catalog/save_clinical_note``),
so the text the card shows is the text the rules read as the note.
"""

from __future__ import annotations

import re

_DASH_NOTE_RE = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|please|pls|can\s+you|could\s+you|kindly)[,]?\s+)*"
    r"(?P<head>(?:document|save|write|log|file|enter|put|record|add)\s+(?:this\s+|that\s+|the\s+following\s+)?"
    # Whose record: a pronoun, or a capitalised name in the possessive ("in Okafor's notes - …"): a name the roster
    # does not know is asked about by the rules (``agent/decision``), never written for the active patient.
    r"(?:in|into|on|onto|to)\s+(?:her|his|their|the\s+patient'?s|this\s+patient'?s|the|"
    r"(?-i:[A-Z])[\w\-]+(?:\s+(?-i:[A-Z])[\w\-]+)?['’]s)\s+(?:record|notes|chart|file))"
    r"\s+[-–—]\s+(?P<body>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
#: The other narrow form: the note first, then the request to save it, which ends the message ("amlodipine stopped
#: because of ankle swelling. that's the plan, save it to the record"; a set written apart: it opened the chart).
_TRAILING_SAVE_RE = re.compile(
    r"^\s*(?P<body>\S.*?)\s*(?:[.!;,]|\s[-–—])\s*"
    r"(?P<head>(?:that'?s\s+(?:the|my)\s+plan,?\s+)?(?:(?:please|pls|can\s+you|could\s+you|kindly)[,]?\s+)?"
    r"(?:save|file|put|add|write|document|record|log)\s+(?:(?:it|this|that|all\s+(?:of\s+)?(?:that|this))\s+)?"
    r"(?:to|in|into|on|onto)\s+(?:her|his|their|the\s+patient'?s|this\s+patient'?s|the)\s+(?:record|notes|chart|file)"
    r"(?:\s+(?:please|pls|thanks))?)\s*[.!]?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_ALLERGY_WORDS_RE = re.compile(r"allerg|intoleran|anaphyla", re.IGNORECASE)
#: What keeps text before a request to save it from being a note: a question ("what did the cardiology letter say,
#: put it in the record"), an order ("start amlodipine 5 mg od, save it to the record": the prescription), or a
#: person named ("Kofi Asante seen today, save it to the record": whose record is asked, never the active one's).
_NOT_A_NOTE_RE = re.compile(
    r"^\s*(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|has|have|had|can|could|should|"
    r"would|will|any)\b|\?"
    r"|^\s*(?:please\s+|pls\s+)?(?:start|prescribe|order|give|commence|begin|rx|put\s+(?:her|him|them)\s+on)\b"
    r"|(?-i:[A-Z][a-z'’\-]+\s+[A-Z][a-z'’\-]+)|(?-i:[A-Z][a-z\-]+)['’]s\b"
    # "Otieno seen in clinic today": a capitalised word as the subject of what happened (never "Patient seen …")
    r"|^\s*(?!(?:patient|pt|she|he|they|mum|mother|baby|child|today|yesterday|overnight|wound|chest|bp|obs)\b)"
    r"(?-i:[A-Z][a-z'’\-]+)\s+(?:seen|reviewed|admitted|discharged|attended|presented|came|has|had|is|was|remains|"
    r"doing)\b",
    re.IGNORECASE,
)


def dash_note(text: str) -> tuple[str, str] | None:
    """(the request, the note's text) of a note dictated after a spaced dash, or before a request to save it that
    ends the message; None otherwise (see the module docstring)."""
    if ":" in text:
        return None
    found = _DASH_NOTE_RE.match(text)
    if found and not _ALLERGY_WORDS_RE.search(found.group("body")):
        return text[:found.end("head")], found.group("body").strip()
    trailing = _TRAILING_SAVE_RE.match(text)
    body = trailing.group("body") if trailing else ""
    if trailing and len(body) >= 3 and not _ALLERGY_WORDS_RE.search(body) and not _NOT_A_NOTE_RE.search(body):
        return trailing.group("head"), body.strip()
    return None
