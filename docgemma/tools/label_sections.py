"""The part of an FDA label (openFDA ``/drug/label.json`` record) that answers a question's topic.

openFDA splits a label into fields named after its sections. A question about pregnancy is answered by
``pregnancy`` (older labels also ``teratogenic_effects``; over-the-counter labels ``pregnancy_or_breast_feeding``),
lactation by ``nursing_mothers`` (or the "8.2 Lactation" subsection), children by ``pediatric_use``, older adults
by ``geriatric_use``, dosing by ``dosage_and_administration``, overdose by ``overdosage``, interactions by
``drug_interactions``. Renal and hepatic impairment have no field of their own: they are subsections of
``use_in_specific_populations`` ("8.6 Renal Impairment") and of ``dosage_and_administration`` ("2.3 Dosage in
Patients with Renal Impairment"); an older label mentions them in its warnings or precautions, and then the
sentences that name them are taken. Nothing is ever made up: a label without the section says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: Every field this module (and the safety tool) reads from a label record.
FIELDS = ("boxed_warning", "contraindications", "warnings_and_cautions", "warnings", "precautions",
          "pregnancy", "teratogenic_effects", "pregnancy_or_breast_feeding", "lactation", "nursing_mothers",
          "use_in_specific_populations", "pediatric_use", "geriatric_use", "dosage_and_administration", "overdosage",
          "drug_interactions")


@dataclass(frozen=True)
class Topic:
    """Where a topic is answered on a label."""

    title: str
    #: Whole fields that answer it, best first.
    fields: tuple[str, ...]
    #: Its subsection heading in "8 Use in specific populations" (and in "2 Dosage and administration").
    heading: re.Pattern[str] | None = None
    #: Words that name it in a sentence of the warnings or precautions (older labels without subsections).
    words: re.Pattern[str] | None = None


TOPICS: dict[str, Topic] = {
    "pregnancy": Topic("Pregnancy", ("pregnancy", "teratogenic_effects", "pregnancy_or_breast_feeding"),
                       re.compile(r"pregnan", re.I), re.compile(r"\bpregnan\w*|\bfetal\b|\bteratogen\w*", re.I)),
    "lactation": Topic("Lactation", ("lactation", "nursing_mothers", "pregnancy_or_breast_feeding"),
                       re.compile(r"lactation|nursing mothers", re.I),
                       re.compile(r"\bbreast[- ]?(?:feed\w*|milk)|\blactat\w*|\bnursing\b", re.I)),
    "renal impairment": Topic("Renal impairment", (), re.compile(r"renal|kidney", re.I),
                              re.compile(r"\brenal\b|\bkidney|\bcreatinine clearance|\bCrCl\b|\beGFR\b|\bdialysis", re.I)),
    "hepatic impairment": Topic("Hepatic impairment", (), re.compile(r"hepatic|liver", re.I),
                                re.compile(r"\bhepatic (?:impairment|insufficiency|disease)|\bliver (?:disease|impairment)|"
                                           r"\bcirrhosis|\bChild-Pugh", re.I)),
    "children": Topic("Pediatric use", ("pediatric_use",), re.compile(r"pediatric|paediatric|children", re.I)),
    "older adults": Topic("Geriatric use", ("geriatric_use",), re.compile(r"geriatric|elderly|older", re.I)),
    "dosage": Topic("Dosage and administration", ("dosage_and_administration",)),
    "overdose": Topic("Overdosage", ("overdosage",)),
    "interactions": Topic("Drug interactions", ("drug_interactions",)),
}
#: "8.6 Renal Impairment", "2.3 Dosage in Patients with Renal Impairment": a subsection number and its heading.
_SUBSECTION_RE = re.compile(r"(?<![\d.])(?P<num>[28]\.\d{1,2})\s+(?=[A-Z])")
_SENTENCE_RE = re.compile(r"(?<=[.;])\s+(?=[A-Z(])")
_WARNING_FIELDS = ("warnings_and_cautions", "warnings", "precautions", "contraindications")
HEADING_WORDS = 8


def text_of(record: dict[str, Any], name: str) -> str:
    """A label field as one line of text (openFDA gives each as a list of strings)."""
    value = record.get(name)
    parts = [str(v) for v in value] if isinstance(value, list) else [value] if isinstance(value, str) else []
    return " ".join(" ".join(parts).split())


def subsections(text: str) -> list[tuple[str, str]]:
    """(number and heading, text) of each numbered subsection of a section's text."""
    marks = list(_SUBSECTION_RE.finditer(text))
    out = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = text[mark.start():end].strip()
        out.append((" ".join(body.split()[: HEADING_WORDS]), body))
    return out


def answer(sections: dict[str, str], topic: str) -> list[dict[str, str]]:
    """The passages of a label (``sections``: field → text) that answer ``topic``, each with where it is from;
    an empty list when the label has none."""
    spec = TOPICS[topic]
    found: list[dict[str, str]] = []
    for name in spec.fields:
        if sections.get(name) and not (name == "pregnancy_or_breast_feeding" and found):
            found.append({"section": name, "text": sections[name]})
    if spec.heading is not None:
        for name in ("use_in_specific_populations", "dosage_and_administration"):
            for heading, body in subsections(sections.get(name, "")):
                if spec.heading.search(heading) and not any(body in f["text"] for f in found):
                    found.append({"section": f"{name} {heading.split()[0]}", "text": body})
    if not found and spec.words is not None:
        sentences = [s for name in _WARNING_FIELDS for s in _SENTENCE_RE.split(sections.get(name, ""))
                     if spec.words.search(s)]
        if sentences:
            found.append({"section": "warnings and precautions (sentences that mention it)",
                          "text": " ".join(dict.fromkeys(sentences[:4]))})
    return found
