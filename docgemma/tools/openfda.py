"""check_drug_safety on openFDA drug labels (``/drug/label.json``). Interactions, read from the same labels
for every pair of drugs, are in :mod:`docgemma.tools.interactions`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from docgemma.clinical.entities import DrugDictionary
from docgemma.tools.http import HttpClient, HttpError
from docgemma.tools.outcome import Source, ToolOutcome, failure, success
from docgemma.tools.registry import ToolContext

SECTION_CHARS = 450
PASSAGE_CHARS = 320
_SAFE_TERM = re.compile(r"[^A-Za-z0-9 \-]")


@dataclass(frozen=True)
class Label:
    """The parts of an openFDA SPL label the tools use."""

    generic: str
    brands: list[str]
    boxed_warning: str
    contraindications: str
    warnings: str
    drug_interactions: str
    effective_date: str
    set_id: str

    @property
    def source(self) -> Source:
        """Citation: the label on DailyMed by set id, with its effective date."""
        brand = f"{self.brands[0]} ({self.generic})" if self.brands else self.generic
        return Source(title=f"FDA drug label: {brand}, effective {self.effective_date}",
                      url=f"https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?setid={self.set_id}")


def _text(record: dict[str, Any], *fields: str) -> str:
    parts: list[str] = []
    for name in fields:
        value = record.get(name)
        if isinstance(value, list):
            parts.extend(str(v) for v in value)
        elif isinstance(value, str):
            parts.append(value)
    return " ".join(" ".join(parts).split())


def _date(raw: str) -> str:
    return f"{raw[:4]}-{raw[4:6]}-{raw[6:8]}" if len(raw) == 8 and raw.isdigit() else raw or "unknown"


def normalise(name: str) -> tuple[str, str]:
    """(generic name for the search, the name as given) — "Coumadin" → ("warfarin", "Coumadin")."""
    given = _SAFE_TERM.sub("", name).strip()
    generic = DrugDictionary.canonical(given) or given.lower()
    return _SAFE_TERM.sub("", generic).strip(), given


class OpenFDA:
    """Label look-ups through the shared HTTP client."""

    def __init__(self, http: HttpClient, base_url: str, api_key: str | None = None) -> None:
        self.http = http
        self.url = f"{base_url}/drug/label.json"
        self.api_key = api_key

    def label(self, name: str) -> Label | None:
        """The newest label whose generic or brand name matches ``name``; None when there is none."""
        generic, given = normalise(name)
        if not generic:
            raise HttpError("invalid_args", "empty drug name")
        terms = {f'openfda.generic_name:"{generic}"', f'openfda.brand_name:"{generic}"', f'openfda.brand_name:"{given}"'}
        params: dict[str, Any] = {"search": " OR ".join(sorted(terms)), "limit": 1, "sort": "effective_time:desc"}
        if self.api_key:
            params["api_key"] = self.api_key
        try:
            body = self.http.get_json(self.url, params)
        except HttpError as exc:
            if exc.error_type == "not_found":  # openFDA answers 404 "No matches found!" for an empty search
                return None
            raise
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise HttpError("invalid_response", "label search answer has no results list")
        if not results:
            return None
        record = results[0]
        names = record.get("openfda", {})
        return Label(
            generic=", ".join(names.get("generic_name", [])).lower() or generic,
            brands=list(names.get("brand_name", [])),
            boxed_warning=_text(record, "boxed_warning"),
            contraindications=_text(record, "contraindications"),
            warnings=_text(record, "warnings_and_cautions", "warnings"),
            drug_interactions=_text(record, "drug_interactions", "ask_doctor_or_pharmacist"),
            effective_date=_date(str(record.get("effective_time", ""))),
            set_id=str(record.get("set_id", "")),
        )


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def check_drug_safety(fda: OpenFDA, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Boxed warning, contraindications and warnings of the newest label."""
    name = str(args.drug_name)  # type: ignore[attr-defined]
    try:
        label = fda.label(name)
    except HttpError as exc:
        return failure(exc.error_type)
    if label is None:
        return failure("drug_not_in_database", drug=name)
    return success({
        "drug": label.generic, "brand_names": label.brands[:3], "label_effective_date": label.effective_date,
        "boxed_warning": label.boxed_warning or "None on the label",
        "contraindications": label.contraindications or "None listed",
        "warnings": label.warnings or "None listed", "set_id": label.set_id,
    }, [label.source])


def format_safety(data: dict[str, Any]) -> str:
    """Clinical text for the model: the three sections, each trimmed."""
    return (
        f"Drug: {data['drug']} (label effective {data['label_effective_date']})\n"
        f"Boxed warning: {_trim(data['boxed_warning'], SECTION_CHARS)}\n"
        f"Contraindications: {_trim(data['contraindications'], SECTION_CHARS)}\n"
        f"Warnings: {_trim(data['warnings'], SECTION_CHARS)}"
    )
