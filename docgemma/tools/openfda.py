"""check_drug_safety on openFDA drug labels (``/drug/label.json``).

A safety question is answered from the label section that answers it (pregnancy, lactation, renal or hepatic
impairment, children, older adults, dosing, overdose, interactions: ``tools/label_sections.py``) first, then
the boxed warning; without a topic, the boxed warning, contraindications and warnings. Each drug named is looked
up on its own label. Interactions, read from the same labels for every pair of drugs, are in
:mod:`docgemma.tools.interactions`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from pydantic import BaseModel

from docgemma.clinical.entities import DrugDictionary
from docgemma.clinical.ingredients import resolve_local
from docgemma.tools import label_sections
from docgemma.tools.drug_labels import DrugLabels
from docgemma.tools.http import HttpError
from docgemma.tools.outcome import Source, ToolOutcome, failure, success
from docgemma.tools.spec import ToolContext

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
    #: The label's sections by openFDA field name (``label_sections.FIELDS``), one line of text each.
    sections: dict[str, str] = field(default_factory=dict)

    @property
    def source(self) -> Source:
        """Citation: the label on DailyMed by set id, with its effective date."""
        brand = f"{self.brands[0]} ({self.generic})" if self.brands else self.generic
        return Source(title=f"FDA drug label: {brand}, effective {self.effective_date}",
                      url="https://dailymed.nlm.nih.gov/dailymed/lookup.cfm?" + urlencode({"setid": self.set_id}))


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


#: Labels a search reads to find the one of the drug asked about (openFDA matches words inside names, so the
#: newest hit may be a combination product or another drug's label).
CANDIDATES = 5


def is_label_for(record: dict[str, Any], generic: str, given: str) -> bool:
    """Whether the label ``record`` is of the drug asked about: its ``openfda`` substances (or generic name)
    are exactly that drug's ingredients, or — for a name the ingredient table does not know — its generic or
    brand name is the name asked."""
    names = record.get("openfda") or {}
    wanted = set(resolve_local(generic).ingredients) or set(resolve_local(given).ingredients)
    listed = [str(n) for n in names.get("substance_name") or names.get("generic_name") or []]
    made_of = {i for n in listed for i in resolve_local(n).ingredients}
    if wanted:
        return made_of == wanted
    spelled = {" ".join(str(n).lower().split()) for n in (*names.get("brand_name", []), *names.get("generic_name", []))}
    return bool({generic.lower(), given.lower()} & spelled)


def find_label(labels: DrugLabels, name: str) -> Label | None:
    """The newest label of the drug ``name`` (``is_label_for``: its substances, generic or brand name); None
    when there is none — a search that matched only other products' labels included."""
    generic, given = normalise(name)
    if not generic:
        raise HttpError("invalid_args", "empty drug name")
    terms = {f'openfda.generic_name:"{generic}"', f'openfda.brand_name:"{generic}"', f'openfda.brand_name:"{given}"'}
    record = next((r for r in labels.search(" OR ".join(sorted(terms)), CANDIDATES) if is_label_for(r, generic, given)),
                  None)
    if record is None:
        return None  # only other products' labels matched the search: never shown as this drug's
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
        sections={f: t for f in label_sections.FIELDS if (t := label_sections.text_of(record, f))},
    )


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


#: Characters of a label's answer to the question shown for one drug (shared out when several are asked about).
ANSWER_CHARS = 900


def _label_facts(label: Label, topic: str | None) -> dict[str, Any]:
    """One label's answer: the topic's passages (when asked), then the boxed warning, contraindications, warnings."""
    facts: dict[str, Any] = {
        "drug": label.generic, "brand_names": label.brands[:3], "label_effective_date": label.effective_date,
        "boxed_warning": label.boxed_warning or "None on the label",
        "contraindications": label.contraindications or "None listed",
        "warnings": label.warnings or "None listed", "set_id": label.set_id,
    }
    if topic:
        passages = label_sections.answer(label.sections, topic)
        facts["topic"] = topic
        facts["answer"] = passages or [{"section": "none", "text": f"The label has no section on {topic}."}]
    return facts


def check_drug_safety(labels: DrugLabels, args: BaseModel, context: ToolContext) -> ToolOutcome:
    """Each drug's newest label: the section answering the question's topic first, then the boxed warning,
    contraindications and warnings. The first drug's facts stay at the top level (one drug, one answer)."""
    a = args.model_dump()
    names = list(dict.fromkeys([str(a["drug_name"]), *(a.get("other_drugs") or [])]))
    topic = a.get("topic")
    found: list[Label] = []
    missing: list[str] = []
    for name in names:
        try:
            label = find_label(labels, name)
        except HttpError as exc:
            return failure(exc.error_type)
        if label is None:
            missing.append(name)
        elif label.set_id not in {f.set_id for f in found}:
            found.append(label)
    if not found:
        return failure("drug_not_in_database", drug=", ".join(missing))
    data = _label_facts(found[0], topic)
    if len(found) > 1:
        data["other_labels"] = [_label_facts(label, topic) for label in found[1:]]
    if missing:
        data["labels_not_found"] = missing
    return success(data, [label.source for label in found])


def _one_label(data: dict[str, Any], chars: int) -> list[str]:
    lines = [f"Drug: {data['drug']} (label effective {data['label_effective_date']})"]
    if data.get("topic"):
        title = label_sections.TOPICS[data["topic"]].title
        passages = data.get("answer", [])
        share = max(chars // max(len(passages), 1), 200)
        for p in passages:
            where = "" if p["section"] == "none" else f" [{p['section'].replace('_', ' ')}]"
            lines.append(f"{title}{where}: {_trim(p['text'], share)}")
        lines.append(f"Boxed warning: {_trim(data['boxed_warning'], chars // 2)}")
        lines.append(f"Contraindications: {_trim(data['contraindications'], chars // 4)}")
    else:
        lines += [f"Boxed warning: {_trim(data['boxed_warning'], SECTION_CHARS)}",
                  f"Contraindications: {_trim(data['contraindications'], SECTION_CHARS)}",
                  f"Warnings: {_trim(data['warnings'], SECTION_CHARS)}"]
    return lines


def format_safety(data: dict[str, Any]) -> str:
    """Clinical text for the model: per drug, the section answering the question first (when one was asked),
    then the boxed warning (and contraindications); otherwise the three safety sections. Each trimmed."""
    labels = [data, *data.get("other_labels", [])]
    chars = max(ANSWER_CHARS // len(labels), 250)
    lines: list[str] = []
    for label in labels:
        lines += _one_label(label, chars)
    if data.get("labels_not_found"):
        lines.append(f"No FDA label found for: {', '.join(data['labels_not_found'])}.")
    return "\n".join(lines)

