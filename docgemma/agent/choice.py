"""The clinician's answer to "which patient did you mean?": pure code, no model.

After a clarification listing several patients, the next message may pick one: "the second one", "2",
"jw-002", "Maria Elena, born 1955". :func:`chosen_patient` returns that patient, or None when the message
does not pick exactly one (then the turn runs as a new request).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from docgemma.clinical.patient import PatientListing

_ORDINALS = {
    "first": 0, "1st": 0, "one": 0, "second": 1, "2nd": 1, "two": 1, "third": 2, "3rd": 2, "three": 2,
    "fourth": 3, "4th": 3, "four": 3, "fifth": 4, "5th": 4, "five": 4,
}
_ORDINAL_RE = re.compile(
    r"\b(?:the\s+)?(" + "|".join(_ORDINALS) + r"|last)\b(?:\s+(?:one|patient|match))?", re.IGNORECASE
)
_NUMBER_RE = re.compile(r"^\s*(?:(?:number|no\.?|#|option)\s*)?(\d{1,2})\s*[.)!]?\s*$", re.IGNORECASE)
_YEAR_RE = re.compile(r"\b(19\d{2}|20\d{2})\b")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\-]+")


def _birth_year(option: PatientListing) -> str:
    return str(option.get("birth_date") or "")[:4]


def chosen_patient(message: str, options: Sequence[PatientListing]) -> PatientListing | None:
    """The option ``message`` selects, or None (see the module docstring)."""
    if not options or len(message) > 200:
        return None
    text = message.strip()
    for option in options:
        if str(option.get("id", "")).lower() in text.lower() and option.get("id"):
            return option
    number = _NUMBER_RE.match(text)
    if number:
        index = int(number.group(1)) - 1
        return options[index] if 0 <= index < len(options) else None
    ordinal = _ORDINAL_RE.search(text)
    if ordinal and len(text.split()) <= 6:
        word = ordinal.group(1).lower()
        index = len(options) - 1 if word == "last" else _ORDINALS[word]
        return options[index] if index < len(options) else None
    candidates = options
    years = set(_YEAR_RE.findall(text))
    if years:
        candidates = [o for o in candidates if _birth_year(o) in years]
    words = {w.lower() for w in _WORD_RE.findall(text) if w[0].isupper()}
    if words:
        named = [o for o in candidates if words <= {w.lower() for w in _WORD_RE.findall(str(o.get("name", "")))}]
        candidates = named if named else (candidates if years else [])
    if (years or words) and len(candidates) == 1:
        return candidates[0]
    return None
