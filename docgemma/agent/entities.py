"""Deterministic entity pre-extraction (seed 002 §4): patient IDs by regex, drug names from a real drug
dictionary (brand names resolved to generics), action verbs by keyword. No model involved."""

from __future__ import annotations

import re
import threading
from typing import Any

from docgemma.agent.state import ExtractedEntities

UUID_RE = re.compile(r"\b[a-f0-9]{8}(?:-[a-f0-9]{4}){3}-[a-f0-9]{12}\b", re.IGNORECASE)
SHORT_ID_RE = re.compile(r"\b[a-z]{3}-\d{3}\b", re.IGNORECASE)
#: "patient 402", "patient ID 555", "MRN 12345": a bare number introduced as a patient identifier.
NUMBERED_ID_RE = re.compile(r"\b(?:patient(?:\s+id)?|mrn|id)\s*[:#]?\s*(\d{3,10})\b", re.IGNORECASE)
NAME_RE = re.compile(
    r"\b(?:patient|pt\.?|mr\.?|mrs\.?|ms\.?|miss)\s+(?:named\s+)?"
    r"([A-Z][a-z'\-]+(?:\s+[A-Z][a-z'\-]+){1,2})\b"
)
TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z0-9\-]*")

ACTION_VERBS: dict[str, str] = {
    "prescribe": "prescribe", "prescribed": "prescribe", "order": "order", "ordered": "order",
    "start": "start", "document": "document", "record": "record", "note": "note", "write": "write",
    "save": "save", "check": "check", "search": "search", "find": "find", "look": "look up",
    "verify": "verify", "review": "review", "pull": "pull", "analyze": "analyze", "analyse": "analyze",
    "add": "add", "compare": "compare", "show": "show",
}
_VERB_RE = re.compile(r"\b(" + "|".join(sorted(ACTION_VERBS, key=len, reverse=True)) + r")\b", re.IGNORECASE)


class DrugDictionary:
    """The ``drug-named-entity-recognition`` dictionary (MeSH/DrugBank/NHS names, brands included),
    loaded once on first use (about 3 s) and shared by all sessions (it is read-only)."""

    _lock = threading.Lock()
    _find: Any = None

    @classmethod
    def warm(cls) -> None:
        """Load the dictionary now (e.g. at start-up) rather than on the first message."""
        with cls._lock:
            if cls._find is None:
                try:
                    from drug_named_entity_recognition import find_drugs
                except ImportError as exc:
                    raise ImportError(
                        "drug name extraction needs the drug dictionary: pip install drug-named-entity-recognition"
                    ) from exc
                cls._find = find_drugs

    @classmethod
    def find(cls, text: str) -> list[str]:
        """Generic names (lower case) of the drugs named in ``text``, in order of appearance."""
        cls.warm()
        tokens = TOKEN_RE.findall(text)
        hits = cls._find(tokens, is_ignore_case=True)
        ordered = sorted(hits, key=lambda hit: hit[1])
        names: list[str] = []
        for data, _start, _end in ordered:
            generic = str(data.get("name", "")).strip().lower()
            if generic and generic not in names:
                names.append(generic)
        return names

    @classmethod
    def canonical(cls, name: str) -> str | None:
        """The generic name for a drug name (``"Coumadin"`` → ``"warfarin"``), or None if unknown."""
        found = cls.find(name)
        return found[0] if len(found) == 1 else None


def extract_patient_ids(text: str) -> list[str]:
    """UUIDs, short ids (``abc-123``) and numbers introduced as patient ids, without duplicates."""
    found: list[str] = []
    for match in [*UUID_RE.findall(text), *SHORT_ID_RE.findall(text), *NUMBERED_ID_RE.findall(text)]:
        ident = match.lower() if UUID_RE.fullmatch(match) else match
        if ident not in found:
            found.append(ident)
    return found


def extract_patient_names(text: str) -> list[str]:
    """Capitalised names introduced by "patient", "Mr", "Mrs", ... ("Find patient John Smith")."""
    names: list[str] = []
    for name in NAME_RE.findall(text):
        if name not in names:
            names.append(name)
    return names


def extract_action_verbs(text: str) -> list[str]:
    """Normalised action keywords, in order of appearance."""
    verbs: list[str] = []
    for word in _VERB_RE.findall(text):
        verb = ACTION_VERBS[word.lower()]
        if verb not in verbs:
            verbs.append(verb)
    return verbs


def extract_entities(text: str, has_image: bool = False) -> ExtractedEntities:
    """All deterministic entities of one message."""
    return ExtractedEntities(
        patient_ids=extract_patient_ids(text),
        patient_names=extract_patient_names(text),
        drug_mentions=DrugDictionary.find(text),
        action_verbs=extract_action_verbs(text),
        has_image=has_image,
    )
