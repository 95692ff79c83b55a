"""Laboratory results by the names clinicians use: a LOINC long name ("Creatinine [Mass/volume] in Serum or
Plasma", "Glomerular filtration rate/1.73 sq M.predicted (eGFR)") read as "Creatinine", "eGFR". The record keeps
the coded name; only what a person reads is shortened."""

from __future__ import annotations

import re

#: Long names whose short form is an abbreviation, not a cut (checked before the generic rule).
_NAMED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Glomerular filtration rate/1\.73 sq M\.predicted(?: \(eGFR\))?"), "eGFR"),
    (re.compile(r"Hemoglobin A1c/Hemoglobin\.total in Blood"), "HbA1c"),
    (re.compile(r"Thyrotropin \[Units/volume\] in Serum or Plasma"), "TSH"),
    (re.compile(r"Protein/Creatinine \[Mass Ratio\] in Urine"), "urine protein/creatinine ratio"),
    (re.compile(r"Bilirubin\.total \[Mass/volume\] in Serum or Plasma"), "Total bilirubin"),
)
#: The property in brackets, the blood specimen and the method of a LOINC name; never a Markdown link's text.
_PROPERTY = re.compile(r" \[[A-Za-z#/ .]{1,30}\](?!\()(?: (?:in|of) (?:Serum or Plasma|Serum|Plasma|Blood))?"
                       r"(?: by (?:Automated count|calculation))?")
_URINE = re.compile(r" \[[A-Za-z#/ .]{1,30}\](?!\() in Urine")


def lab_names(text: str) -> str:
    """``text`` with every LOINC long name of a result in its clinical name."""
    for pattern, name in _NAMED:
        text = pattern.sub(name, text)
    text = _URINE.sub(" in urine", text)
    return _PROPERTY.sub("", text)
